"""``agentgym conformance``: replay the committed conformance cases through the installed suite.

Each env's card (``envs/<name>/card.py``) names its upstream harness and commit, what is checked
against upstream's own outputs (:attr:`~agentgym_suite.core.env_card.EnvCard.conformance`, the
same lines as the catalogue's conformance column) and the test files that hold those checks
(:attr:`~agentgym_suite.core.env_card.EnvCard.conformance_tests`). Methods that are not one env's
declare the same facts in their own homes (:class:`~agentgym_suite.core.conformance.MethodConformance`):
credit plug-ins as a class attribute, parts of the trainer on the trainer's bases; they are found by
walking the credit registry and the trainer class (:mod:`agentgym_suite.trainers.conformance`).

This command runs those files with pytest against whatever ``agentgym_suite`` and dependencies are
installed, and prints per env and per method: upstream code and commit, the number of cases run,
what they check, and the agreement. It exits 1 when any case disagrees (or cannot be collected), 2
on bad arguments or when the cases cannot be found, 0 otherwise.

The cases are the ``tests/conformance/`` folder of the source tree the suite is installed from
(``pip install -e``, as ``make`` installs it); ``--cases DIR`` or ``AGENTGYM_CONFORMANCE_CASES``
points to another checkout of the same version, or to its unpacked source distribution, which
carries the cases (``MANIFEST.in``) where the wheel does not (its root, the folder holding ``tests/``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_suite.registration import EnvEntry, entry, env_card, suite_entries
from agentgym_suite.trainers.conformance import DeclaredConformance, method_conformance

CASES_ENV_VAR = "AGENTGYM_CONFORMANCE_CASES"
"""Environment variable naming the source tree (the folder holding ``tests/conformance/``) to replay."""

OUTCOMES = ("passed", "failed", "skipped")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``conformance`` subcommand."""
    parser = subparsers.add_parser(
        "conformance",
        help="replay the committed conformance cases (upstream's own outputs) through the installed envs and methods",
        description=(
            "Runs each env's conformance tests (the files its card names) and each method's (credit plug-ins and "
            "trainer parts that declare them) against the installed suite and dependencies, and prints per env and "
            "method: the upstream code and commit, the number of cases, what they check and the agreement. The fast "
            "set by default; --full adds the slow cases (every entry, every task). Exit status 1 when any case "
            "disagrees."
        ),
    )
    parser.add_argument("env_ids", nargs="*", metavar="ID",
                        help="env ids and method ids (credit:NAME, trainer:NAME) to check (default: every env whose "
                             "card names conformance tests and every method that declares some)")
    parser.add_argument("--full", action="store_true", help="also run the slow cases (pytest marker 'slow')")
    parser.add_argument("--cases", metavar="DIR", default=None,
                        help=f"source tree or unpacked sdist holding tests/conformance/ (default: ${CASES_ENV_VAR}, else the tree "
                             "agentgym_suite is installed from)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
    parser.add_argument("--verbose", action="store_true", help="show pytest's own output")
    parser.set_defaults(func=run)


@dataclass
class FileResult:
    """What one conformance test file gave: outcome counts, skip reasons and failure excerpts."""

    counts: Counter = field(default_factory=Counter)
    skip_reasons: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)


class ResultCollector:
    """A pytest plugin that sorts every test outcome by the file it comes from."""

    def __init__(self) -> None:
        self.files: dict[str, FileResult] = {}

    def _file(self, nodeid: str) -> FileResult:
        return self.files.setdefault(nodeid.split("::", 1)[0], FileResult())

    def pytest_collectreport(self, report: Any) -> None:
        """A file that cannot be collected counts as one failed case."""
        if report.failed:
            result = self._file(report.nodeid)
            result.counts["failed"] += 1
            result.failures.append(f"{report.nodeid}: collection failed\n{_excerpt(report)}")

    def pytest_runtest_logreport(self, report: Any) -> None:
        """One case's outcome: its call's, or its setup's when that failed or skipped."""
        result = self._file(report.nodeid)
        if report.when == "call" or (report.when == "setup" and not report.passed):
            outcome = "failed" if report.failed else report.outcome
            result.counts[outcome] += 1
            if report.skipped:
                result.skip_reasons[_skip_reason(report)] += 1
            elif report.failed:
                result.failures.append(f"{report.nodeid}\n{_excerpt(report)}")
        elif report.when == "teardown" and report.failed:
            result.counts["failed"] += 1
            result.failures.append(f"{report.nodeid} (teardown)\n{_excerpt(report)}")


