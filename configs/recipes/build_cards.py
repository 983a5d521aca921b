"""Rebuild the recipe cards (``configs/recipes/<method>.yaml``) from the authors' released scripts.

Not run by pytest: it reads bare git copies of the upstream repositories (``--mirror-root``, one
``<owner>+<name>/repo`` git directory per repository, as the ``fetch`` tool leaves them) and
writes, for every method and every released env script:

* ``upstream``: every ``key=value`` override of the script with its file and line, plus the
  verl defaults (``verl/trainer/config/ppo_trainer.yaml``) the mapping reads, with their lines;
* ``ours``: the value each of our config fields must take to run the same recipe, and the
  upstream keys it comes from;
* ``not_mapped``: upstream keys with no counterpart in our trainer, each with its reason.

An upstream key that is neither mapped nor explained stops the build, so a card always accounts
for every value of its script. Hand-written parts of an existing card (``departures``,
``configs``, ``notes``) are kept. Usage::

    python configs/recipes/build_cards.py --mirror-root /work/.mirror [--write-missing-configs]
"""

from __future__ import annotations

import argparse
import copy
import math
import re
import subprocess
from pathlib import Path
from typing import Any, Callable

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULTS_FILE = "verl/trainer/config/ppo_trainer.yaml"

# ----------------------------------------------------------------------------- what each method runs
SDAR_REPO = "ZJU-REAL/SDAR"
OPSD_REPO = "ZethWang/AgentOPSD"
SKILLRISE_REPO = "lyq1119/SkillRise-reproduction-and-refinement"


def _scripts(folder: str, names: dict[str, str]) -> dict[str, str]:
    return {env: f"examples/{folder}/{name}.sh" for env, name in names.items()}


_SIZES = {"alfworld_3b": "run_alfworld_3b", "alfworld_7b": "run_alfworld_7b", "webshop_7b": "run_webshop_7b",
          "search_7b": "run_search_7b"}
METHODS: dict[str, dict[str, Any]] = {
    "grpo": {"repo": SDAR_REPO, "credit": "grpo", "scripts": _scripts("grpo_trainer", {
        "alfworld_3b": "run_alfworld", "alfworld_7b": "run_alfworld_7b", "webshop_7b": "run_webshop",
        "search_7b": "run_search_7b"})},
    "gigpo": {"repo": SDAR_REPO, "credit": "gigpo", "scripts": _scripts("gigpo_trainer", {
        "alfworld_3b": "run_alfworld", "alfworld_7b": "run_alfworld", "webshop_7b": "run_webshop",
        "search_7b": "run_search"})},
    "sdar": {"repo": SDAR_REPO, "credit": "sdar", "scripts": _scripts("sdar_trainer", _SIZES)},
    "opsd": {"repo": SDAR_REPO, "credit": "opsd", "scripts": _scripts("opsd_trainer", _SIZES)},
    "grpo_opsd": {"repo": SDAR_REPO, "credit": "sdar", "scripts": _scripts("grpo_opsd_trainer", _SIZES)},
    "rlsd": {"repo": SDAR_REPO, "credit": "rlsd", "scripts": _scripts("rlsd_trainer", _SIZES)},
    "skill_sd": {"repo": SDAR_REPO, "credit": "skill_sd", "scripts": _scripts("skillsd_trainer", _SIZES)},
    "agentopsd": {"repo": OPSD_REPO, "credit": "agentopsd", "scripts": _scripts("agentopsd_trainer", _SIZES)},
    # SkillRise: no git snapshot can be fetched here; the two files were read at these commits (read_file) and
    # saved under --snapshot-root/<owner>+<name>/<path> (the defaults file up to its rollout section)
    "skillrise": {"repo": SKILLRISE_REPO, "credit": "skillrise", "env_facts": False,
                  "scripts": {"alfworld_4b": "examples/skillrise_alfworld/skillrise_alfworld_qwen3_4b.sh"},
                  "snapshot": {"examples/skillrise_alfworld/skillrise_alfworld_qwen3_4b.sh":
                               "57116f7e451aa208cb0b3ecd10e0a7733bc9e164",
                               DEFAULTS_FILE: "79bbd911cf5a477e13679bd7eb0728dfd871c632",
                               **{path: "79bbd911cf5a477e13679bd7eb0728dfd871c632" for path in (
                                   "agent_system/environments/skillrise_alfworld/projection.py",
                                   "agent_system/environments/skillrise_alfworld/group_loader.py",
                                   "agent_system/environments/skillrise_alfworld/env_manager.py",
                                   "agent_system/multi_turn_rollout/skillrise_rollout_loop.py",
                                   "verl/trainer/ppo/core_gigpo.py")}},
                  # what SkillRise's code fixes (not a script value): file, line, our field, value, text the line
                  # holds. projection.py and group_loader.py are saved whole; env_manager.py, the rollout loop and
                  # core_gigpo.py as line-accurate excerpts (the cited lines, the others marked not reproduced).
                  "code_facts": [
                      ("agent_system/environments/skillrise_alfworld/projection.py", 19, "action_format",
                       "action_tag", '"<action>", "</action>"'),
                      ("agent_system/environments/skillrise_alfworld/projection.py", 23, "env_kwargs.invalid_action",
                       "forward_tail", "[-30:]"),
                      ("agent_system/environments/skillrise_alfworld/projection.py", 19, "credit_params.projection",
                       "action_tag", '"<action>", "</action>"'),
                      ("agent_system/environments/skillrise_alfworld/projection.py", 40, "credit_params.max_chars",
                       4000, "[:4000]"),
                      ("agent_system/multi_turn_rollout/skillrise_rollout_loop.py", 52, "chat_template_kwargs",
                       {"enable_thinking": False}, "get('enable_thinking', False)"),
                      ("agent_system/environments/skillrise_alfworld/group_loader.py", 48, "shuffle_dataset", False,
                       "random.Random(seed).shuffle(self.groups)"),
                  ],
                  "not_mapped": {
                      "data.truncation": "error, as ours: SkillRise trials mark every prompt prompt_truncation=error, "
                                         "so a prompt longer than max_prompt_tokens fails its episode instead of "
                                         "losing its start (the skill document)",
                      "env.meta_mode": "skillrise: the skillrise credit plug-in plays SkillRise trials",
                  }},
}

