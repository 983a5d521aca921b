"""Tool kinds of the synthetic worlds: their JSON schemas and their semantics over a world's database.

The database is ``{"items": {id: record}, "owners": {id: record}, "meta": {"next_id": int}}``.
Every tool name is built from the theme (``search_books``, ``set_product_status``…), so two
worlds of different themes expose different tool sets.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from agentgym_suite.envs.synthetic_tools.themes import Theme

CORE_KINDS = ("search", "get", "set_status", "adjust_qty", "create")
EXTRA_KINDS = ("delete", "set_category", "rename", "transfer_qty", "list_by_status", "search_owners", "get_owner", "assign", "unassign", "count")
DISTRACTOR_KINDS = ("weather", "clock", "convert", "holiday", "ping", "quote")


def _schema(name: str, description: str, props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": props, "required": list(props) if required is None else required, "additionalProperties": False}}}


def tool_name(kind: str, theme: Theme) -> str:
    """The tool name of ``kind`` in ``theme``."""
    t = theme
    return {
        "search": f"search_{t.items}", "get": f"get_{t.item}", "set_status": f"set_{t.item}_status",
        "adjust_qty": f"adjust_{t.item}_{t.qty_field}", "create": f"create_{t.item}", "delete": f"delete_{t.item}",
        "set_category": f"set_{t.item}_{t.category_field}", "rename": f"rename_{t.item}",
        "transfer_qty": f"transfer_{t.qty_field}", "list_by_status": f"list_{t.items}_by_status",
        "search_owners": f"search_{t.owners}", "get_owner": f"get_{t.owner}", "assign": f"{t.assign_verb}_{t.item}",
        "unassign": f"release_{t.item}", "count": f"count_{t.items}", "weather": "get_weather", "clock": "get_server_time",
        "convert": "convert_units", "holiday": "is_public_holiday", "ping": "ping_service", "quote": "get_daily_quote",
    }[kind]


def tool_schema(kind: str, theme: Theme) -> dict[str, Any]:
    """OpenAI-format schema of tool ``kind`` in ``theme``."""
    t, name = theme, tool_name(kind, theme)
    item_id = {"type": "string", "description": f"{t.item} id, e.g. '{t.item_prefix}-1234'"}
    owner_id = {"type": "string", "description": f"{t.owner} id, e.g. '{t.owner_prefix}-1234'"}
    status = {"type": "string", "enum": list(t.statuses)}
    category = {"type": "string", "enum": list(t.categories)}
    table = {
        "search": (f"Find {t.items} whose name contains the query (case-insensitive); returns ids and names.",
                   {"query": {"type": "string", "minLength": 1}}),
        "get": (f"Get every field of one {t.item}.", {f"{t.item}_id": item_id}),
        "set_status": (f"Set the status of a {t.item}.", {f"{t.item}_id": item_id, "status": status}),
        "adjust_qty": (f"Add a (possibly negative) amount to a {t.item}'s {t.qty_field}; the result may not go below 0.",
                       {f"{t.item}_id": item_id, "delta": {"type": "integer"}}),
        "create": (f"Create a new {t.item} (status '{t.statuses[0]}'); returns its id.",
                   {"name": {"type": "string", "minLength": 1}, t.category_field: category, t.qty_field: {"type": "integer", "minimum": 0}}),
        "delete": (f"Delete a {t.item}.", {f"{t.item}_id": item_id}),
        "set_category": (f"Set the {t.category_field} of a {t.item}.", {f"{t.item}_id": item_id, t.category_field: category}),
        "rename": (f"Rename a {t.item}.", {f"{t.item}_id": item_id, "new_name": {"type": "string", "minLength": 1}}),
        "transfer_qty": (f"Move an amount of {t.qty_field} from one {t.item} to another (the source must have enough).",
                         {"from_id": item_id, "to_id": item_id, "amount": {"type": "integer", "minimum": 1}}),
        "list_by_status": (f"List the ids and names of the {t.items} with a given status.", {"status": status}),
        "search_owners": (f"Find {t.owners} whose name contains the query (case-insensitive).", {"query": {"type": "string", "minLength": 1}}),
        "get_owner": (f"Get a {t.owner} and the {t.items} assigned to them.", {f"{t.owner}_id": owner_id}),
        "assign": (f"Assign a {t.item} to a {t.owner} (it must not be assigned already).", {f"{t.item}_id": item_id, f"{t.owner}_id": owner_id}),
        "unassign": (f"Remove a {t.item}'s {t.owner} assignment.", {f"{t.item}_id": item_id}),
        "count": (f"Count the {t.items} in the system.", {}),
        "weather": ("Current weather of a city (unrelated to the records).", {"city": {"type": "string"}}),
        "clock": ("The server's current time.", {}),
        "convert": ("Convert a value between units (km, mi, kg, lb).", {"value": {"type": "number"}, "from_unit": {"type": "string", "enum": ["km", "mi", "kg", "lb"]}, "to_unit": {"type": "string", "enum": ["km", "mi", "kg", "lb"]}}),
        "holiday": ("Whether a date (YYYY-MM-DD) is a public holiday.", {"date": {"type": "string"}}),
        "ping": ("Check that an internal service answers.", {"service": {"type": "string"}}),
        "quote": ("A motivational quote of the day.", {}),
    }
    description, props = table[kind]
    return _schema(name, description, props)


class WorldTools:
    """Semantics of every tool kind over one world's database (mutated in place)."""

    def __init__(self, theme: Theme, db: dict[str, Any]) -> None:
        self.theme = theme
        self.db = db

    # ------------------------------------------------------------------ helpers
    def _item(self, item_id: str) -> dict[str, Any]:
        item = self.db["items"].get(item_id)
        if item is None:
            raise ValueError(f"no {self.theme.item} with id {item_id!r}; search by name to find the id")
        return item

    def _owner(self, owner_id: str) -> dict[str, Any]:
        owner = self.db["owners"].get(owner_id)
        if owner is None:
            raise ValueError(f"no {self.theme.owner} with id {owner_id!r}; search by name to find the id")
        return owner

    @staticmethod
    def _matches(table: dict[str, Any], query: str) -> list[dict[str, str]]:
        q = query.strip().lower()
        return [{"id": key, "name": rec["name"]} for key, rec in sorted(table.items()) if q and q in rec["name"].lower()]

    def handlers(self, kinds: list[str]) -> dict[str, Callable[..., Any]]:
        """Tool name -> callable for the given kinds."""
        return {tool_name(k, self.theme): self._bind(k) for k in kinds}

    def call(self, kind: str, arguments: dict[str, Any]) -> Any:
        """Run tool ``kind`` with keyword ``arguments``; returns a detached result."""
        return copy.deepcopy(self._bind(kind)(**arguments))

    def _bind(self, kind: str) -> Callable[..., Any]:
        t = self.theme
        iid, oid = f"{t.item}_id", f"{t.owner}_id"

        def search(query: str) -> Any:
            return self._matches(self.db["items"], query)

        def get(**kw: Any) -> Any:
            return dict(self._item(kw[iid]), id=kw[iid])

        def set_status(status: str, **kw: Any) -> Any:
            self._item(kw[iid])["status"] = status
            return {"id": kw[iid], "status": status}

        def adjust_qty(delta: int, **kw: Any) -> Any:
            item = self._item(kw[iid])
            if item[t.qty_field] + delta < 0:
                raise ValueError(f"{t.qty_field} would become negative ({item[t.qty_field]} + {delta})")
            item[t.qty_field] += delta
            return {"id": kw[iid], t.qty_field: item[t.qty_field]}

        def create(name: str, **kw: Any) -> Any:
            if any(rec["name"].lower() == name.strip().lower() for rec in self.db["items"].values()):
                raise ValueError(f"a {t.item} named {name!r} already exists")
            new_id = f"{t.item_prefix}-n{self.db['meta']['next_id']}"
            self.db["meta"]["next_id"] += 1
            self.db["items"][new_id] = {"name": name.strip(), t.category_field: kw[t.category_field], "status": t.statuses[0],
                                        t.qty_field: kw[t.qty_field], "owner": None}
            return {"id": new_id}

        def delete(**kw: Any) -> Any:
            self._item(kw[iid])
            del self.db["items"][kw[iid]]
            return {"deleted": kw[iid]}

        def set_category(**kw: Any) -> Any:
            self._item(kw[iid])[t.category_field] = kw[t.category_field]
            return {"id": kw[iid], t.category_field: kw[t.category_field]}

        def rename(new_name: str, **kw: Any) -> Any:
            self._item(kw[iid])["name"] = new_name.strip()
            return {"id": kw[iid], "name": new_name.strip()}

        def transfer_qty(from_id: str, to_id: str, amount: int) -> Any:
            source, target = self._item(from_id), self._item(to_id)
            if from_id == to_id:
                raise ValueError("source and target must differ")
            if source[t.qty_field] < amount:
                raise ValueError(f"{from_id} has only {source[t.qty_field]} {t.qty_field}")
            source[t.qty_field] -= amount
            target[t.qty_field] += amount
            return {from_id: source[t.qty_field], to_id: target[t.qty_field]}

        def list_by_status(status: str) -> Any:
            return [{"id": k, "name": r["name"]} for k, r in sorted(self.db["items"].items()) if r["status"] == status]

        def search_owners(query: str) -> Any:
            return self._matches(self.db["owners"], query)

        def get_owner(**kw: Any) -> Any:
            owner = self._owner(kw[oid])
            held = sorted(k for k, r in self.db["items"].items() if r["owner"] == kw[oid])
            return dict(owner, id=kw[oid], **{t.items: held})

        def assign(**kw: Any) -> Any:
            item = self._item(kw[iid])
            self._owner(kw[oid])
            if item["owner"] is not None:
                raise ValueError(f"{kw[iid]} is already assigned to {item['owner']}; release it first")
            item["owner"] = kw[oid]
            return {"id": kw[iid], "owner": kw[oid]}

        def unassign(**kw: Any) -> Any:
            item = self._item(kw[iid])
            if item["owner"] is None:
                raise ValueError(f"{kw[iid]} is not assigned")
            item["owner"] = None
            return {"id": kw[iid], "owner": None}

        def count() -> Any:
            return {"count": len(self.db["items"])}

        def weather(city: str) -> Any:
            return {"city": city, "forecast": "mild", "celsius": 10 + len(city) % 15}

        def clock() -> Any:
            return {"time": "2025-01-15T09:30:00Z"}

        def convert(value: float, from_unit: str, to_unit: str) -> Any:
            factors = {("km", "mi"): 0.621371, ("mi", "km"): 1.609344, ("kg", "lb"): 2.204623, ("lb", "kg"): 0.453592}
            if from_unit == to_unit:
                return {"value": value}
            if (from_unit, to_unit) not in factors:
                raise ValueError(f"cannot convert {from_unit} to {to_unit}")
            return {"value": round(value * factors[(from_unit, to_unit)], 4)}

        def holiday(date: str) -> Any:
            return {"date": date, "holiday": date[5:] in {"01-01", "12-25"}}

        def ping(service: str) -> Any:
            return {"service": service, "status": "ok"}

        def quote() -> Any:
            return {"quote": "Small steps, checked often."}

        return locals()[kind]
