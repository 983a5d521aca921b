"""Regenerate VitaBench's conformance inputs and upstream's outputs on them (not run by pytest).

Two steps:

1. ``inputs`` (the suite's virtualenv): for every delivery and in-store task, the gold calls
   the suite's oracle plans (:func:`agentgym_suite.envs.vitabench.oracle.plan_calls`) and
   perturbations of them (a step dropped, a wrong argument, an invalid argument followed by
   the gold calls, wrong ids, another user's id, a time in the past, an extra write, a call
   after a failure, wrong argument types, unknown tools, the read tools) ->
   ``inputs_<domain>.json`` (``inputs_delivery_zh.json``: the first Chinese delivery tasks,
   when ``tasks.json`` is in the data folder)::

       AGENTGYM_DATA=/work/shared/data .venv/bin/python tests/conformance/vitabench/regenerate_vitabench.py inputs

2. ``expected`` (a virtualenv with upstream installed, meituan-longcat/vitabench at
   ``UPSTREAM_COMMIT``; run from its checkout with ``PYTHONPATH=src`` and
   ``VITA_MODEL_CONFIG_PATH`` pointing at any YAML file): builds upstream's environment for each
   task and sequence (registries cleared first, as upstream's runner clears its store and product
   registries before a task; its address registry is cleared too, so only the task's own
   addresses are known), sends every call through ``Environment.get_response`` and records the
   result strings, a hash of the final order/book/reservation tables and upstream's tool
   parameter schemas -> ``expected_<domain>.json`` and ``upstream_schemas.json``::

       cd /work/scratch/vita && VITA_MODEL_CONFIG_PATH=/tmp/models.yaml PYTHONPATH=src \\
         venv/bin/python /path/to/tests/conformance/vitabench/regenerate_vitabench.py expected --data /work/shared/data/vitabench

   With ``--version v2`` (run from a VitaBench-2.0 checkout at ``V2_COMMIT``) the first
   ``V2_TASKS`` English tasks of each domain go through 2.0's tools -> ``expected_<domain>_v2.json``
   (with 2.0's tool parameter schemas).

Upstream's evaluator has no state check that runs without a model (its expected states are
rubric text for the LLM judge), so no upstream verdict is recorded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from replay import canonical_tables, run_sequence  # noqa: E402

UPSTREAM = "meituan-longcat/vitabench"
UPSTREAM_COMMIT = "96f3b8529d8ea38d330de2405af7e32a1454f6cd"
DOMAINS = ("delivery", "instore")
SETS = (("delivery", "english"), ("instore", "english"), ("delivery", "chinese"))
"""(domain, language) played; upstream's snapshot carries no Chinese in-store tasks."""
CHINESE_TASKS = 30
"""The Chinese set plays the first tasks only (its results are kept small)."""
TASK_FILE = {"english": "tasks_en.json", "chinese": "tasks.json"}


def suffix(domain: str, language: str) -> str:
    """``delivery``, ``instore``, ``delivery_zh``: the fixture files' name part."""
    return domain + ("_zh" if language == "chinese" else "")
CREATORS = ("create_delivery_order", "create_instore_product_order", "instore_book", "instore_reservation")
FMT = "%Y-%m-%d %H:%M:%S"


def _tasks(data: Path, domain: str, language: str = "english") -> list[dict[str, Any]]:
    tasks = json.loads((data / "domains" / domain / TASK_FILE[language]).read_text(encoding="utf-8"))
    return tasks if language == "english" else tasks[:CHINESE_TASKS]


# ---------------------------------------------------------------------------- step 1: inputs
def _gold(domain: str, task: dict[str, Any]) -> list[list[Any]]:
    from agentgym_suite.envs.vitabench.oracle import plan_calls

    states = (task.get("evaluation_criteria") or {}).get("expected_states") or []
    if not states:
        return []
    calls: list[list[Any]] = []
    created = 0
    for name, args, then in plan_calls(domain, states[0], task["environment"], task["environment"]):
        calls.append([name, args])
        if name in CREATORS:
            created += 1
            if then:
                calls.append([then, {"book_id" if then == "pay_instore_book" else "order_id": f"$NEW{created}"}])
    return calls