QWEN3_SCRIPTS: dict[str, tuple[str, dict[str, str]]] = {
    # the Qwen3 scripts released beside the Qwen2.5 ones (AgentOPSD's own trainer has none)
    "grpo": ("grpo_trainer", {"alfworld_qwen3_1.7b": "run_alfworld_qwen3_1b", "alfworld_qwen3_4b": "run_alfworld_qwen3_4b",
                              "search_qwen3_1.7b": "run_search_qwen3_1b", "webshop_qwen3_1.7b": "run_webshop_qwen3_1b"}),
    "gigpo": ("gigpo_trainer", {"webshop_qwen3_1.7b": "run_webshop_qwen3"}),
    **{method: (folder, {f"{env}_qwen3_1.7b": f"run_{env}_qwen3" for env in ("alfworld", "search", "webshop")})
       for method, folder in (("sdar", "sdar_trainer"), ("opsd", "opsd_trainer"), ("grpo_opsd", "grpo_opsd_trainer"),
                              ("rlsd", "rlsd_trainer"), ("skill_sd", "skillsd_trainer"))},
}
for _method, (_folder, _names) in QWEN3_SCRIPTS.items():
    METHODS[_method]["scripts"].update(_scripts(_folder, _names))

ENV_IDS = {"alfworld/AlfredTWEnv": "ALFWorld-v0", "Webshop": "WebShop-v0", "search": "SearchQA-v0",
           "skillrise_alfworld/AlfredTWEnv": "ALFWorld-v0"}
ENV_FACTS: dict[str, list[tuple[str, int, str, Any, str]]] = {
    # what verl-agent's env code fixes (not a script value): file, line, our field, value, text the line holds
    "ALFWorld-v0": [
        ("agent_system/environments/env_package/alfworld/envs.py", 52, "env_kwargs.reward_scale", 10.0, "10.0"),
        ("agent_system/environments/env_package/alfworld/projection.py", 40, "env_kwargs.invalid_action",
         "forward_tail", "[-30:]"),
    ],
    "WebShop-v0": [
        ("agent_system/environments/env_package/webshop/envs.py", 50, "env_kwargs.success_reward", 10.0, "10.0"),
        ("agent_system/environments/env_package/webshop/projection.py", 41, "env_kwargs.invalid_action",
         "forward_tail", "[-20:]"),
    ],
}

