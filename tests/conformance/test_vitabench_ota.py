"""VitaBench's OTA (travel) tools against upstream's outputs on the same call sequences.

``vitabench/inputs_ota.json`` holds small OTA databases made for this test in upstream's format
(upstream's OTA task files are not available) and call sequences on them: bookings of every kind
and perturbations (wrong ids, wrong arguments, another user, bad dates, extra writes, calls after
a failure, second payments and cancellations, tools of the wrong order type, modifications), and three cross-domain tasks
(``delivery,ota``, ``instore,ota``, ``delivery,instore,ota``) on one database holding every
domain's records, played through upstream's merged cross-domain environment.
``expected_ota_v1.json`` (meituan-longcat/vitabench, 30 OTA tools) and ``expected_ota_v2.json``
(meituan-longcat/VitaBench-2.0, plus 7 taxi tools) are what upstream answered and how its orders
and inventories ended (``regenerate_vitabench_ota.py``). Every result string, the final-state hash
and the tool parameter schemas must be equal. No benchmark data is needed.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.vitabench.records import TRAVEL_TABLES
from agentgym_suite.envs.vitabench.tools import VitaTools

HERE = Path(__file__).resolve().parent / "vitabench"
sys.path.insert(0, str(HERE))
from replay import canonical_tables, run_sequence  # noqa: E402

COMMITS = {"v1": "96f3b8529d8ea38d330de2405af7e32a1454f6cd", "v2": "f60169e89f30499cb7883f3dad76bd03facc908d"}
VERSIONS = {"v1": 1, "v2": 2}


def _load(name: str) -> dict[str, Any]:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


INPUTS = _load("inputs_ota.json")
EXPECTED = {v: _load(f"expected_ota_{v}.json") for v in VERSIONS}


def state(toolkit: Any) -> dict[str, dict[str, Any]]:
    """Orders and each inventory's (product, date, quantity) rows, as the regenerate script reads upstream's."""
    out: dict[str, dict[str, Any]] = {"orders": dict(toolkit.db["orders"])}
    for table in ("books", "reservations"):
        if table in toolkit.db:
            out[table] = dict(toolkit.db[table])
    for table in TRAVEL_TABLES:
        if table in toolkit.db:
            out[table] = {k: [[p["product_id"], p.get("date"), p["quantity"]] for p in v["products"]] for k, v in toolkit.db[table].items()}
    return out


def replay(version: str, name: str) -> list[str]:
    sequence = INPUTS["sequences"][name]
    domain = sequence.get("domain", "ota")
    toolkit = VitaTools("ota-fixture", domain, INPUTS["databases"][sequence["db"]], "english", version=VERSIONS[version])
    results, created = run_sequence(sequence["calls"], lambda tool, args: toolkit.call(tool, **args),
                                    lambda: {k for table in ("orders", "books", "reservations") for k in toolkit.db.get(table) or {}})
    want = EXPECTED[version]["results"][name]
    mismatches = [f"{name}#{i} {sequence['calls'][i][0]}:\n  ours:     {ours!r}\n  upstream: {theirs!r}"
                  for i, (ours, theirs) in enumerate(zip(results, want["results"])) if ours != theirs]
    if len(results) != len(want["results"]):
        mismatches.append(f"{name}: {len(results)} results, upstream {len(want['results'])}")
    if hashlib.sha256(canonical_tables(state(toolkit), created).encode()).hexdigest() != want["db_sha256"]:
        mismatches.append(f"{name}: final orders/inventories differ ({len(created)} created, upstream {want['created']})")
    return mismatches


CASES = [(v, n) for v in VERSIONS for n in INPUTS["sequences"] if "unloadable" not in EXPECTED[v]["results"][n]]


def test_fixtures_come_from_the_pinned_upstream_commits() -> None:
    for version, commit in COMMITS.items():
        assert INPUTS["upstream"][version]["commit"] == EXPECTED[version]["upstream"]["commit"] == commit
        assert set(EXPECTED[version]["results"]) == set(INPUTS["sequences"])
    unloadable = [n for n, r in EXPECTED["v1"]["results"].items() if "unloadable" in r]
    assert unloadable == ["taxi_order_reads"]  # version 1 has no taxi orders; its database refuses one
    assert len(CASES) == 2 * len(INPUTS["sequences"]) - 1


@pytest.mark.parametrize(("version", "name"), CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_results_and_final_state_equal_upstreams(version: str, name: str) -> None:
    mismatches = replay(version, name)
    assert not mismatches, "\n".join(mismatches[:10])


@pytest.mark.parametrize("version", VERSIONS)
def test_tool_parameters_equal_upstreams(version: str) -> None:
    def shape(parameters: dict[str, Any]) -> dict[str, Any]:
        props = {n: {k: v for k, v in p.items() if k in ("type", "items", "default")} for n, p in parameters.get("properties", {}).items()}
        return {"properties": props, "required": sorted(parameters.get("required") or [])}

    toolkit = VitaTools("t", "ota", {"time": "2025-07-01 09:00:00"}, version=VERSIONS[version])
    ours = {s["function"]["name"]: shape(s["function"]["parameters"]) for s in toolkit.schemas}
    theirs = {name: shape(p) for name, p in EXPECTED[version]["schemas"].items()}
    assert ours == theirs
    assert sorted(toolkit.tool_names()) == sorted(theirs)


@pytest.mark.parametrize("version", VERSIONS)
def test_cross_domain_tool_sets_equal_upstreams(version: str) -> None:
    for domain, names in EXPECTED[version]["cross_domain_tools"].items():
        toolkit = VitaTools("t", domain, {"time": "2025-07-01 09:00:00"}, version=VERSIONS[version])
        assert sorted(toolkit.tool_names()) == names, domain
        assert sorted(s["function"]["name"] for s in toolkit.schemas) == names, domain