def _first_creator(gold: list[list[Any]]) -> int | None:
    return next((i for i, (name, _) in enumerate(gold) if name in CREATORS), None)


def _with(gold: list[list[Any]], index: int, **changes: Any) -> list[list[Any]]:
    out = [[n, dict(a)] for n, a in gold]
    out[index][1].update(changes)
    return out


def _count_change(name: str, args: dict[str, Any], delta: int) -> dict[str, Any]:
    if name == "create_delivery_order":
        return {"product_cnts": [max(0, c + delta) if i == 0 else c for i, c in enumerate(args["product_cnts"])]}
    if name == "create_instore_product_order":
        return {"quantity": max(0, args["quantity"] + delta)}
    return {"customer_count": max(0, args["customer_count"] + delta)}


def _reads(domain: str, task: dict[str, Any], language: str = "english") -> list[list[Any]]:
    env = task["environment"]
    user, now = env["user_id"], env["time"]
    day = now[:10]
    places = env.get("stores") if domain == "delivery" else env.get("shops")
    first_id, first = next(iter(places.items()))
    name = first.get("name") or first.get("shop_name") or ""
    product = (first.get("products") or [{}])[0].get("product_id", "P-none")
    loc = first["location"]
    address = (env.get("location") or [{"address": loc["address"]}])[0]["address"]
    city = (env.get("weather") or [{"city": "Beijing"}])[0]["city"]
    calls: list[list[Any]] = [
        ["get_user_historical_behaviors", {}], ["get_user_all_orders", {}],
        ["address_to_longitude_latitude", {"address": address}], ["address_to_longitude_latitude", {"address": address[: len(address) // 2]}],
        ["address_to_longitude_latitude", {"address": "Nowhere Street 1, Atlantis"}],
        ["weather", {"address": city, "date_start": day, "date_end": day}],
        ["weather", {"address": city, "date_start": day, "date_end": (datetime.strptime(day, "%Y-%m-%d") + timedelta(days=3)).strftime("%Y-%m-%d")}],
        ["weather", {"address": "Zzyzx", "date_start": day, "date_end": day}], ["weather", {"address": city, "date_start": "06/21/2025", "date_end": day}],
        ["get_date_holiday_info", {"date": day}], ["get_date_holiday_info", {"date": "2025-10-01"}], ["get_date_holiday_info", {"date": "tomorrow"}],
        ["get_holiday_date", {"year": "2025", "holiday_name": "Mid-Autumn"}], ["get_holiday_date", {"year": "2025", "holiday_name": "Easter"}],
        ["get_holiday_date", {"year": "2022", "holiday_name": "National Day"}], ["get_holiday_date", {"year": 2025, "holiday_name": "National Day"}],
        ["get_nearby", {"longitude": loc["longitude"], "latitude": loc["latitude"], "range": 2000}],
        ["get_nearby", {"longitude": 0.0, "latitude": 0.0, "range": 10}],
        ["longitude_latitude_to_distance", {"longitude1": loc["longitude"], "latitude1": loc["latitude"], "longitude2": 116.4, "latitude2": 39.9}],
        ["longitude_latitude_to_distance", {"longitude1": 1, "latitude1": 2, "longitude2": 1, "latitude2": 2}],
        ["longitude_latitude_to_distance", {"longitude1": "116.4", "latitude1": 39.9, "longitude2": 116.5, "latitude2": 39.9}],
        ["no_such_tool", {"x": 1}],
    ]
    if language == "chinese":
        calls += [["get_holiday_date", {"year": "2025", "holiday_name": "中秋"}], ["get_holiday_date", {"year": "2024", "holiday_name": "端午节"}],
                  ["delivery_store_search_recommand", {"keywords": ["米线"]}], ["delivery_product_search_recommand", {"keywords": ["清淡", "米线"]}]]
    if domain == "delivery":
        calls += [
            ["delivery_store_search_recommand", {"keywords": name.split()[:2] or ["rice"]}], ["delivery_store_search_recommand", {"keywords": "noodles"}],
            ["delivery_product_search_recommand", {"keywords": ["rice", "noodles"]}],
            ["get_delivery_store_info", {"store_id": first_id}], ["get_delivery_store_info", {"store_id": "S-none"}],
            ["get_delivery_product_info", {"product_id": product}], ["get_delivery_product_info", {"product_id": "P-none"}],
            ["delivery_distance_to_time", {"distance": 3456.7}], ["delivery_distance_to_time", {"distance": "3456"}],
            ["search_delivery_orders", {"user_id": user}], ["search_delivery_orders", {"user_id": user, "status": "delivered"}],
            ["search_delivery_orders", {"user_id": "U999999"}], ["search_delivery_orders", {"user_id": ""}],
        ]
        for oid in list(env.get("orders", {}))[:2]:
            calls += [["get_delivery_order_status", {"order_id": oid}], ["get_delivery_order_detail", {"order_id": oid}],
                      ["modify_delivery_order", {"order_id": oid, "note": "no cilantro"}], ["pay_delivery_order", {"order_id": oid}],
                      ["cancel_delivery_order", {"order_id": oid}], ["cancel_delivery_order", {"order_id": oid}]]
        calls += [["get_delivery_order_detail", {"order_id": "OT0000000000"}], ["get_delivery_order_detail", {"order_id": ""}],
                  ["get_delivery_order_status", {"order_id": "OT0000000000"}], ["modify_delivery_order", {"order_id": "OT0000000000"}],
                  ["get_user_all_orders", {}]]
    else:
        calls += [
            ["instore_shop_search_recommend", {"keywords": name.split()[:2] or ["spa"]}], ["instore_shop_search_recommend", {"keywords": "hotpot"}],
            ["instore_product_search_recommend", {"keywords": ["voucher"]}],
            ["get_instore_orders", {"user_id": user}], ["get_instore_orders", {"user_id": "U999999"}],
            ["get_instore_books", {"user_id": user}], ["get_instore_reservations", {"user_id": user}],
            ["search_instore_book", {"user_id": user}], ["search_instore_reservation", {"user_id": user}],
            ["search_instore_book", {"user_id": user, "book_id": "OI0000000000"}],
            ["search_instore_reservation", {"user_id": user, "reservation_id": "OI0000000000"}],
            ["instore_book", {"user_id": user, "shop_id": first_id, "time": now, "customer_count": 2}],
            ["instore_reservation", {"user_id": user, "shop_id": first_id, "time": now, "customer_count": 2}],
            ["search_instore_book", {"user_id": user, "book_id": "$NEW1"}],
            ["search_instore_reservation", {"user_id": user, "reservation_id": "$NEW2"}],
            ["search_instore_reservation", {"user_id": user, "reservation_id": "$NEW1"}],
            ["instore_modify_reservation", {"reservation_id": "$NEW2", "time": now}],
            ["instore_modify_reservation", {"reservation_id": "$NEW2", "time": "next week", "customer_count": 3}],
            ["instore_modify_reservation", {"reservation_id": "$NEW1", "time": now, "customer_count": 3}],
            ["instore_cancel_reservation", {"reservation_id": "$NEW2"}], ["instore_cancel_reservation", {"reservation_id": "$NEW2"}],
            ["instore_modify_reservation", {"reservation_id": "$NEW2", "time": now, "customer_count": 3}],
            ["pay_instore_book", {"book_id": "$NEW1"}], ["instore_cancel_book", {"book_id": "$NEW1"}], ["instore_cancel_book", {"book_id": "$NEW1"}],
            ["pay_instore_book", {"book_id": ""}], ["pay_instore_order", {"order_id": "OI0000000000"}],
            ["create_instore_product_order", {"user_id": user, "shop_id": first_id, "product_id": product, "quantity": 2}],
            ["create_instore_product_order", {"user_id": user, "shop_id": first_id, "product_id": product}],
            ["get_instore_orders", {"user_id": user}], ["instore_cancel_order", {"order_id": "$NEW3"}],
            ["pay_instore_order", {"order_id": "$NEW3"}], ["instore_cancel_order", {"order_id": "$NEW3"}],
            ["create_instore_product_order", {"user_id": user, "shop_id": first_id, "product_id": "P-none"}],
            ["create_instore_product_order", {"user_id": user, "shop_id": first_id, "product_id": product, "quantity": "2"}],
            ["instore_book", {"user_id": user, "shop_id": first_id, "time": "2025-13-01 10:00:00"}],
            ["instore_reservation", {"user_id": user, "shop_id": "S-none", "time": now}],
            ["get_instore_books", {"user_id": user}], ["get_instore_reservations", {"user_id": user}], ["get_user_all_orders", {}],
        ]
        for oid in list(env.get("orders", {}))[:2]:
            calls += [["pay_instore_order", {"order_id": oid}], ["instore_cancel_order", {"order_id": oid}]]
    return calls


def sequences(domain: str, task: dict[str, Any], language: str = "english") -> dict[str, list[list[Any]]]:
    """The named call sequences played on ``task``."""
    env = task["environment"]
    gold = _gold(domain, task)
    out: dict[str, list[list[Any]]] = {"gold": gold, "reads": _reads(domain, task, language)}
    if len(gold) > 1:
        out["drop_last"] = gold[:-1]
        out["drop_first"] = gold[1:]
    first = _first_creator(gold)
    if first is not None:
        name, args = gold[first]
        past = (datetime.strptime(env["time"], FMT) - timedelta(days=1)).strftime(FMT)
        time_key = "dispatch_time" if name == "create_delivery_order" else "time" if name != "create_instore_product_order" else None
        out["wrong_argument"] = _with(gold, first, **_count_change(name, args, 1))
        out["invalid_argument_then_gold"] = [[name, {**args, **_count_change(name, args, -10_000)}], *gold]
        out["other_user"] = _with(gold, first, user_id="U999999")
        out["empty_user"] = _with(gold, first, user_id="")
        out["wrong_store"] = _with(gold, first, **{"store_id" if name == "create_delivery_order" else "shop_id": "S-none"})
        if time_key:
            out["past_time"] = _with(gold, first, **{time_key: past})
            out["bad_time_format"] = _with(gold, first, **{time_key: env["time"].replace(" ", "T")})
        extra = [*gold, [name, args]]
        then = gold[first + 1] if first + 1 < len(gold) and gold[first + 1][0].startswith("pay_") else None
        if then is not None:  # pay the extra record too
            new_ref = f"$NEW{sum(n in CREATORS for n, _ in gold) + 1}"
            extra.append([then[0], {k: new_ref for k in then[1]}])
        out["extra_write"] = extra
        missing = {k: v for k, v in args.items() if k not in ("dispatch_time", "time", "product_id", "address")}
        out["missing_argument_then_gold"] = [[name, missing], [name, {**args, "unexpected": 1}], *gold]
        if name == "create_delivery_order":
            out["wrong_types"] = _with(gold, first, product_cnts=[str(c) for c in args["product_cnts"]])
            out["wrong_address"] = _with(gold, first, address="Nowhere Street 1, Atlantis")
            out["attributes_and_note"] = _with(gold, first, attributes=["large"], note="less salt")
        elif name != "create_instore_product_order":
            out["wrong_types"] = _with(gold, first, customer_count=str(args["customer_count"]))
        pays = [i for i, (n, _) in enumerate(gold) if n.startswith("pay_")]
        if pays:
            wrong = "OT0000000000" if domain == "delivery" else "OI0000000000"
            out["wrong_id"] = [[n, {k: wrong for k in a}] if i in pays else [n, a] for i, (n, a) in enumerate(gold)]
            out["pay_twice"] = [*gold, gold[pays[0]]]
    return out


def write_inputs(data: Path) -> None:
    for domain, language in SETS:
        if not (data / "domains" / domain / TASK_FILE[language]).is_file():
            print(f"skipping {domain} ({language}): no {TASK_FILE[language]}")
            continue
        payload = {"upstream": {"repo": UPSTREAM, "commit": UPSTREAM_COMMIT}, "language": language,
                   "tasks": {str(t["id"]): sequences(domain, t, language) for t in _tasks(data, domain, language)}}
        (HERE / f"inputs_{suffix(domain, language)}.json").write_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
        print(domain, language, sum(len(s) for s in payload["tasks"].values()), "sequences")


# ---------------------------------------------------------------------------- step 2: upstream
def _upstream_env(domain: str, environment: dict[str, Any], language: str = "english") -> Any:
    from vita.data_model.tasks import Location, ProductBaseModel, StoreBaseModel

    for registry in (StoreBaseModel, ProductBaseModel, Location):
        registry.clear_thread_data()
    if domain == "delivery":
        from vita.domains.delivery.environment import get_environment
    else:
        from vita.domains.instore.environment import get_environment
    return get_environment(json.loads(json.dumps(environment)), language)


def _tables(env: Any) -> dict[str, dict[str, Any]]:
    db = env.tools.db
    names = ("orders",) if not hasattr(db, "books") else ("orders", "books", "reservations")
    return {n: {k: v.model_dump() for k, v in (getattr(db, n) or {}).items()} for n in names}


V2_COMMIT = "f60169e89f30499cb7883f3dad76bd03facc908d"
"""meituan-longcat/VitaBench-2.0's commit for ``expected --version v2`` (its delivery and in-store tools read products
from the database instead of the registries, its in-store searches return 100 hits, and it has no user-history tool)."""
V2_TASKS = 12
"""Tasks per English set replayed on 2.0's tools (the first ones; the results are kept small)."""


def write_expected(data: Path, version: str = "v1") -> None:
    from vita.data_model.message import ToolCall

    schemas: dict[str, Any] = {}
    for domain, language in SETS:
        if not (HERE / f"inputs_{suffix(domain, language)}.json").is_file() or (version == "v2" and language != "english"):
            continue
        inputs = json.loads((HERE / f"inputs_{suffix(domain, language)}.json").read_text(encoding="utf-8"))
        tasks = {str(t["id"]): t for t in _tasks(data, domain, language)}
        out: dict[str, Any] = {}
        for task_id, seqs in list(inputs["tasks"].items())[:V2_TASKS if version == "v2" else None]:
            out[task_id] = {}
            for seq_name, calls in seqs.items():
                env = _upstream_env(domain, tasks[task_id]["environment"], language)
                counter = iter(range(10**6))

                def call(name: str, arguments: dict[str, Any], env: Any = env, counter: Any = counter) -> str | None:
                    message = ToolCall(id=f"c{next(counter)}", name=name, arguments=arguments, requestor="assistant")
                    return env.get_response(message).content

                def keys(env: Any = env) -> set[str]:
                    return {k for table in _tables(env).values() for k in table}

                results, created = run_sequence(calls, call, keys)
                tables = canonical_tables(_tables(env), created)
                out[task_id][seq_name] = {"results": results, "created": len(created),
                                          "db_sha256": hashlib.sha256(tables.encode()).hexdigest()}
        if version == "v2":
            payload = {"upstream": {"repo": "meituan-longcat/VitaBench-2.0", "commit": V2_COMMIT}, "language": language, "results": out,
                       "schemas": {t.name: t.openai_schema["function"]["parameters"] for t in _upstream_env(domain, {}).get_tools()}}
            (HERE / f"expected_{suffix(domain, language)}_v2.json").write_text(
                json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
            print(domain, "v2 done")
            continue
        payload = {"upstream": {"repo": UPSTREAM, "commit": UPSTREAM_COMMIT}, "language": language, "results": out}
        (HERE / f"expected_{suffix(domain, language)}.json").write_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
        if language == "english":
            env = _upstream_env(domain, {})
            schemas[domain] = {t.name: t.openai_schema["function"]["parameters"] for t in env.get_tools()}
        print(domain, language, "done")
    if version == "v2":
        return
    (HERE / "upstream_schemas.json").write_text(
        json.dumps({"upstream": {"repo": UPSTREAM, "commit": UPSTREAM_COMMIT}, "schemas": schemas}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=("inputs", "expected"))
    parser.add_argument("--data", type=Path, default=None, help="the vitabench data folder (default: $AGENTGYM_DATA/vitabench)")
    parser.add_argument("--version", choices=("v1", "v2"), default="v1",
                        help="expected step: v1 = meituan-longcat/vitabench (default); v2 = VitaBench-2.0's tools on the first tasks")
    args = parser.parse_args()
    if args.data is None:
        import os

        args.data = Path(os.environ.get("AGENTGYM_DATA", "/work/shared/data")) / "vitabench"
    write_inputs(args.data) if args.step == "inputs" else write_expected(args.data, args.version)


if __name__ == "__main__":
    main()