NOT_MAPPED: list[tuple[str, str]] = [
    (r"data\.(train|val)_files$", "dataset files: our env serves the tasks (env_kwargs.split)"),
    (r"data\.val_batch_size$", "validation batch: eval_num_tasks holds the held-out task count"),
    (r"data\.filter_overlong_prompts$", "prompt filtering of the dataset parquet: our prompts are built per turn"),
    (r"data\.truncation$", "truncation of the dataset prompt; per-turn prompts are left-truncated to max_prompt_tokens"),
    (r"data\.return_raw_chat$", "dataset plumbing of verl"),
    (r".*fsdp_config\..*", "FSDP parameter/optimizer offload: memory placement, no effect on the update"),
    (r".*micro_batch_size_per_gpu$", "micro-batch size: memory only (max_rows_per_pass bounds our passes)"),
    (r".*use_remove_padding$", "padding-free kernels: speed only"),
    (r".*enable_gradient_checkpointing$", "mapped to gradient_checkpointing"),
    (r"actor_rollout_ref\.rollout\.(name|tensor_model_parallel_size|gpu_memory_utilization|enable_chunked_prefill|"
     r"enforce_eager|free_cache_engine)$", "vLLM engine settings: speed and memory only"),
    (r"actor_rollout_ref\.rollout\.val_kwargs\.do_sample$", "read with val_kwargs.temperature (eval_temperature)"),
    (r"algorithm\.use_kl_in_reward$", "False: the KL is a loss term (beta), not a reward penalty, as ours"),
    (r"algorithm\.adv_estimator$", "selects the advantage: our credit plug-in"),
    (r"env\.resources_per_worker\..*", "Ray CPU share per env worker (env_workers places our envs)"),
    (r"env\.search\.search_url$", "address of the retrieval server (SearchQA-v0 retriever_url)"),
    (r"trainer\.(critic_warmup|logger|project_name|experiment_name|n_gpus_per_node|nnodes|"
     r"ray_wait_register_center_timeout|save_freq|val_before_train)$", "run bookkeeping and hardware layout"),
    (r"algorithm\.\w+\.skills_dir$", "skill texts of the teacher: teacher_context skills (texts: see departures)"),
    (r"algorithm\.\w+\.skill_all$", "false: the teacher sees the skills of the task's own type, as our skill_text"),
    (r"algorithm\.skillsd\.warmdown_steps$", "-1: no decay of sdl_lambda; the skill_sd plug-in has none"),
    (r"actor_rollout_ref\.rollout\.(max_num_batched_tokens|max_num_seqs)$", "vLLM engine settings: speed and memory only"),
    (r"trainer\.(default_local_dir|rollout_data_dir|log_val_generations|save_start_step)$", "run bookkeeping"),
    (r"reward_model\.reward_manager$", "episode: the env's episode reward, as ours"),
    (r"env\.alfworld\.eval_dataset$", "eval_in_distribution = ALFWorld valid_seen (eval_env_kwargs.split)"),
    (r"env\.(meta_mode|group_file)$", "SkillRise trials: the skillrise credit plug-in wraps the env into trials of a "
     "task family (our own grouping of the training split)"),
    (r"algorithm\.(gamma|step_gamma|gigpo\.step_advantage_w|gigpo\.mode)$",
     "GiGPO step-level settings the skillrise advantage does not read (it groups by task, position and role)"),
    (r"algorithm\.curate_loss_weight$", "1.0: curate rows weigh as solve rows, as in the skillrise plug-in"),
    (r"algorithm\.opsd\.(v0_prior|belief_mult|signed)$",
     "fixed in the agentopsd plug-in: the belief_mult route with signed multipliers"),
]

# ----------------------------------------------------------------------------- parsing


