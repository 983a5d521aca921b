"""Cross-domain VitaBench tasks: several domains' tools over one database, as upstream merges them.

Upstream (``get_cross_environment``) builds each domain's environment from the same task
database, then one toolkit holding every domain's tools (the first domain's tool wins a shared
name; the generic tools are shared) over a merged database: each domain's own tables (stores,
shops with books and reservations, hotels...) and, for the fields every domain has (orders, the
clock, the user, places, weather), the last domain's copy, so all domains read and write one
order table. Here each domain keeps its own toolkit (:mod:`.tools`, :mod:`.ota_tools`), and the
toolkits share one database dict and one address registry, merged the same way.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from agentgym_suite.envs.vitabench.tools import TOOLKITS, ToolKitBase, serialise


class CrossDomainTools:
    """The tools of several VitaBench domains over one merged database."""

    def __init__(self, task_id: str, domains: list[str], environment: dict[str, Any], language: str = "english",
                 version: int = 1) -> None:
        self.domain = ",".join(domains)
        self.task_id = task_id
        self.version = version
        self.parts: list[ToolKitBase] = [TOOLKITS[d](task_id, environment, language, version) for d in domains]
        merged: dict[str, Any] = {}
        locations: dict[str, Any] = {}
        for part in self.parts:
            merged.update(part.db)  # the last domain's copy of the shared fields, as upstream's merged database
            locations.update(part.locations)  # first place of an address kept, its last record, as upstream's registry
        for part in self.parts:
            part.db, part.locations = merged, locations
        self.db = merged
        self._owners: dict[str, ToolKitBase] = {}
        for part in self.parts:
            for name in part.tool_names():
                self._owners.setdefault(name, part)
        seen: set[str] = set()
        self.schemas = []
        for part in self.parts:
            for schema in part.schemas:
                name = schema["function"]["name"]
                if name not in seen:
                    seen.add(name)
                    self.schemas.append(schema)
        self.handlers: dict[str, Callable[..., str | None]] = {name: functools.partial(self.call, name) for name in self._owners}

    def tool_names(self) -> list[str]:
        """Every domain's tools."""
        return list(self._owners)

    def owner(self, tool: str) -> ToolKitBase:
        """The domain toolkit that runs ``tool`` (the first domain that has it)."""
        return self._owners[tool]

    def call(self, name: str, **arguments: Any) -> str | None:
        """Run one call on the toolkit that has the tool; an unknown tool gets upstream's answer."""
        if name not in self._owners:
            return serialise(f"Error: Tool '{name}' not found.")
        return self._owners[name].call(name, **arguments)


__all__ = ["CrossDomainTools"]
