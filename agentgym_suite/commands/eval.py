"""``agentgym eval``: evaluate an agent on an env id, resumably, and write trajectories and a summary."""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import sys
from typing import Any

import gymnasium as gym

from agentgym_suite.commands.model_call_flags import add_model_call_flags, model_call_options, run_rescore
from agentgym_suite.core.errors import AgentGymError
from agentgym_suite.evaluation.extensions import add_extension_arguments, extension_options
from agentgym_suite.registration import env_class


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``eval`` subcommand."""
    parser = subparsers.add_parser(
        "eval",
        help="evaluate an agent on an env; writes trajectories.jsonl and summary.json (resumable)",
        description=(
            "Run --episodes tasks (chosen with --seed from the env's task ids), --k attempts each. "
            "Re-running with the same --out resumes: finished episodes are kept and skipped."
        ),
    )
    parser.add_argument("env_id", metavar="ID", help="registered env id (see `agentgym list`)")
    parser.add_argument("--env-kwargs", default="{}", metavar="JSON",
                        help="JSON object of the env's own options (gymnasium.make kwargs), e.g. '{\"domain\": \"airline\"}'; "
                             "`agentgym eval ID --help` lists them")
    parser.add_argument(
        "--agent", default="random",
        help="oracle | random | hf:PATH | vllm:PATH | openai:MODEL@URL | default | tiny (default: random)",
    )
    parser.add_argument(
        "--user", default=None, metavar="SPEC",
        help="who plays the customer in envs with a simulated user (their user_setting): 'scripted' (offline test "
             "double) or 'llm:<backend spec>', e.g. llm:hf:Qwen/Qwen3-8B (default: llm:<agent> for a model agent, "
             "else scripted)",
    )
    parser.add_argument(
        "--judge", default=None, metavar="SPEC",
        help="backend spec of the LLM judge in envs that declare one (their judge_setting), e.g. hf:PATH or "
             "openai:MODEL@URL; without it each env says what it does instead (leaves tasks unscored, or falls back "
             "to a state check)",
    )
    parser.add_argument(
        "--sweep", default=None, metavar="NAME[:ARGS]",
        help="run the benchmark's declared sweep: one resumable evaluation per variant in <out>/<variant>/, then its "
             "aggregate (printed, and written to <out>/sweep.json); an unknown NAME lists the env's sweeps",
    )
    parser.__class__ = _EvalParser  # the sweeps' alias flags are added when eval is parsed (see _EvalParser)
    parser.add_argument("--episodes", type=int, default=None, help="number of tasks (default: every task)")
    parser.add_argument("--k", type=int, default=None,
                        help="attempts per task, for pass@k and pass^k (default: the benchmark's official setting "
                             "when it declares one, else 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the task selection and the episodes")
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory (resumed when it exists)")
    parser.add_argument("--max-turns", type=int, default=None, help="most actions per episode (default: the env's)")
    parser.add_argument("--prompt-format", choices=("single", "chat"), default="single",
                        help="model agents: verl-agent single prompt or full chat history")
    parser.add_argument("--temperature", type=float, default=None,
                        help="model agents: sampling temperature (default: the benchmark's official setting when it "
                             "declares one, e.g. 0 for tool benchmarks)")
    parser.add_argument("--max-new-tokens", type=int, default=None,
                        help="model agents: tokens per action (default: the benchmark's official setting when it "
                             "declares one)")
    parser.add_argument("--batch-size", type=int, default=None, metavar="N",
                        help="play N episodes at once (default: the client's concurrency, 16 unless --concurrency or "
                             "the spec's concurrency= says otherwise, for openai: agents; 1 for others): model agents in lockstep with one "
                             "batched generation per turn, other agents as N copies; each episode keeps its own seed, "
                             "so results do not depend on N")
    parser.add_argument("--max-context-tokens", type=int, default=None, metavar="N",
                        help="model agents: the model's context window; chat histories lose their oldest turns to fit "
                             "(default: the server's max_model_len when it reports one)")
    parser.add_argument("--autocast", choices=("bfloat16", "float16"), default=None,
                        help="hf: agents: generate under torch.autocast to this dtype (the weights stay as loaded; "
                             "on a CPU with native bf16, bfloat16 prefills about 1.75x faster)")
    client = parser.add_argument_group(
        "OpenAI-compatible server (--agent openai:MODEL@URL)",
        "Each setting can also go in the spec: openai:MODEL@URL?timeout=120&max_retries=2&concurrency=8&seed=off"
        "&logprobs=off&api_key_env=VAR&header=Name:value&tools_in_prompt=on (these flags win).",
    )
    client.add_argument("--request-timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds one request may take before it is sent again (default 600)")
    client.add_argument("--max-retries", type=int, default=None, metavar="N",
                        help="extra attempts after a timeout, a connection error, HTTP 429 or 5xx (default 3)")
    client.add_argument("--concurrency", type=int, default=None, metavar="N",
                        help="requests in flight at once (default 16); also the number of episodes played at once "
                             "when --batch-size is not given")
    client.add_argument("--no-seed", action="store_true", help="send no 'seed' field (servers that refuse it)")
    client.add_argument("--no-logprobs", action="store_true", help="ask for no log-probs (servers that refuse the field)")
    client.add_argument("--api-key-env", default=None, metavar="VAR",
                        help="environment variable holding the API key (default OPENAI_API_KEY)")
    client.add_argument("--header", action="append", default=None, metavar="'NAME: VALUE'",
                        help="extra HTTP header sent with every request (repeatable)")
    client.add_argument("--tools-in-prompt", action="store_true",
                        help="write the tool schemas into the system prompt (Hermes <tools> format) and send no 'tools' "
                             "field, for servers whose chat template drops tools; the model's <tool_call> text is parsed")
    parser.add_argument("--step-timeout", type=float, default=None, metavar="SECONDS",
                        help="end an episode truncated when one env step takes longer (default: no limit)")
    parser.add_argument("--env-workers", default=None, metavar="N|ray|openenv://HOST:PORT,...",
                        help="where envs run: 1 = in this process, N >= 2 = N worker processes (N episodes at once, "
                             "whatever the agent), ray = Ray actors, openenv://HOST:PORT,... = sessions on `agentgym serve` "
                             "servers (default: the env's own, from its registration entry: worker processes for envs whose "
                             "steps cost real time when --batch-size > 1)")
    add_extension_arguments(parser)  # the flags of each declared evaluation extension (a method's own)
    parser.add_argument("--retry-failed", action="store_true", help="run episodes that crashed earlier again")
    parser.add_argument("--allow-errors", action="store_true",
                        help="exit 0 even when episodes crashed (default: exit 1, after writing every result)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print summary.json instead of a table")
    add_model_call_flags(parser)
    parser.set_defaults(func=run)


EXIT_CRASHED = 1
"""Exit status of an evaluation that finished with crashed episodes (usage errors exit 2)."""


class _Stderr(logging.Handler):
    """Prints the suite's warnings to the current ``sys.stderr`` (above a live progress bar)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(f"agentgym eval: {self.format(record)}", file=sys.stderr)
        except Exception:  # a closed stream must not end the run
            self.handleError(record)