def git_show(git_dir: Path, commit: str, path: str) -> str:
    """The text of ``path`` at ``commit`` in a bare git directory."""
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def parse_script(text: str) -> dict[str, tuple[str, int]]:
    """``key=value`` hydra overrides of a shell script with their line numbers; ``$var`` and
    ``${var}`` are replaced by the script's own assignments."""
    shell_vars: dict[str, str] = {}
    out: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.split(" #")[0].strip()
        assign = re.match(r'^([A-Za-z_]\w*)=("?)([^"\s]*)\2$', stripped)
        if assign:
            shell_vars[assign.group(1)] = assign.group(3)
            continue
        override = re.match(r"^\+?([a-z_][\w.]*\.[\w.]+)=(\S+?)\s*(\\|\$@)?\s*$", stripped)
        if override:
            value = re.sub(r"\$\{?(\w+)\}?", lambda m: shell_vars.get(m.group(1), m.group(0)), override.group(2))
            out[override.group(1)] = (value.strip("'\""), number)
    return out


def parse_defaults(text: str) -> dict[str, tuple[str, int]]:
    """Scalar leaves of verl's ``ppo_trainer.yaml`` as dotted keys with their line numbers."""
    out: dict[str, tuple[str, int]] = {}
    stack: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        body = line.split(" #")[0].rstrip()
        if not body.strip() or body.strip().startswith("#"):
            continue
        indent = len(body) - len(body.lstrip())
        key_value = re.match(r"^\s*([\w-]+):\s*(.*)$", body)
        if not key_value:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key, value = key_value.group(1), key_value.group(2).strip()
        if value == "":
            stack.append((indent, key))
        else:
            out[".".join([k for _, k in stack] + [key])] = (value.strip("'\""), number)
    return out


def scalar(text: str) -> Any:
    """A script/YAML value as Python (bool, int, float, None or str)."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none", "~"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


# ----------------------------------------------------------------------------- the mapping


class Lookup:
    """Values of one script, falling back to verl's defaults; remembers every key it read."""

    def __init__(self, script: str, values: dict[str, tuple[str, int]], defaults: dict[str, tuple[str, int]]):
        self.script, self.values, self.defaults = script, values, defaults
        self.read: dict[str, dict[str, Any]] = {}

    def __call__(self, key: str, fallback: Any = None) -> Any:
        if key in self.values:
            raw, line = self.values[key]
            source = f"{self.script}:{line}"
        elif key in self.defaults:
            raw, line = self.defaults[key]
            source = f"{DEFAULTS_FILE}:{line}"
        else:
            self.read[key] = {"value": fallback, "source": "not set (verl code default)"}
            return fallback
        value = scalar(raw)
        self.read[key] = {"value": value, "source": source}
        return value


def pad_keys(get: Lookup) -> list[str]:
    """The per-GPU micro-batch sizes ``adjust_batch`` pads a step's rows by (the reference pass's only with a KL)."""
    a, r = "actor_rollout_ref.actor.", "actor_rollout_ref.rollout."
    keys = [a + "ppo_micro_batch_size_per_gpu", r + "log_prob_micro_batch_size_per_gpu"]
    if get("algorithm.use_kl_in_reward") or get(a + "use_kl_loss"):
        keys.append("actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu")
    return keys


def pad_rows_per_gpu(get: Lookup) -> int:
    """verl-agent's ``adjust_batch`` divisor per GPU: the lcm of the micro-batch sizes it pads by
    (agent_system/multi_turn_rollout/utils.py; the divisor is this x GPUs)."""
    return math.lcm(*(int(get(key)) for key in pad_keys(get)))


