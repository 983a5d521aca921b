"""tau2-bench's data: the domains and user-simulator files of the pinned upstream commit."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource, RemoteFile

TOOL_SOURCES: dict[tuple[str, str], tuple[str, ...]] = {
    ("airline", "agent"): ("tools_source.py", "data_model_source.py"),
    ("retail", "agent"): ("tools_source.py",),
    ("telecom", "agent"): ("tools_source.py",),
    ("telecom", "user"): ("user_tools_source.py", "user_data_model_source.py"),
    ("mock", "agent"): ("tools_source.py", "data_model_source.py"),
    ("mock", "user"): ("user_tools_source.py",),
    ("banking_knowledge", "agent"): ("retrieval_mixins_source.py", "tools_source.py"),
    ("banking_knowledge", "user"): ("tools_source.py",),
}
"""(domain, side) -> the files under ``domains/<domain>/`` holding upstream's tool source: first the tools file, then
the data-model files whose types its signatures name (banking_knowledge: its retrieval tools' file, then the tools file,
whose agent and customer toolkits are told apart by class, see ``envs/tau2/tool_source.py``). Each is upstream's ``src/tau2/domains/<domain>/<name>`` without
``_source`` (kept under another name so that nothing mistakes it for code of this package)."""

_TAU2 = "https://github.com/sierra-research/tau2-bench/archive/a2c024725189473d2d7cea3a5cfdbcc67478e41f.tar.gz"

SOURCE = DataSource(
    "tau2",
    files=(RemoteFile(_TAU2, ".", archive_members={
        "data/tau2/domains/": "domains/", "data/tau2/user_simulator/": "user_simulator/",
        # the banking domain's discoverable tools are described to the agent by their docstrings in upstream's source:
        # the file is data here (parsed, never run; see envs/tau2/banking/tool_docs.py)
        "src/tau2/domains/banking_knowledge/tools.py": "domains/banking_knowledge/tools_source.py",
        # every domain's tools are described to the models by their docstrings and signatures: those sources are
        # data here too (parsed, never run; see envs/tau2/tool_source.py)
        **{f"src/tau2/domains/{domain}/{name.replace('_source', '')}": f"domains/{domain}/{name}"
           for (domain, _side), names in TOOL_SOURCES.items() for name in names}}),),
    known_blobs={
        "domains/airline/policy.md": "8098be7db3f4",
        "domains/airline/tasks.json": "ea4ff5e3f5e3",
        "domains/airline/split_tasks.json": "c83cce155671",
        "domains/retail/db.json": "4d67b03b2d39",
        "domains/retail/policy.md": "d127e6b07465",
        "domains/retail/tasks.json": "e95a9f898b2d",
        "domains/retail/split_tasks.json": "8b20704a17aa",
        "domains/banking_knowledge/db.json": "91f450a39a0d",
        "domains/banking_knowledge/tasks.json": "5da00be9f9b3",
        "domains/banking_knowledge/tools_source.py": "60ed2208905a",
        "domains/airline/tools_source.py": "adc5c09a155d",
        "domains/airline/data_model_source.py": "1b65884c1034",
        "domains/retail/tools_source.py": "eba01ab32dca",
        "domains/telecom/tools_source.py": "c531b4c71723",
        "domains/telecom/user_tools_source.py": "a79447b0af1a",
        "domains/telecom/user_data_model_source.py": "78288cfc3f27",
        "domains/mock/tools_source.py": "a4430b1e1c4d",
        "domains/mock/user_tools_source.py": "22dc2fee3abd",
        "domains/mock/data_model_source.py": "e66200599b8d",
        "domains/banking_knowledge/retrieval_mixins_source.py": "edd7c246eb58",
    },
    required=("domains",),
)
"""Where tau2-bench's files come from and which folder the env needs."""