def show_warnings() -> None:
    """Send warnings of the suite's loggers (crashes, re-sent requests, unseen tools) to stderr, once."""
    root = logging.getLogger("agentgym_suite")
    if not any(isinstance(h, _Stderr) for h in root.handlers):
        root.addHandler(_Stderr(logging.WARNING))


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """The OpenAI-compatible client settings given as flags (backend keyword arguments)."""
    headers: dict[str, str] = {}
    for text in args.header or []:
        name, sep, value = text.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"--header {text!r}: write it as 'Name: value'.")
        headers[name.strip()] = value.strip()
    for flag, value in (("--request-timeout", args.request_timeout), ("--concurrency", args.concurrency)):
        if value is not None and not 0 < value < float("inf"):
            raise ValueError(f"{flag} must be positive, got {value}.")
    if args.max_retries is not None and args.max_retries < 0:
        raise ValueError(f"--max-retries must be >= 0, got {args.max_retries}.")
    options = {
        "timeout": args.request_timeout, "max_retries": args.max_retries, "max_concurrency": args.concurrency,
        "send_seed": False if args.no_seed else None, "send_logprobs": False if args.no_logprobs else None,
        "api_key_env": args.api_key_env, "headers": headers or None, "tools_in_prompt": True if args.tools_in_prompt else None,
    }
    return {k: v for k, v in options.items() if v is not None}