def map_common(get: Lookup) -> dict[str, tuple[Any, list[str]]]:
    """Our fields from the keys every verl-agent script shares."""
    a, r = "actor_rollout_ref.actor.", "actor_rollout_ref.rollout."
    n = get("env.rollout.n")
    tasks = get("data.train_batch_size")
    warmup = float(get(a + "optim.lr_warmup_steps_ratio"))
    style = get(a + "optim.warmup_style")
    scheduler = {"constant": "constant_with_warmup" if warmup else "constant", "cosine": "cosine"}[style]
    kl_on, kl_coef = get(a + "use_kl_loss"), float(get(a + "kl_loss_coef"))
    penalty_on, penalty = get(a + "use_invalid_action_penalty"), float(get(a + "invalid_action_penalty_coef"))
    steps = get("trainer.total_training_steps")
    epochs = get("trainer.total_epochs")
    env_id = ENV_IDS[get("env.env_name")]
    val_temperature = get(r + "val_kwargs.temperature")
    ours: dict[str, tuple[Any, list[str]]] = {
        "model_name_or_path": (get("actor_rollout_ref.model.path"), ["actor_rollout_ref.model.path"]),
        "env_id": (env_id, ["env.env_name"]),
        "group_size": (n, ["env.rollout.n"]),
        "generation_batch_size": (tasks * n, ["data.train_batch_size", "env.rollout.n"]),
        # verl scales ppo_mini_batch_size by the actor's rollout.n, which verl-agent asserts is 1 (env.rollout.n is
        # the group size, read by the rollout loop only): a mini-batch counts step rows
        "rows_per_update": (get(a + "ppo_mini_batch_size") * get(r + "n"), [a + "ppo_mini_batch_size", r + "n"]),
        "pad_rows_per_process": (pad_rows_per_gpu(get), [*pad_keys(get), "algorithm.use_kl_in_reward",
                                                          a + "use_kl_loss"]),
        "num_iterations": (get(a + "ppo_epochs"), [a + "ppo_epochs"]),
        "learning_rate": (float(get(a + "optim.lr")), [a + "optim.lr"]),
        "lr_scheduler_type": (scheduler, [a + "optim.warmup_style", a + "optim.lr_warmup_steps_ratio"]),
        "warmup_steps": (warmup, [a + "optim.lr_warmup_steps_ratio"]),  # a float in [0, 1): a ratio
        "weight_decay": (float(get(a + "optim.weight_decay")), [a + "optim.weight_decay"]),
        "max_grad_norm": (float(get(a + "grad_clip")), [a + "grad_clip"]),
        "epsilon": (float(get(a + "clip_ratio_low")), [a + "clip_ratio_low"]),
        "epsilon_high": (float(get(a + "clip_ratio_high")), [a + "clip_ratio_high"]),
        "delta": (float(get(a + "clip_ratio_c")), [a + "clip_ratio_c"]),
        "entropy_coef": (float(get(a + "entropy_coeff")), [a + "entropy_coeff"]),
        "loss_type": ({"token-mean": "dapo"}[get(a + "loss_agg_mode")], [a + "loss_agg_mode"]),
        "beta": (kl_coef if kl_on else 0.0, [a + "use_kl_loss", a + "kl_loss_coef"]),
        "kl_estimator": (get(a + "kl_loss_type"), [a + "kl_loss_type"]),
        "use_bias_correction_kl": (False, [a + "kl_loss_type"]),
        "max_prompt_tokens": (get("data.max_prompt_length"), ["data.max_prompt_length"]),
        "max_completion_length": (get("data.max_response_length"), ["data.max_response_length"]),
        "temperature": (float(get(r + "temperature")), [r + "temperature"]),
        "top_p": (float(get(r + "top_p")), [r + "top_p"]),
        "top_k": (0 if get(r + "top_k") in (-1, 0) else get(r + "top_k"), [r + "top_k"]),
        "eval_temperature": (float(val_temperature) if get(r + "val_kwargs.do_sample") else 0.0,
                             [r + "val_kwargs.temperature", r + "val_kwargs.do_sample"]),
        "max_turns": (get("env.max_steps"), ["env.max_steps"]),
        "history_length": (get("env.history_length"), ["env.history_length"]),
        "invalid_action_penalty": (penalty if penalty_on else 0.0,
                                   [a + "use_invalid_action_penalty", a + "invalid_action_penalty_coef"]),
        "seed": (get("env.seed"), ["env.seed"]),
        "gradient_checkpointing": (get("actor_rollout_ref.model.enable_gradient_checkpointing"),
                                   ["actor_rollout_ref.model.enable_gradient_checkpointing"]),
        "lora_r": (get("actor_rollout_ref.model.lora_rank"), ["actor_rollout_ref.model.lora_rank"]),
        "eval_steps": (get("trainer.test_freq"), ["trainer.test_freq"]),
    }
    if env_id == "WebShop-v0":  # env_manager.py builds WebShop from these two defaults
        ours["env_kwargs.goals"] = ("human" if get("env.webshop.human_goals") else "synthetic",
                                    ["env.webshop.human_goals"])
        small = get("env.webshop.use_small")  # the 1000-product catalogue files: all of ours
        ours["env_kwargs.num_products"] = (None if small else "full catalogue", ["env.webshop.use_small"])
    if env_id == "SearchQA-v0":
        ours["env_kwargs.topk"] = (get("env.search.topk"), ["env.search.topk"])
    if steps is not None:
        ours["max_steps"] = (steps, ["trainer.total_training_steps"])
    elif env_id != "SearchQA-v0":  # text mode: prepare.py writes train_data_size rows = one step per epoch
        ours["max_steps"] = (epochs, ["trainer.total_epochs", "data.train_batch_size"])
    else:
        ours["max_steps"] = (None, ["trainer.total_epochs"])  # one epoch of the Search-R1 parquet
    return ours


