"""No model output can reach eval/exec/a shell: an AST scan of the package for dangerous calls.

Flagged: ``eval``/``exec``/``compile`` builtins, ``os.system``/``os.popen``/``os.exec*``/``os.spawn*``,
``subprocess`` calls with ``shell=True``, ``pickle``/``marshal``/``dill`` loads, ``yaml.load``
without a safe loader, and ``__import__``/``importlib.import_module`` on a non-literal name.
A justified use goes in :data:`ALLOWED` with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agentgym_suite

PACKAGE = Path(agentgym_suite.__file__).resolve().parent

ALLOWED: dict[tuple[str, str], str] = {
    # (path relative to the package, call): why it is safe
    ("cli.py", "importlib.import_module(<non-literal>)"): "names built from the fixed COMMANDS tuple",
    ("envs/bfcl/backends.py", "importlib.import_module(<non-literal>)"):
        "module names looked up in the fixed BACKEND_MODULES table; unknown class names are refused first",
    ("envs/bfcl/memory.py", "importlib.import_module(<non-literal>)"):
        "bfcl-eval's memory backend modules from the fixed MEMORY_MODULES table",
    ("envs/bfcl/upstream.py", "importlib.import_module(<non-literal>)"):
        "bfcl-eval checker/leaderboard modules named by literals at the call sites (import_with_model_table)",
    ("envs/bfcl/web_search.py", "importlib.import_module(<non-literal>)"):
        "the web-search backend class the user names (web_search_backend='module:Class' or its env var), as "
        "credit plug-ins are named; never model text",
    ("llm/__init__.py", "importlib.import_module(<non-literal>)"): "lazy attributes from the fixed _LAZY table",
    ("trainers/credit/registry.py", "importlib.import_module(<non-literal>)"):
        "the credit plug-in's import path from the user's training config (`credit: module:Class`), as TRL "
        "imports reward functions; the class must be a CreditAssigner",
    ("evaluation/sweep.py", "importlib.import_module(<non-literal>)"):
        "the 'module:factory' paths an env class declares in code through its sweeps() hook; never model text",
    ("registration.py", "importlib.import_module(<non-literal>)"):
        "the data_source module of an EnvEntry: registered in code (ENV_ENTRIES or register_entry), never model text",
    ("evaluation/extensions.py", "importlib.import_module(<non-literal>)"):
        "the 'module:attr' eval_extension an EnvEntry declares in code (registered, or a plug-in distribution's "
        "entry point the user installed); never model text",
    ("integrations/mcp/__init__.py", "importlib.import_module(<non-literal>)"): "lazy attributes from the fixed _EXPORTS table",
    ("methods/envace/__init__.py", "importlib.import_module(<non-literal>)"): "lazy attributes from the fixed _EXPORTS table",
    ("core/plugins.py", "importlib.import_module(<non-literal>)"):
        "the suite's own method packages (found by walking agentgym_suite/methods/) and the 'module:attribute' entry "
        "points their ENTRY_POINTS declare in code; never model text",
    ("integrations/verifiers/__init__.py", "importlib.import_module(<non-literal>)"):
        "lazy attributes from the fixed _EXPORTS table",
    ("integrations/mcp/tasks.py", "importlib.import_module(<non-literal>)"):
        "the verifier a task file names as 'module:function' (the user's own file, as `credit: module:Class`); "
        "never model text",
    ("trainers/trl_seam.py", "importlib.import_module(<non-literal>)"):
        "TRL module names from the fixed INTERNAL_IMPORTS table, to check that they still exist",
    ("envs/tau2/data.py", "pickle.loads"):
        "deep copies of databases this process pickled itself from the JSON data files (pickle.dumps in load_domain)",
    ("rollout/workers/calls.py", "pickle.loads"):
        "a round trip of an exception this process just pickled itself, to test that it can cross a process boundary",
    ("rollout/workers/host.py", "cloudpickle.loads"):
        "requests (env factories, actions) from the pool that started this worker, over its private pipe or Ray "
        "actor call; model text travels inside them as plain strings and is never unpickled as code",
    ("rollout/workers/remote.py", "cloudpickle.loads"):
        "answers from env workers this pool started itself (their private pipes or Ray actors)",
}
"""Audited exceptions; each value says why the call never sees model output."""

BUILTINS = {"eval", "exec", "compile", "__import__"}
OS_CALLS = {"system", "popen", "execv", "execve", "execl", "execlp", "execvp", "execvpe", "spawnl", "spawnv",
            "spawnlp", "spawnvp", "startfile"}
SUBPROCESS_CALLS = {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"}
UNSAFE_LOADS = {("pickle", "loads"), ("pickle", "load"), ("marshal", "loads"), ("marshal", "load"),
                ("dill", "loads"), ("dill", "load"), ("cloudpickle", "loads"), ("shelve", "open")}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


def _problems(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        head, _, last = name.rpartition(".")
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        if name in BUILTINS or name in {"builtins.eval", "builtins.exec"}:
            literal = name == "__import__" and node.args and isinstance(node.args[0], ast.Constant)
            if not literal:
                found.append((node.lineno, name))
        elif head == "os" and last in OS_CALLS:
            found.append((node.lineno, name))
        elif head == "subprocess" and last in SUBPROCESS_CALLS:
            shell = keywords.get("shell")
            if shell is not None and not (isinstance(shell, ast.Constant) and shell.value is False):
                found.append((node.lineno, f"{name}(shell=...)"))
            if last in {"getoutput", "getstatusoutput"}:
                found.append((node.lineno, name))
        elif (head.rpartition(".")[2], last) in UNSAFE_LOADS:
            found.append((node.lineno, name))
        elif name == "yaml.load" and "Loader" not in keywords:
            found.append((node.lineno, name))
        elif name in {"importlib.import_module", "import_module"} and node.args \
                and not isinstance(node.args[0], ast.Constant):
            found.append((node.lineno, f"{name}(<non-literal>)"))
    return found


def scan(root: Path = PACKAGE) -> list[str]:
    """Offending calls as ``path:line: call`` (audited ones in :data:`ALLOWED` left out)."""
    offenders = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, call in _problems(tree):
            if (relative, call) not in ALLOWED:
                offenders.append(f"{relative}:{line}: {call}")
    return offenders


def test_scanner_catches_each_pattern() -> None:
    source = "\n".join([
        "import os, subprocess, pickle, yaml, importlib",
        "eval(x)", "exec(x)", "os.system(x)", "subprocess.run(x, shell=True)", "pickle.loads(x)",
        "yaml.load(x)", "importlib.import_module(name)", "subprocess.run(['ls'])",
        "yaml.load(x, Loader=yaml.SafeLoader)", "importlib.import_module('json')", "subprocess.run(x, shell=False)",
    ])
    calls = [call for _, call in _problems(ast.parse(source))]
    assert calls == ["eval", "exec", "os.system", "subprocess.run(shell=...)", "pickle.loads", "yaml.load",
                     "importlib.import_module(<non-literal>)"]


def test_package_has_no_dangerous_calls() -> None:
    offenders = scan()
    assert not offenders, (
        "calls that could run model output as code or a shell command:\n  " + "\n  ".join(offenders)
        + "\nRemove them, or audit and list them in ALLOWED with the reason."
    )


def test_allow_list_has_no_stale_entries() -> None:
    live = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        live |= {(relative, call) for _, call in _problems(ast.parse(path.read_text(encoding="utf-8")))}
    assert set(ALLOWED) <= live, f"ALLOWED lists calls that no longer exist: {sorted(set(ALLOWED) - live)}"
