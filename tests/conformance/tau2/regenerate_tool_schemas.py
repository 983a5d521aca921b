"""Regenerate ``tool_schemas.json``: the OpenAI tool schemas τ²-bench shows its models, per domain and side.

Not run by pytest. Upstream's own registry builds each domain's environment; ``get_tools()`` (the agent's) and
``get_user_tools()`` (the customer's) give the tools, and each ``Tool.openai_schema`` is what upstream sends to
the model. Only a compact record is stored: per tool (in upstream's order) its name and the SHA-256 of the schema as canonical JSON
(sorted keys, no spaces, UTF-8). Two schemas are also stored as *layouts*, every text that
is upstream's prose (descriptions) replaced by ``"<text>"``, for the test that checks the schema builder on a
tools source of its own.

``tests/conformance/test_tau2_tool_schemas.py`` builds the schemas from upstream's tool sources kept as data
(``agentgym data fetch tau2``) and demands the same hashes.

Set up the scratch environment as ``README.md`` in this folder says, then::

    /work/scratch/tau2/venv/bin/python tests/conformance/tau2/regenerate_tool_schemas.py \\
        --upstream-src /work/scratch/tau2/src
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # run as a script, possibly from elsewhere
from schema_hash import blank_descriptions, canonical_hash  # noqa: E402

UPSTREAM_REPO = "github.com/sierra-research/tau2-bench"
DOMAINS = ("airline", "retail", "telecom", "mock", "banking_knowledge")
BANKING_RETRIEVAL = "bm25_grep"
"""The banking configuration recorded: the env's default (its agent gets ``KB_search`` and ``grep``)."""
LAYOUTS = (("airline", "agent", "book_reservation"), ("telecom", "user", "set_apn_settings"))
"""(domain, side, tool) whose schema layout is stored (descriptions blanked)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream-src", required=True, help="checkout of tau2-bench at the pinned commit (with data/)")
    src = Path(parser.parse_args().upstream_src)
    sys.path.insert(0, str(src / "src"))
    from tau2.registry import registry

    record: dict[str, Any] = {}
    layouts: list[dict[str, Any]] = []
    for domain in DOMAINS:
        if domain == "banking_knowledge":  # needs upstream's knowledge extra (rank_bm25), see README.md
            from tau2.domains.banking_knowledge.environment import get_environment

            env = get_environment(retrieval_variant=BANKING_RETRIEVAL)
        else:
            env = registry.get_env_constructor(domain)()
        sides = {"agent": env.get_tools(), "user": env.get_user_tools() if env.user_tools is not None else []}
        record[domain] = {}
        for side, tools in sides.items():
            record[domain][side] = {tool.name: canonical_hash(tool.openai_schema) for tool in tools}
            for tool in tools:
                if (domain, side, tool.name) in LAYOUTS:
                    layouts.append({"domain": domain, "side": side, "schema": blank_descriptions(tool.openai_schema)})
    commit = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    payload = {"upstream": {"repo": UPSTREAM_REPO, "commit": commit or "a2c024725189473d2d7cea3a5cfdbcc67478e41f",
                            "pydantic": version("pydantic"), "docstring_parser": version("docstring_parser"),
                            "banking_retrieval": BANKING_RETRIEVAL,
                            "how": "registry.get_env_constructor(domain)() (banking: get_environment(retrieval_variant)); Tool.openai_schema of get_tools() and "
                                   "get_user_tools(); sha256 of json.dumps(schema, sort_keys=True, separators=(',', ':'), "
                                   "ensure_ascii=False)"},
               "tools": record, "layouts": layouts}
    (HERE / "tool_schemas.json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(sum(len(tools) for sides in record.values() for tools in sides.values()), "tools recorded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