def _skip_reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _excerpt(report: Any, lines: int = 12) -> str:
    text = getattr(report, "longreprtext", "") or str(report.longrepr)
    return "\n".join(text.splitlines()[-lines:])


def default_cases_root() -> Path | None:
    """The source tree the installed ``agentgym_suite`` lives in, when it holds ``tests/conformance/``."""
    import agentgym_suite

    root = Path(agentgym_suite.__file__).resolve().parents[1]
    return root if (root / "tests" / "conformance").is_dir() else None


def cases_root(explicit: str | None) -> Path:
    """Where the cases are: ``explicit``, else ``$AGENTGYM_CONFORMANCE_CASES``, else the install's source tree."""
    given = explicit or os.environ.get(CASES_ENV_VAR)
    if given:
        root = Path(given).expanduser().resolve()
        if not (root / "tests" / "conformance").is_dir():
            raise FileNotFoundError(f"{root} holds no tests/conformance/ folder: pass the root of an agentgym-suite "
                                    "checkout (the folder holding tests/).")
        return root
    root = default_cases_root()
    if root is None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("agentgym-suite")
        except PackageNotFoundError:
            installed = "VERSION"
        raise FileNotFoundError(
            "The conformance cases were not found next to the installed agentgym_suite (a wheel carries no tests; "
            "the source distribution of the same version does). Fetch and unpack it, then pass its folder:\n"
            f"  pip download --no-deps --no-binary agentgym-suite agentgym-suite=={installed} -d sdist\n"
            f"  tar xzf sdist/agentgym_suite-{installed}.tar.gz\n"
            f"  agentgym conformance --cases agentgym_suite-{installed}\n"
            f"(or set {CASES_ENV_VAR}, or pass a checkout of that version, or install with `pip install -e`).")
    return root


def selected_entries(env_ids: list[str]) -> list[EnvEntry]:
    """The entries to check: the named ones (unknown ids raise KeyError), or every one whose card names tests."""
    if env_ids:
        return [entry(env_id) for env_id in env_ids]
    return [item for item in suite_entries() if (card := env_card(item)) is not None and card.conformance_tests]


def is_method_id(name: str) -> bool:
    """True for a method id (``kind:name``); env ids hold no colon."""
    return ":" in name


def selected(ids: list[str]) -> tuple[list[EnvEntry], list[DeclaredConformance]]:
    """The envs and methods to check: those ``ids`` name, or every env whose card names tests and every
    method declaration. An unknown env id raises KeyError (with the registry's suggestion), an unknown
    method id KeyError listing the declared ones."""
    if not ids:
        return selected_entries([]), method_conformance()
    envs = [entry(name) for name in ids if not is_method_id(name)]
    wanted = [name for name in ids if is_method_id(name)]
    if not wanted:
        return envs, []
    declared = {d.id: d for d in method_conformance(tuple({name.split(":", 1)[0] for name in wanted}))}
    unknown = [name for name in wanted if name not in declared]
    if unknown:
        raise KeyError(f"no method declares conformance as {', '.join(map(repr, unknown))}; declared: "
                       f"{', '.join(declared) or 'none'}.")
    return envs, [declared[name] for name in dict.fromkeys(wanted)]


def run_cases(root: Path, files: list[str], full: bool, verbose: bool) -> dict[str, FileResult]:
    """Run ``files`` (paths from ``root``) with pytest in this process; results by file."""
    import pytest

    collector = ResultCollector()
    arguments = [*(str(root / f) for f in files), "--rootdir", str(root), "-o", "addopts=",
                 "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestUnknownMarkWarning"]
    if not full:
        arguments += ["-m", "not slow"]
    arguments += ["-q"] if verbose else ["-p", "no:terminal"]
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))  # the cases import their helpers as tests.conformance.*
    status = pytest.main(arguments, plugins=[collector])
    if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        raise RuntimeError(f"pytest could not run the cases (exit status {int(status)}); rerun with --verbose to see why.")
    return collector.files