def map_method(method: str, get: Lookup) -> dict[str, tuple[Any, list[str]]]:
    """Our credit_params (and teacher fields) from the method's own keys."""
    ours: dict[str, tuple[Any, list[str]]] = {"credit": (METHODS[method]["credit"], ["algorithm.adv_estimator"])}

    def param(name: str, key: str, convert: Callable[[Any], Any] = float) -> None:
        ours[f"credit_params.{name}"] = (convert(get(key)), [key])

    if method == "gigpo":
        param("gamma", "algorithm.gamma")
        param("step_weight", "algorithm.gigpo.step_advantage_w")
        param("normalization", "algorithm.gigpo.mode", str)
        if get("algorithm.gigpo.enable_similarity"):
            param("similarity_threshold", "algorithm.gigpo.similarity_thresh")
    elif method in ("sdar", "opsd", "grpo_opsd"):
        param("lambda_", "algorithm.sdar.sdar_coef")
        param("beta", "algorithm.sdar.gate_beta")
        if method == "opsd":
            param("pg_coef", "actor_rollout_ref.actor.pg_loss_coef")
    elif method == "rlsd":
        param("lambda_", "algorithm.rlsd.rlsd_lambda")
        param("decay_steps", "algorithm.rlsd.warmdown_steps", int)
        param("clip_eps", "algorithm.rlsd.clip_eps")
    elif method == "skill_sd":
        param("lambda_", "algorithm.skillsd.sdl_lambda")
    elif method == "skillrise":
        param("gamma", "algorithm.traj_gamma")
        param("invalid_penalty", "actor_rollout_ref.actor.invalid_action_penalty_coef")
        param("tasks", "env.num_attempts", int)
        param("turns_per_task", "env.max_turns", int)
        param("curate_loss_weight", "algorithm.curate_loss_weight")
        param("group_seed", "env.seed", int)
        param("groups", "env.group_file", str)
    elif method == "agentopsd":
        param("lambda_", "algorithm.opsd.mult_lambda")
        param("granularity", "algorithm.opsd.granularity", str)
    if method not in ("grpo", "gigpo", "skillrise"):
        ours["teacher_context"] = ("skills", [k for k in get.values if k.endswith(".skills_dir")])
    return ours


def map_chat_template(get: Lookup) -> dict[str, tuple[Any, list[str]]]:
    """``chat_template_kwargs`` (TRL's field, passed to the chat template) from the scripts that set
    ``+data.apply_chat_template_kwargs.enable_thinking`` (the Qwen3 ones: non-thinking mode)."""
    key = "data.apply_chat_template_kwargs.enable_thinking"
    if key not in get.values:
        return {}
    return {"chat_template_kwargs": ({"enable_thinking": bool(get(key))}, [key])}