def _parse_kwargs(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"--env-kwargs is not valid JSON ({exc}); pass an object such as '{{\"split\": \"test\"}}'.") from None
    if not isinstance(value, dict):
        raise ValueError("--env-kwargs must be a JSON object such as '{\"split\": \"test\"}'.")
    return value


def default_batch_size(agent: str, backend_options: dict[str, Any]) -> int:
    """Episodes at once when ``--batch-size`` is not given: for an ``openai:`` agent the client's
    concurrency (``--concurrency``, else the spec's ``concurrency=``, else the client's 16), so
    the server gets as many requests as the client may have in flight; 1 for every other agent."""
    if not (isinstance(agent, str) and agent.startswith("openai:")):
        return 1
    if backend_options.get("max_concurrency"):
        return int(backend_options["max_concurrency"])
    from agentgym_suite.llm.openai_backend import OpenAIBackend, parse_openai_spec

    _, _, spec_options = parse_openai_spec(agent[len("openai:"):])
    default = inspect.signature(OpenAIBackend).parameters["max_concurrency"].default
    return int(spec_options.get("max_concurrency") or default)


def agent_sampling_defaults() -> dict[str, Any]:
    """The model agent's own ``temperature`` and ``max_new_tokens`` (what a run without a flag or
    an env default samples with)."""
    from agentgym_suite.agents.model_agent import ModelAgent

    params = inspect.signature(ModelAgent).parameters
    return {key: params[key].default for key in ("temperature", "max_new_tokens")}


def evaluation_settings(env_id: str, args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, str]]:
    """``k``, ``temperature`` and ``max_new_tokens`` for the run, and where each came from.

    A flag wins; otherwise the env's declared ``eval_sampling_defaults`` (the official harness's
    settings; a declared None means the harness sets nothing, so the agent's own default holds);
    otherwise the suite's defaults (k=1, the model agent's own sampling, named as such, so that
    ``summary.json`` records what every model run sampled with).
    """
    declared = {key: value for key, value in dict(getattr(env_class(env_id), "eval_sampling_defaults", None) or {}).items()
                if value is not None}
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in ("k", "temperature", "max_new_tokens"):
        flag = getattr(args, key)
        if flag is not None:
            values[key], sources[key] = flag, f"--{key.replace('_', '-')}"
        elif key in declared:
            values[key], sources[key] = declared[key], f"{env_id} evaluation default (official harness)"
    values.setdefault("k", 1)
    sources.setdefault("k", "suite default")
    from agentgym_suite.evaluation.agent_specs import is_model_spec

    agent = getattr(args, "agent", None)
    if isinstance(agent, str) and is_model_spec(agent):
        for key, value in agent_sampling_defaults().items():
            if key not in values:
                values[key], sources[key] = value, "model agent default (ModelAgent)"
    return values, sources


def apply_user_and_judge(env_id: str, env_kwargs: dict[str, Any], agent: str, user: str | None,
                         judge: str | None) -> dict[str, Any]:
    """``env_kwargs`` with the ``--user``/``--judge`` settings folded in.

    Each flag sets the constructor argument the env class declares for it (``user_setting``,
    ``judge_setting``); then the env's ``with_agent_model`` hook fills in what follows the agent
    (an unset simulated user plays with the agent's own model when the agent is one, the
    scripted test double otherwise).

    Raises:
        ValueError: when a flag names a setting the env does not declare.
    """
    from agentgym_suite.evaluation.agent_specs import is_model_spec

    cls = env_class(env_id)
    kwargs = dict(env_kwargs)
    for flag, what, value in (("--user", "user", user), ("--judge", "judge", judge)):
        if value is None:
            continue
        key = str(getattr(cls, f"{what}_setting", "") or "")
        if not key:
            raise ValueError(f"{flag} applies to envs that declare a simulated {what} ({what}_setting); {env_id} has none.")
        if key in kwargs and kwargs[key] != value:
            raise ValueError(f"{flag} {value!r} conflicts with --env-kwargs {key}={kwargs[key]!r}; give it once.")
        kwargs[key] = value
    model = agent if isinstance(agent, str) and is_model_spec(agent) else None
    fill = getattr(cls, "with_agent_model", None)
    return dict(fill(kwargs, model)) if callable(fill) else kwargs