def env_report(item: EnvEntry, results: dict[str, FileResult]) -> dict[str, Any]:
    """One env's row: its card's upstream facts and checks, and the outcomes of its test files."""
    card = env_card(item)
    report: dict[str, Any] = {"env_id": item.id, "upstream": card.upstream if card else "",
                              "version": card.version if card else "", "checks": list(card.conformance) if card else []}
    unchecked = "not checked: " + ((card.unchecked if card else "") or "no conformance cases")
    return _outcomes(report, card.conformance_tests if card else (), results, unchecked)


def method_report(declared: DeclaredConformance, results: dict[str, FileResult]) -> dict[str, Any]:
    """One method's row: its declaration's upstream facts and checks, and the outcomes of its test files."""
    conformance = declared.conformance
    report: dict[str, Any] = {"id": declared.id, "kind": declared.kind, "subject": conformance.subject,
                              "declared_by": declared.declared_by, "upstream": conformance.upstream,
                              "version": conformance.version, "checks": list(conformance.checks)}
    return _outcomes(report, conformance.tests, results, "not checked: no conformance cases")


def _outcomes(report: dict[str, Any], tests: tuple[str, ...], results: dict[str, FileResult],
              unchecked: str) -> dict[str, Any]:
    """``report`` completed with the counts, failures and agreement of ``tests``."""
    report.update(files={}, failures=[])
    totals: Counter = Counter()
    skip_reasons: Counter = Counter()
    for path in tests:
        result = results.get(path, FileResult())
        report["files"][path] = {k: result.counts[k] for k in OUTCOMES}
        totals.update(result.counts)
        skip_reasons.update(result.skip_reasons)
        report["failures"] += result.failures
    report.update({k: totals[k] for k in OUTCOMES})
    report["cases"] = totals["passed"] + totals["failed"]
    report["skip_reasons"] = dict(skip_reasons)
    if not tests:
        report["agreement"] = unchecked
    elif totals["failed"]:
        report["agreement"] = f"DISAGREES: {totals['failed']} of {report['cases']} tests"
    elif report["cases"]:
        report["agreement"] = f"agrees: {report['cases']} of {report['cases']} tests"
    else:
        report["agreement"] = "not checked here: every test skipped"
    return report


def print_report(reports: list[dict[str, Any]], full: bool) -> None:
    """Print one block per env and per method."""
    for report in reports:
        title = report["env_id"] if "env_id" in report else f"{report['id']} ({report['subject']})"
        print(f"{title}: {report['agreement']}")
        if report["upstream"]:
            print(f"  upstream: {report['upstream']} ({report['version']})")
        for check in report["checks"]:
            print(f"  checks: {check}")
        for path, counts in report["files"].items():
            print(f"  cases: {path}: " + ", ".join(f"{counts[k]} {k}" for k in OUTCOMES if counts[k]) if any(
                counts.values()) else f"  cases: {path}: none ran")
        for reason, count in report["skip_reasons"].items():
            print(f"  skipped ({count}): {reason}")
        for failure in report["failures"]:
            print("  " + failure.replace("\n", "\n    "))
    print(f"{'full' if full else 'fast'} set; {sum(r['cases'] for r in reports)} tests, "
          f"{sum(r['failed'] for r in reports)} disagreements" + ("" if full else " (--full adds the slow cases)"))


def run(args: argparse.Namespace) -> int:
    """Find the cases, run them, print the report; 1 when any case disagrees."""
    try:
        entries, methods = selected(args.env_ids)
        root = cases_root(args.cases)
    except (KeyError, FileNotFoundError, ValueError) as exc:
        print(f"agentgym conformance: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    files = sorted({path for item in entries if (card := env_card(item)) for path in card.conformance_tests}
                   | {path for declared in methods for path in declared.conformance.tests})
    missing = [path for path in files if not (root / path).is_file()]
    if missing:
        print(f"agentgym conformance: {root} lacks {', '.join(missing)}: pass --cases with a checkout of the "
              "installed version.", file=sys.stderr)
        return 2
    try:
        results = run_cases(root, files, args.full, args.verbose) if files else {}
    except RuntimeError as exc:
        print(f"agentgym conformance: {exc}", file=sys.stderr)
        return 1
    reports = [env_report(item, results) for item in entries]
    method_reports = [method_report(declared, results) for declared in methods]
    if args.json:
        print(json.dumps({"full": args.full, "cases_root": str(root), "envs": reports, "methods": method_reports},
                         indent=2))
    else:
        print_report(reports + method_reports, args.full)
    return 1 if any(r["failed"] for r in reports + method_reports) else 0
