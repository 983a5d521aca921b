"""``AgentGRPOConfig``: TRL's ``GRPOConfig`` plus the multi-turn agent settings.

One flat dataclass, parsed by ``TrlParser`` from YAML and command-line flags. Every new
field carries a ``help`` text; ``__post_init__`` rejects bad values with a message that says
how to fix them. TRL's own fields keep their meaning; in particular ``num_generations`` is
the group size G (``group_size`` is a readable alias), ``max_completion_length`` is the
token budget of **one turn**, ``temperature`` is the rollout temperature and ``beta`` the KL
coefficient.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trl import GRPOConfig

from agentgym_suite.registration import DEFAULT_ENV_ID, training_env_modes
from agentgym_suite.rollout.workers import EnvWorkers
from agentgym_suite.trainers.credit.base import TEACHER_SOURCES
from agentgym_suite.trainers.credit.registry import DEFAULT_CREDIT, IMPORT_PATH_EXAMPLE, available_credit_assigners
from agentgym_suite.trainers.run_context import run_context

if TYPE_CHECKING:
    from agentgym_suite.trainers.credit import CreditAssigner

ENV_MODES = ("real", *training_env_modes())
"""``real`` trains on ``env_id``; each other mode on the env whose registration entry declares it."""
ROW_LAYOUTS = ("turn", "trajectory")
PROMPT_FORMATS = ("single", "chat")
KL_ESTIMATORS = ("k3", "low_var_kl")


def _as_dict(name: str, value: Any) -> dict[str, Any]:
    """Accept a dict, a JSON string or None (from YAML or a command-line flag)."""
    if value is None or value == "":
        return {}
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, str):
        try:
            loaded = json.loads(value)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"{name} must be a mapping; got the string {value!r}, which is not valid JSON ({err.msg}). "
                f"Write it as a YAML mapping or as JSON, e.g. --{name} '{{\"key\": 1}}'."
            ) from None
        if isinstance(loaded, dict):
            return loaded
    raise ValueError(f"{name} must be a mapping (YAML dict or JSON object); got {type(value).__name__}: {value!r}.")


@dataclass
class AgentGRPOConfig(GRPOConfig):
    """Configuration of :class:`~agentgym_suite.trainers.AgentGRPOTrainer`.

    See ``configs/`` for complete examples (a CPU smoke run and the papers' setups).
    """

    _VALID_DICT_FIELDS = GRPOConfig._VALID_DICT_FIELDS + ["env_kwargs", "credit_params", "eval_env_kwargs"]

    model_name_or_path: str = field(
        default="tiny",
        metadata={
            "help": "Model to train: a local directory or hub id, or 'tiny' for the suite's tiny random "
            "Qwen2-style test model (built locally, no download)."
        },
    )
    env_id: str = field(
        default=DEFAULT_ENV_ID,
        metadata={"help": "Gymnasium id of the env to train on (see `agentgym list`)."},
    )
    env_kwargs: dict[str, Any] | str | None = field(
        default=None,
        metadata={"help": "Keyword arguments for gymnasium.make(env_id, ...), e.g. {split: train}."},
    )
    env_mode: str = field(
        default="real",
        metadata={
            "help": "real: train on env_id itself; "
            + "; ".join(f"{mode}: on {env} (over env_id when it plays over another env)"
                        for mode, env in training_env_modes().items()) + "."
        },
    )
    group_size: int | None = field(
        default=None,
        metadata={
            "help": "G, rollouts per task (same task id and seed). Alias of num_generations; when set it "
            "overrides num_generations."
        },
    )
    max_turns: int = field(
        default=50,
        metadata={"help": "Turn budget per episode (ALFWorld 50, WebShop 15, Search 4); the episode is truncated after it."},
    )
    prompt_format: str = field(
        default="single",
        metadata={
            "help": "single: one fresh verl-agent prompt per turn (task, last history_length steps, observation, "
            "admissible actions); chat: the whole conversation as chat messages."
        },
    )
    row_layout: str = field(
        default="turn",
        metadata={
            "help": "turn: one training row per agent turn (verl-agent); trajectory: one row per episode with the "
            "env's tokens masked out (TRL env_mask; needs prompt_format=chat)."
        },
    )
    history_length: int = field(
        default=2,
        metadata={"help": "Observation/action pairs of history in the single-message prompt (seeds: 2, Search: 4)."},
    )
    action_format: str | None = field(
        default="think_action",
        metadata={
            "help": "Action format passed to command envs (plain | think_action | search); None keeps the env's "
            "default. Tool envs ignore it."
        },
    )
    invalid_action_penalty: float = field(
        default=0.1,
        metadata={
            "help": "c in score_row = return - c*invalid (0.1 ALFWorld/WebShop, 0.01 Search). Passed to the credit "
            "plug-in unless credit_params sets invalid_penalty or the plug-in's config fixes its own."
        },
    )
    credit: str = field(
        default=DEFAULT_CREDIT,
        metadata={"help": f"Credit-assignment plug-in ({', '.join(available_credit_assigners())}), or your own "
                          f"CreditAssigner subclass by its import path, e.g. {IMPORT_PATH_EXAMPLE}."},
    )
    credit_params: dict[str, Any] | str | None = field(
        default=None,
        metadata={
            "help": "Parameters of the credit plug-in: the fields of its config class (<Plugin>.config_cls, "
            "documented with the plug-in), e.g. {lambda_: 0.01, beta: 5.0}."
        },
    )
    teacher_context: str = field(
        default="skills",
        metadata={
            "help": "Privileged text of the teacher prompt (plug-ins that read teacher log-probs or teacher logits): "
            "skills (the "
            "suite's skill texts for the task family), oracle (the env's oracle walkthrough) or env_response "
            "(the real env's response to the row's action)."
        },
    )
    skills_dir: str | None = field(
        default=None,
        metadata={"help": "Directory of your own skill texts (general.md plus <family>.md, or the released layout with "
                          "skill_mapping.json); default: the env's (TextEnv.skill_texts: the released texts of "
                          "`agentgym data fetch skills`, else the env's own fallback)."},
    )
    skills_origin: str | None = field(
        default=None,
        metadata={"help": "Set by the trainer (a value given is replaced): where the teacher's skill texts come from "
                          "(released ..., fallback ..., custom ...), so the logged config names a fallback."},
    )
    max_prompt_tokens: int = field(
        default=4096,
        metadata={
            "help": "Longest prompt in tokens; longer student prompts are left-truncated, teacher prompts keep "
            "the privileged text and lose history instead."
        },
    )
    task_ids: list[str] | None = field(
        default=None,
        metadata={"help": "Train on these task ids only; default: every task of the env's split."},
    )
    num_tasks: int | None = field(
        default=None,
        metadata={"help": "Use only the first num_tasks tasks (after task_ids); None = all."},
    )
    save_trajectories: bool = field(
        default=True,
        metadata={"help": "Append every step's trajectories to <output_dir>/trajectories/step_XXXXXX.jsonl."},
    )
    max_rows_per_pass: int | None = field(
        default=None,
        metadata={
            "help": "Most rows in one forward/backward pass, however long the episodes are: a micro-batch is cut "
            "into passes of at most this many rows and their gradients accumulate inside the step; the no-gradient "
            "log-prob passes use the same bound. None: one pass per micro-batch (rows = this process's rows / "
            "steps_per_generation, which grows with episode length)."
        },
    )
    optimizer_steps_per_generation: int | None = field(
        default=None,
        metadata={
            "help": "Optimizer updates per generation batch (verl-agent's mini-batches): the generation batch is "
            "split into this many updates of gradient_accumulation_steps = steps_per_generation / this micro-"
            "batches each. None: one update per generation batch (TRL's default)."
        },
    )
    rows_per_update: int | None = field(
        default=None,
        metadata={
            "help": "Rows (step rows, over all processes) per optimizer update, as verl's mini-batches: "
            "ppo_mini_batch_size * actor_rollout_ref.rollout.n, and verl-agent keeps that n at 1 (its group size "
            "env.rollout.n only drives the rollout loop), so ALFWorld 256, WebShop 64, GiGPO search 512. A generation "
            "batch of R rows takes verl-agent's ceil(R' / rows_per_update) updates (R': R padded as pad_rows_per_process "
            "says), whatever steps_per_generation is (an update may end inside a micro-batch), each on its own share "
            "of the rows with its loss a token mean over that share, a short last one weighted by its rows / "
            "rows_per_update; PPO clipping acts from the second update on. Needs gradient_accumulation_steps = "
            "steps_per_generation (set for you) and a token-sum loss_type (dapo). None: "
            "optimizer_steps_per_generation, or one update per generation batch."
        },
    )
    pad_rows_per_process: int | None = field(
        default=None,
        metadata={
            "help": "With rows_per_update: verl-agent's adjust_batch pads a step's rows with duplicated rows to a "
            "multiple of this x processes (the lcm of the script's per-GPU micro-batch sizes) before cutting them "
            "into updates; the schedule counts those rows (here padding rows are all-masked). None: no padding."
        },
    )
    kl_estimator: str = field(
        default="k3",
        metadata={
            "help": "KL term of the loss (beta > 0): k3 = TRL's exp(d) - d - 1 with d = ref - logp; low_var_kl = "
            "verl's: the same term clamped to [-10, 10] (no gradient where clamped), a token mean like the policy "
            "loss (needs loss_type dapo); set use_bias_correction_kl: false to match verl, which does not weight it."
        },
    )
    eval_env_kwargs: dict[str, Any] | str | None = field(
        default=None,
        metadata={
            "help": "Held-out tasks for evaluation during training (eval_strategy/eval_steps): env kwargs merged over "
            "env_kwargs, e.g. {split: valid_unseen}. The eval success rate is logged as eval_success_rate."
        },
    )
    eval_task_ids: list[str] | None = field(
        default=None,
        metadata={"help": "Evaluate on these held-out task ids only; default: every task of the eval split."},
    )
    eval_num_tasks: int | None = field(
        default=None,
        metadata={"help": "Evaluate on the first eval_num_tasks held-out tasks; None = all."},
    )
    eval_temperature: float = field(
        default=0.4,
        metadata={"help": "Sampling temperature of held-out evaluation (0.4 in the papers; 0 = greedy)."},
    )
    env_workers: str | None = field(
        default=None,
        metadata={
            "help": "Where rollouts step their envs: 1 = in the training process, N >= 2 = N worker processes, "
            "ray = Ray actors on the cluster ray.init reaches (ray:N for N actors), openenv://HOST:PORT[,HOST2:PORT2] = "
            "sessions spread over `agentgym serve` servers on any machines. Unset: the env's default "
            "(ALFWorld and ScienceWorld: one process per CPU core when more than one env is live). Trajectories "
            "are the same whichever; a worker that dies ends only its episodes, which are recorded, not trained on."
        },
    )
    step_timeout: float | None = field(
        default=None,
        metadata={
            "help": "Seconds one env step may take (training and held-out rollouts). A slower step ends that episode "
            "truncated with an error (recorded, not trained on) and the env is replaced; an env worker that does not "
            "answer within step_timeout per step it was sent, plus 10 s, is killed and replaced. None: no limit."
        },
    )
    lora_r: int = field(
        default=0,
        metadata={
            "help": "Rank of a LoRA adapter (peft) on every linear layer, trained instead of the full weights; "
            "0 = full fine-tuning. lora_alpha is 2*lora_r. `agentgym train` saves the adapter merged into the "
            "weights, so the saved model loads like any other."
        },
    )
    print_step_times: bool = field(
        default=True,
        metadata={
            "help": "Print each step's wall-time profile (rollout generation, env steps, log-prob passes, "
            "forward+backward, optimizer, logging); it is always written to <output_dir>/step_times.jsonl and "
            "logged as time/<phase>_s."
        },
    )

    skip_uninformative_rows: bool = field(
        default=True,
        metadata={
            "help": "Leave out of the forward and backward passes the rows whose advantage is zero on every trained "
            "token and whose loss has no other term (no KL: beta 0; no entropy bonus; no auxiliary loss by the credit "
            "plug-in's rows_with_other_terms). Their loss is exactly 0, and the loss is still normalised over every "
            "row, so the update is the same; a step where every group won (or lost) then costs only its rollouts. "
            "Not applied with loss_type bnpo (normalised per micro-batch). False: train every row."
        },
    )
    dynamic_sampling: bool = field(
        default=False,
        metadata={
            "help": "DAPO's dynamic sampling: groups whose episodes all got the same return (no advantage) are dropped "
            "and replaced by groups of new tasks drawn from the training tasks, until the generation batch has as "
            "many groups as it was given or dynamic_sampling_max_rollouts is spent. Logged per step as "
            "dynamic_sampling/groups_dropped, dynamic_sampling/extra_rollouts and dynamic_sampling/groups_missing."
        },
    )
    dynamic_sampling_max_rollouts: int | None = field(
        default=None,
        metadata={
            "help": "Most extra rollouts (all processes together) one step may play to replace dropped groups; a step "
            "that reaches it trains on the groups it has. None: 2 x generation_batch_size."
        },
    )

    async_rollouts: bool = field(
        default=False,
        metadata={
            "help": "Asynchronous rollouts: a rollout thread keeps playing groups of episodes on its own envs with a "
            "snapshot of the policy while the learner trains on finished groups from a bounded queue; samples more "
            "than max_staleness policy versions old are dropped, the others corrected with a truncated importance "
            "weight (async_is_cap). Single process, transformers backend (see docs/training.md)."
        },
    )
    max_staleness: int = field(
        default=1,
        metadata={"help": "async_rollouts: policy versions (trainer steps, one per generation batch) a trained group may lag the learner by; "
                          "no group is started that would be older when the learner takes it (AReaL's admission "
                          "rule), and older groups are still dropped and counted (async/dropped_groups). The queue holds "
                          "max(1, max_staleness, async_rollout_threads) steps of groups. 1 (the default) is enough to overlap a step's "
                          "rollouts with the previous step's learning; on the 6-step rl-gain setting 2 lost 20 "
                          "points of held-out success against the synchronous run (docs/training.md)."},
    )
    async_episode_update: str = field(
        default="finish",
        metadata={"help": "async_rollouts: an episode that spans a weight update is finished on the weights it "
                          "started with (finish) or continued on the new ones from the next turn (continue: partial "
                          "rollouts). Each turn records the policy version that produced it."},
    )
    async_correction: str = field(
        default="behaviour_clip",
        metadata={"help": "async_rollouts: how samples of an older policy are corrected. behaviour_clip (TRL "
                          "AsyncGRPOTrainer's): PPO's ratio is taken to the generator's log-probs and clipped, and "
                          "TRL's delta (set to async_is_cap unless given) caps it; tis (verl's decoupled correction): "
                          "the learner's log-probs are recomputed when the batch is scored (PPO clips against them) and "
                          "each token's loss is weighted by min(pi_learner / pi_generator, async_is_cap), at the cost "
                          "of one more log-prob pass per step."},
    )
    async_rollout_threads: int = field(
        default=1,
        metadata={"help": "async_rollouts: rollout threads, each playing one step's groups at a time on its own envs "
                          "and its own copy of the policy (one more copy of the weights per thread). More than one "
                          "helps when env steps wait on I/O: the threads' waits overlap."},
    )
    async_lora_server: str | None = field(
        default=None,
        metadata={"help": "async_rollouts: base URL of an OpenAI-compatible vLLM server (e.g. http://127.0.0.1:8000) "
                          "the rollout threads generate through instead of a copy of the policy: each policy version "
                          "is saved as a LoRA adapter and loaded into the server by name, max_staleness + 1 versions "
                          "kept live (needs lora_r > 0 and a server started with "
                          "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True ... --enable-lora; see docs/training.md)."},
    )
    async_is_cap: float = field(
        default=2.0,
        metadata={"help": "async_rollouts: truncation C of the per-token importance weight min(pi_learner / "
                          "pi_generator, C) on the policy loss (verl's truncated importance sampling; 2.0 as verl)."},
    )
    cpu_bf16: str = field(
        default="auto",
        metadata={
            "help": "CPU runs only: auto = when `bf16` is not set, bf16 autocast where the CPU has native bf16 "
            "(avx512_bf16/amx_bf16) and fp32 elsewhere; on/off force it whatever `bf16` says. Logged at start "
            "(trainers/cpu_speed.py)."
        },
    )
    cpu_gradient_checkpointing: str = field(
        default="auto",
        metadata={
            "help": "CPU runs only: auto = gradient checkpointing off when one pass's activations fit in memory "
            "(TRL turns it on by default; it recomputes the forward in the backward); on/off force it."
        },
    )

    def __post_init__(self) -> None:
        """Validate the agent fields, then let TRL validate its own."""
        self.env_kwargs = _as_dict("env_kwargs", self.env_kwargs)
        self.credit_params = _as_dict("credit_params", self.credit_params)
        self.eval_env_kwargs = _as_dict("eval_env_kwargs", self.eval_env_kwargs)
        _choice("env_mode", self.env_mode, ENV_MODES)
        _choice("row_layout", self.row_layout, ROW_LAYOUTS)
        _choice("prompt_format", self.prompt_format, PROMPT_FORMATS)
        _choice("teacher_context", self.teacher_context, TEACHER_SOURCES)
        _choice("kl_estimator", self.kl_estimator, KL_ESTIMATORS)
        if self.group_size is not None:
            if self.group_size < 2:
                raise ValueError(
                    f"group_size must be >= 2 (got {self.group_size}): group-relative advantages need at least "
                    "two rollouts per task; the papers use 8 (EnvACE: 4)."
                )
            self.num_generations = self.group_size
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1 (got {self.max_turns}); it is the turn budget of an episode.")
        if self.history_length < 0:
            raise ValueError(f"history_length must be >= 0 (got {self.history_length}); 2 is the verl-agent default.")
        if not (self.invalid_action_penalty >= 0):
            raise ValueError(
                f"invalid_action_penalty must be >= 0 (got {self.invalid_action_penalty}); use 0 to disable it."
            )
        if self.row_layout == "trajectory" and self.prompt_format != "chat":
            raise ValueError(
                "row_layout=trajectory trains on whole conversations and needs prompt_format=chat; set "
                "prompt_format: chat, or use row_layout: turn with the single-message prompt."
            )
        if self.max_prompt_tokens < 16:
            raise ValueError(f"max_prompt_tokens must be >= 16 (got {self.max_prompt_tokens}).")
        if self.num_tasks is not None and self.num_tasks < 1:
            raise ValueError(f"num_tasks must be >= 1 or null (got {self.num_tasks}).")
        if self.eval_num_tasks is not None and self.eval_num_tasks < 1:
            raise ValueError(f"eval_num_tasks must be >= 1 or null (got {self.eval_num_tasks}).")
        if not (self.eval_temperature >= 0):
            raise ValueError(f"eval_temperature must be >= 0 (got {self.eval_temperature}); 0.4 as the papers, 0 = greedy.")
        if self.lora_r < 0:
            raise ValueError(f"lora_r must be >= 0 (got {self.lora_r}); 0 trains the full weights, 8-32 is usual.")
        if self.max_rows_per_pass is not None and self.max_rows_per_pass < 1:
            raise ValueError(f"max_rows_per_pass must be >= 1 or null (got {self.max_rows_per_pass}).")
        if self.dynamic_sampling_max_rollouts is not None and self.dynamic_sampling_max_rollouts < 0:
            raise ValueError(f"dynamic_sampling_max_rollouts must be >= 0 or null (got {self.dynamic_sampling_max_rollouts}).")
        if self.num_generations_eval is None:
            self.num_generations_eval = 1  # episodes per held-out task (evaluation plays no GRPO groups)
        from agentgym_suite.trainers.async_rollouts.settings import check_async_settings

        check_async_settings(self)
        from agentgym_suite.core.guards import check_timeout

        self.step_timeout = check_timeout(self.step_timeout)
        # resolves the plug-in and parses env_workers once (held by run_context, not here): an unknown name,
        # a broken import path or a bad env_workers fails now, clearly; the field keeps the canonical text
        self.env_workers = run_context(self).env_workers_text
        from agentgym_suite.trainers.cpu_speed import resolve_cpu_bf16

        resolve_cpu_bf16(self)  # CPU runs: bf16 autocast where native, before TRL reads bf16
        super().__post_init__()
        if self.num_iterations < 1:
            raise ValueError(f"num_iterations must be >= 1 (got {self.num_iterations}).")
        if self.rows_per_update is not None:
            _check_rows_per_update(self)
        from agentgym_suite.trainers.memory_bound import TOKEN_SUM_LOSSES

        if self.kl_estimator == "low_var_kl" and self.loss_type not in TOKEN_SUM_LOSSES:
            raise ValueError(f"kl_estimator=low_var_kl adds the KL as a token mean, which needs a token-sum loss_type "
                             f"({', '.join(TOKEN_SUM_LOSSES)}); got loss_type={self.loss_type!r}.")
        if self.optimizer_steps_per_generation is not None:
            updates = self.optimizer_steps_per_generation
            if updates < 1 or self.steps_per_generation % updates:
                raise ValueError(
                    f"optimizer_steps_per_generation={updates} must be >= 1 and divide steps_per_generation="
                    f"{self.steps_per_generation} (the generation batch of {self.generation_batch_size} episodes is cut "
                    "into that many micro-batches per process); change one of them, or generation_batch_size."
                )
            self.gradient_accumulation_steps = self.steps_per_generation // updates

    @property
    def credit_class(self) -> type[CreditAssigner]:
        """The plug-in class ``credit`` names: shorthand for ``run_context(config).credit_class``
        (:mod:`~agentgym_suite.trainers.run_context`; resolved once per setting, not stored here)."""
        return run_context(self).credit_class

    @property
    def parsed_env_workers(self) -> EnvWorkers | None:
        """``env_workers`` as the value the env pool takes (None: the env's default): shorthand for
        ``run_context(config).env_workers`` (parsed once per setting, not stored here)."""
        return run_context(self).env_workers

    @property
    def train_env_id(self) -> str:
        """The env id rollouts actually run on, after ``env_mode`` (declared by the registration entries)."""
        return training_env_modes().get(self.env_mode, self.env_id)


def _check_rows_per_update(config: AgentGRPOConfig) -> None:
    """Validate ``rows_per_update`` and give it one optimizer step per generation batch to cut into
    updates (the trainer takes the earlier updates itself)."""
    from agentgym_suite.trainers.memory_bound import TOKEN_SUM_LOSSES

    if config.rows_per_update < 1:
        raise ValueError(f"rows_per_update must be >= 1 or null (got {config.rows_per_update}); verl-agent's "
                         "ALFWorld recipe updates every 256 step rows (ppo_mini_batch_size 256 x actor rollout.n 1).")
    if config.optimizer_steps_per_generation is not None:
        raise ValueError("rows_per_update and optimizer_steps_per_generation both size the updates; set only one "
                         "(rows_per_update follows the rows each generation batch really has).")
    if config.loss_type not in TOKEN_SUM_LOSSES:
        raise ValueError(f"rows_per_update normalises each update's loss by its own tokens, which needs a token-sum "
                         f"loss_type ({', '.join(TOKEN_SUM_LOSSES)}); got loss_type={config.loss_type!r}.")
    if config.pad_rows_per_process is not None and config.pad_rows_per_process < 1:
        raise ValueError(f"pad_rows_per_process must be >= 1 or null (got {config.pad_rows_per_process}).")
    if config.steps_per_generation != config.gradient_accumulation_steps:
        config.gradient_accumulation_steps = config.steps_per_generation


def _choice(name: str, value: Any, options: tuple[str, ...]) -> None:
    if value not in options:
        raise ValueError(f"{name}={value!r} is not supported; choose one of: {', '.join(options)}.")