class _EvalParser(argparse.ArgumentParser):
    """``agentgym eval``'s parser: adds the older flags that declared sweeps keep (``--ALIAS ARGS`` for
    ``--sweep NAME:ARGS``, declared beside each benchmark's env) the first time eval's arguments are
    parsed or its help is shown, so that other subcommands do not import every env to start."""

    _aliases_added = False

    def _add_sweep_aliases(self) -> None:
        if self._aliases_added:
            return
        self._aliases_added = True
        from agentgym_suite.evaluation.sweep import sweep_aliases

        group = self.add_argument_group("older spellings of --sweep (declared by each benchmark's sweep)")
        for flag, sweep in sweep_aliases().items():
            group.add_argument(flag, default=None, dest=_alias_dest(flag), metavar=sweep.alias_metavar or "ARGS",
                               help=sweep.alias_help or f"alias of --sweep {sweep.name}:ARGS")

    _env_for_help: str | None = None

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """Parse, with the sweep aliases added (and, for ``eval ENV_ID --help``, the env's options)."""
        self._add_sweep_aliases()
        tokens = [str(t) for t in (sys.argv[1:] if args is None else args)]
        if "-h" in tokens or "--help" in tokens:
            self._env_for_help = next((t for t in tokens if not t.startswith("-")), None)
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        """The help, with the sweep aliases added and, after ``eval ENV_ID --help``, that env's
        own options (what ``--env-kwargs`` takes)."""
        self._add_sweep_aliases()
        text = super().format_help()
        if self._env_for_help:
            from agentgym_suite.commands.env_options import options_text

            text += "\n" + options_text(self._env_for_help) + "\n"
        else:
            text += "\nThe env's own options (category, domain, split...) go in --env-kwargs: `agentgym eval ENV_ID --help` " \
                    "or `agentgym list ENV_ID` lists them.\n"
        return text

    def format_usage(self) -> str:
        """The usage line, with the sweep aliases added."""
        self._add_sweep_aliases()
        return super().format_usage()


def _alias_dest(flag: str) -> str:
    """The argparse dest of an alias flag (``--bfcl-overall`` -> ``sweep_alias_bfcl_overall``)."""
    return "sweep_alias_" + flag.lstrip("-").replace("-", "_")


def _requested_sweep(args: argparse.Namespace) -> tuple[str, str, str] | None:
    """``(flag, sweep name, sweep args)`` of --sweep or one of its aliases; None for a plain evaluation."""
    from agentgym_suite.evaluation.sweep import parse_sweep, sweep_aliases

    given = [(flag, sweep.name, value) for flag, sweep in sweep_aliases().items()
             if (value := getattr(args, _alias_dest(flag), None)) is not None]
    if args.sweep is not None:
        given.append(("--sweep", *parse_sweep(args.sweep)))
    if len(given) > 1:
        raise ValueError(f"{' and '.join(g[0] for g in given)} are each a sweep; give one.")
    return given[0] if given else None