def build_entry(method: str, env: str, script: str, text: str, defaults: dict[str, tuple[str, int]],
                commit_files: Callable[[str], str]) -> dict[str, Any]:
    """One env entry of a card: upstream values, our fields, unmapped keys with reasons."""
    values = parse_script(text)
    get = Lookup(script, values, defaults)
    ours = {**map_common(get), **map_method(method, get), **map_chat_template(get)}
    env_id = ours["env_id"][0]
    facts = ENV_FACTS.get(env_id, []) if METHODS[method].get("env_facts", True) else []
    facts = [*facts, *METHODS[method].get("code_facts", [])]
    for path, line, field, value, needle in facts:
        if needle not in commit_files(path).splitlines()[line - 1]:
            raise SystemExit(f"{path}:{line} no longer holds {needle!r} ({field}); update ENV_FACTS.")
        ours[field] = (value, [f"{path}:{line}"])
        get.read[f"{path}:{line}"] = {"value": copy.deepcopy(value), "source": f"{path}:{line}"}
    used = {key for _, keys in ours.values() for key in keys} | set(get.read)
    not_mapped: dict[str, str] = {}
    for key in values:
        if key in used:
            continue
        reason = METHODS[method].get("not_mapped", {}).get(key) or next(
            (why for pattern, why in NOT_MAPPED if re.match(pattern, key)), None)
        if reason is None:
            raise SystemExit(f"{script}: {key}={values[key][0]} is neither mapped nor explained; extend the mapping.")
        not_mapped[key] = reason
    upstream = {key: {"value": scalar(v), "source": f"{script}:{line}"} for key, (v, line) in values.items()}
    for key, record in get.read.items():
        upstream.setdefault(key, record)
    return {
        "script": script,
        "upstream": dict(sorted(upstream.items())),
        "ours": {field: {"value": value, "from": keys} for field, (value, keys) in sorted(ours.items())},
        "not_mapped": dict(sorted(not_mapped.items())),
    }


# ----------------------------------------------------------------------------- writing


def build_card(method: str, mirror_root: Path, snapshot_root: Path) -> dict[str, Any]:
    """The card of ``method`` (upstream part), merged with the hand-written parts of the old card."""
    spec = METHODS[method]
    snapshot = spec.get("snapshot")
    if snapshot:  # files read at known commits, saved under snapshot_root
        folder = snapshot_root / spec["repo"].replace("/", "+")
        read = lambda path: (folder / path).read_text(encoding="utf-8")  # noqa: E731
        commit = snapshot[spec["scripts"][next(iter(spec["scripts"]))]]
        file_commits = dict(snapshot)
    else:
        git_dir = mirror_root / spec["repo"].replace("/", "+") / "repo"
        commit = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
        read = lambda path: git_show(git_dir, commit, path)  # noqa: E731
        file_commits = {}
    defaults = parse_defaults(read(DEFAULTS_FILE))
    path = HERE / f"{method}.yaml"
    old = yaml.safe_load(path.read_text()) if path.exists() else {}
    envs: dict[str, Any] = {}
    for env, script in spec["scripts"].items():
        entry = build_entry(method, env, script, read(script), defaults, read)
        previous = (old.get("envs") or {}).get(env, {})
        entry["configs"] = previous.get("configs", [])
        entry["departures"] = previous.get("departures", [])
        envs[env] = entry
    return {
        "method": method,
        "credit": spec["credit"],
        "notes": old.get("notes", []),
        "upstream": {"repo": spec["repo"], "commit": commit, "defaults_file": DEFAULTS_FILE,
                     **({"file_commits": file_commits} if file_commits else {})},
        "envs": envs,
    }


class _CardDumper(yaml.SafeDumper):
    """Leaf mappings and short lists on one line; lists of long texts (notes) one item a line."""


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    block = any(isinstance(x, (str, dict)) and len(str(x)) > 60 for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=not block)


def _represent_dict(dumper: yaml.SafeDumper, data: dict) -> yaml.Node:
    leaf = all(not isinstance(v, (dict, list)) or (isinstance(v, list) and len(str(v)) < 60) for v in data.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=leaf and len(data) <= 4)


_CardDumper.add_representer(list, _represent_list)
_CardDumper.add_representer(dict, _represent_dict)
HEADER = "# Recipe card of {}: written by build_cards.py from the authors' scripts; edit only configs, departures and notes.\n"


def dump_card(card: dict[str, Any]) -> str:
    """The card as YAML, with its header line."""
    return HEADER.format(card["method"]) + yaml.dump(card, Dumper=_CardDumper, sort_keys=False, width=120,
                                                    allow_unicode=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--snapshot-root", type=Path, default=Path("/work/scratch/recipes/snapshots"),
                        help="files of repositories with no git snapshot, saved as <owner>+<name>/<path>")
    parser.add_argument("methods", nargs="*", default=sorted(METHODS))
    args = parser.parse_args()
    for method in args.methods:
        card = build_card(method, args.mirror_root, args.snapshot_root)
        (HERE / f"{method}.yaml").write_text(dump_card(card))
        print(f"wrote {method}.yaml ({len(card['envs'])} envs)")


if __name__ == "__main__":
    main()