def _sweep(args: argparse.Namespace, request: tuple[str, str, str], env_kwargs: dict[str, Any],
           options: dict[str, Any]) -> int:
    """Run the requested sweep and print its aggregate (the table, or its data with --json)."""
    from rich.console import Console

    from agentgym_suite.evaluation.report import print_summary
    from agentgym_suite.evaluation.sweep import SWEEP_FILE, declared_sweeps, render_table, run_sweep

    flag, name, sweep_args = request
    sweeps = declared_sweeps(args.env_id)
    if name not in sweeps:
        offered = ", ".join(sweeps) or "none"
        if flag == "--sweep":
            raise ValueError(f"{args.env_id} declares no sweep {name!r}; its sweeps: {offered}.")
        raise ValueError(f"{flag} applies to envs that declare a {name!r} sweep; {args.env_id} has none "
                         f"(its sweeps: {offered}).")
    result = run_sweep(args.env_id, args.agent, sweeps[name], out_dir=args.out, args=sweep_args, env_kwargs=env_kwargs,
                       **options)
    outcome = result.outcome
    if args.json:
        print(json.dumps(outcome.data, indent=2, ensure_ascii=False, default=str))
    else:
        if outcome.table is None:
            for run in result.results.values():
                print_summary(run.summary)
        else:
            Console().print(render_table(outcome.table))
        for line in outcome.notes:
            print(line)
        written = [result.out_dir / file for file in (*outcome.files, SWEEP_FILE)]
        print(f"wrote {' and '.join(str(path) for path in written)}")
    if result.crashed and not args.allow_errors:
        print(f"agentgym eval: {result.crashed} episode(s) crashed; exiting with status {EXIT_CRASHED}.", file=sys.stderr)
        return EXIT_CRASHED
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the evaluation and print its summary."""
    from agentgym_suite.evaluation.report import print_summary
    from agentgym_suite.evaluation.runner import evaluate
    from agentgym_suite.rollout.workers import parse_env_workers

    show_warnings()
    try:
        env_kwargs = apply_user_and_judge(args.env_id, _parse_kwargs(args.env_kwargs), args.agent, args.user, args.judge)
        backend_options = client_options(args)
        if args.autocast:
            backend_options["autocast"] = args.autocast
        if args.batch_size is None:
            args.batch_size = default_batch_size(args.agent, backend_options)
        if args.max_context_tokens is not None and args.max_context_tokens < 1:
            raise ValueError(f"--max-context-tokens must be >= 1, got {args.max_context_tokens}.")
        extensions = extension_options(args)
        settings, sources = evaluation_settings(args.env_id, args)
        args.k = settings["k"]
        for name in ("k", "episodes", "max_turns", "batch_size"):
            value = getattr(args, name)
            if value is not None and value < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {value}.")
        if args.step_timeout is not None and not 0 < args.step_timeout < float("inf"):
            raise ValueError(f"--step-timeout must be a positive number of seconds (e.g. 30), got {args.step_timeout}.")
        try:
            workers = parse_env_workers(args.env_workers)  # parsed once here; the runner takes the value
        except ValueError as exc:
            raise ValueError(f"--env-workers: {exc}") from None
        options: dict[str, Any] = dict(
            episodes=args.episodes,
            k=args.k,
            seed=args.seed,
            max_turns=args.max_turns,
            prompt_format=args.prompt_format,
            retry_failed=args.retry_failed,
            step_timeout=args.step_timeout,
            batch_size=args.batch_size,
            env_workers=workers,
            progress=not args.no_progress,
            agent_options={"temperature": settings.get("temperature"), "max_new_tokens": settings.get("max_new_tokens"),
                           "max_context_tokens": args.max_context_tokens},
            settings_sources=sources,
            backend_options=backend_options or None,
            extensions=extensions or None,
        )
        calls = model_call_options(args)
        options.update(calls)
        request = _requested_sweep(args)
        if request is not None:
            return _sweep(args, request, env_kwargs, options)
        result = run_rescore(args, calls) if args.rescore is not None else \
            evaluate(args.env_id, args.agent, out_dir=args.out, env_kwargs=env_kwargs, **options)
    except (AgentGymError, ValueError, KeyError, ImportError, gym.error.Error) as exc:
        print(f"agentgym eval: {exc}", file=sys.stderr)
        return 2
    except TypeError as exc:  # gymnasium.make with a keyword the env does not take
        print(f"agentgym eval: {exc}. Check --env-kwargs against the env's documented arguments.", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.summary, indent=2))
    else:
        print_summary(result.summary)
        print(f"wrote {result.out_dir / 'trajectories.jsonl'} and {result.out_dir / 'summary.json'}")
    crashed = int(result.summary.get("crashed") or 0)
    if crashed and not args.allow_errors:
        print(f"agentgym eval: {crashed} episode(s) crashed (see 'crash_kinds' in summary.json); exiting with status "
              f"{EXIT_CRASHED}. Fix the cause and rerun with --retry-failed, or pass --allow-errors to accept them.",
              file=sys.stderr)
        return EXIT_CRASHED
    return 0
