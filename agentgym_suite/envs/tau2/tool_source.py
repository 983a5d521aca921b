"""The tools' OpenAI schemas as τ²-bench shows them to its models, built from upstream's tool source kept as data.

Upstream describes a tool by its Python function: the docstring (read by the ``docstring_parser`` library) gives
the description and each parameter's description, the signature gives the parameter types and defaults, and
pydantic turns the parameters into the JSON schema (``model_json_schema`` of a model named ``parameters``, with
``$defs`` for the pydantic models and enums a parameter's type names). ``agentgym data fetch tau2`` places the
source files as data next to each domain's data (:data:`~agentgym_suite.envs.tau2.data_source.TOOL_SOURCES`).
This module reads them with ``ast`` and never imports or runs them: type expressions and ``Field(...)`` calls
are rebuilt from a small allow-list of names (builtins, ``typing``, pydantic's ``Field``) and from the enums,
type aliases and models the same files define; the parameters model is then built by pydantic itself and the
docstring parsed by ``docstring_parser``, as upstream does, so wording, types and layout are upstream's.

Without the files the env keeps the suite's own descriptions and names that as a departure
(:data:`DESCRIPTIONS_DEPARTURE`).
"""

from __future__ import annotations

import ast
import copy
import enum
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, Union

import pydantic
from pydantic import BaseModel, ConfigDict

from agentgym_suite.envs.tau2.data_source import TOOL_SOURCES

DESCRIPTIONS_DEPARTURE = (
    "the tools' descriptions and JSON schemas are the suite's own wording, not upstream's docstrings and pydantic "
    "schemas (run `agentgym data fetch tau2`, which places upstream's tool sources next to the domains' data)")
"""The labelled departure an episode names when its domain's tool sources are not in the data folder."""


class UnsupportedSource(ValueError):
    """The tool source uses a construct this reader does not rebuild (the file is not the pinned upstream one)."""


class _NoExtra(BaseModel):
    """Upstream's ``BaseModelNoExtra``: a pydantic model refusing unknown fields."""

    model_config = ConfigDict(extra="forbid")


_EMPTY = object()

_KNOWN: dict[str, Any] = {
    "str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list, "tuple": tuple, "None": None,
    "Any": Any, "List": List, "Dict": Dict, "Optional": Optional, "Union": Union, "Literal": Literal,  # noqa: UP006
    "Tuple": Tuple, "Annotated": Annotated, "Enum": enum.Enum, "BaseModel": BaseModel,  # noqa: UP006
    "BaseModelNoExtra": _NoExtra, "DB": _NoExtra, "Field": pydantic.Field,
}
"""Names the source files import that a type expression may use (what they stand for upstream)."""


class _Namespace:
    """The module-level enums, aliases and models of a set of source files, rebuilt on first use."""

    def __init__(self, trees: list[ast.Module]) -> None:
        self._nodes: dict[str, ast.AST] = {}
        for tree in trees:
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self._nodes.setdefault(node.name, node)
                elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    self._nodes.setdefault(node.targets[0].id, node.value)
        self._built: dict[str, Any] = {}

    def lookup(self, name: str) -> Any:
        if name in self._built:
            return self._built[name]
        if name in self._nodes:
            node = self._nodes[name]
            value = self._build_class(node) if isinstance(node, ast.ClassDef) else self.value(node)
            self._built[name] = value
            return value
        if name in _KNOWN:
            return _KNOWN[name]
        raise UnsupportedSource(f"the name {name!r} is neither defined in the tool sources nor a known import")

    def value(self, node: ast.AST) -> Any:
        """A type expression, default value or ``Field(...)`` call, rebuilt from the allow-listed constructs."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            owner = self.value(node.value)
            if isinstance(owner, type) and issubclass(owner, enum.Enum):
                return owner[node.attr]
            raise UnsupportedSource(f"attribute {node.attr!r} of {owner!r} is not rebuilt")
        if isinstance(node, ast.Subscript):
            base = self.value(node.value)
            index = node.slice
            args = tuple(self.value(e) for e in index.elts) if isinstance(index, ast.Tuple) else self.value(index)
            return base[args]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return Union[self.value(node.left), self.value(node.right)]  # noqa: UP007 (a runtime union of rebuilt types)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.value(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.value(node.operand)
        if isinstance(node, ast.Call) and self.value(node.func) is pydantic.Field:
            return pydantic.Field(*[self.value(a) for a in node.args],
                                  **{k.arg: self.value(k.value) for k in node.keywords if k.arg})
        raise UnsupportedSource(f"the expression {ast.unparse(node)!r} is not rebuilt")

    def _build_class(self, node: ast.ClassDef) -> type:
        bases = [self.value(b) for b in node.bases]
        doc = ast.get_docstring(node, clean=False)
        if any(isinstance(b, type) and issubclass(b, enum.Enum) for b in bases):
            members = [(s.targets[0].id, self.value(s.value)) for s in node.body
                       if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)]
            mixin = next((b for b in bases if b in (str, int)), None)
            made = enum.Enum(node.name, members, type=mixin) if mixin else enum.Enum(node.name, members)
            made.__doc__ = doc
            return made  # type: ignore[return-value]  # the functional API makes a class
        base = next((b for b in bases if isinstance(b, type) and issubclass(b, BaseModel)), None)
        if base is None:
            raise UnsupportedSource(f"class {node.name} is neither an enum nor a pydantic model")
        fields: dict[str, Any] = {}
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                annotation = self.value(statement.annotation)
                default = ... if statement.value is None else self.value(statement.value)
                fields[statement.target.id] = (annotation, default)
        model = pydantic.create_model(node.name, __base__=base, __doc__=doc, **fields)
        return model


OTHER_SIDES_CLASSES: dict[tuple[str, str], frozenset[str]] = {
    ("banking_knowledge", "agent"): frozenset({"KnowledgeUserTools"}),
    ("banking_knowledge", "user"): frozenset({"KnowledgeTools"}),
}
"""(domain, side) -> toolkit classes of the other side in a file both sides share (skipped for this side)."""


def _tool_functions(tree: ast.Module, skip_classes: frozenset[str] = frozenset()) -> list[ast.FunctionDef]:
    """The methods marked ``@is_tool(...)`` in the classes of a source file (but ``skip_classes``), in definition
    order."""
    def marked(fn: ast.FunctionDef) -> bool:
        return any(isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "is_tool"
                   for d in fn.decorator_list)

    return [item for node in tree.body if isinstance(node, ast.ClassDef) and node.name not in skip_classes
            for item in node.body if isinstance(item, ast.FunctionDef) and marked(item)]


def _schema(fn: ast.FunctionDef, names: _Namespace) -> dict[str, Any]:
    """One tool's OpenAI schema from its definition, as upstream's ``Tool.openai_schema`` reads the bound method."""
    from docstring_parser import parse

    doc = parse(ast.get_docstring(fn, clean=False) or "")
    documented = {p.arg_name: p for p in doc.params}
    positional = fn.args.posonlyargs + fn.args.args
    if fn.args.vararg or fn.args.kwarg:
        raise UnsupportedSource(f"tool {fn.name} takes *args/**kwargs")
    defaults: list[Any] = [_EMPTY] * (len(positional) - len(fn.args.defaults)) + list(fn.args.defaults)
    arguments = list(zip(positional, defaults))[1:]  # the bound method: no ``self``
    arguments += list(zip(fn.args.kwonlyargs, fn.args.kw_defaults))
    fields: dict[str, Any] = {}
    for arg, default_node in arguments:
        annotation: Any = _EMPTY if arg.annotation is None else names.value(arg.annotation)
        default: Any = ... if default_node is _EMPTY or default_node is None else names.value(default_node)
        if arg.arg in documented:
            default = pydantic.Field(default, description=documented[arg.arg].description)
            if annotation is _EMPTY and documented[arg.arg].type_name is not None:
                annotation = documented[arg.arg].type_name
        fields[arg.arg] = (Any if annotation is _EMPTY else annotation, default)
    parameters = pydantic.create_model("parameters", **fields)
    short, long = doc.short_description or "", doc.long_description or ""
    description = (short + "\n\n" + long if long else short) if short else fn.name
    return {"type": "function",
            "function": {"name": fn.name, "description": description, "parameters": parameters.model_json_schema()}}


def schemas_from_files(files: list[Path], skip_classes: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The schema of every tool the source ``files`` define (in file order, then definition order), outside
    ``skip_classes``; the types their signatures name are resolved across all the files."""
    trees = [ast.parse(p.read_text(encoding="utf-8")) for p in files]
    names = _Namespace(trees)
    return [_schema(fn, names) for tree in trees for fn in _tool_functions(tree, skip_classes)]


def source_paths(folder: Path, side: str) -> list[Path] | None:
    """The source files of the ``side`` (``agent``/``user``) tools of the domain whose data ``folder``
    (``$AGENTGYM_DATA/tau2/domains/<domain>``) is given, or None when none are declared or a file is missing."""
    names = TOOL_SOURCES.get((folder.name, side))
    if names is None:
        return None
    paths = [folder / name for name in names]
    if not all(p.is_file() for p in paths):
        return None
    return paths


def sources_missing(folder: Path | None) -> bool:
    """Whether the domain whose data ``folder`` is given declares tool sources (:data:`TOOL_SOURCES`) and a side's
    are not all there (then its tools keep the suite's own descriptions: :data:`DESCRIPTIONS_DEPARTURE`)."""
    if folder is None:
        return False
    sides = [side for domain, side in TOOL_SOURCES if domain == folder.name]
    return any(source_paths(folder, side) is None for side in sides)


@lru_cache(maxsize=32)
def _cached(folder_text: str, side: str) -> tuple[dict[str, Any], ...] | None:
    folder = Path(folder_text)
    found = source_paths(folder, side)
    if found is None:
        return None
    return tuple(schemas_from_files(found, OTHER_SIDES_CLASSES.get((folder.name, side), frozenset())))


def upstream_schemas(folder: Path, side: str) -> list[dict[str, Any]] | None:
    """Upstream's schemas of the ``side`` tools of the domain whose data ``folder`` is given, or None when the tool
    sources are not in it."""
    built = _cached(str(folder), side)
    return None if built is None else copy.deepcopy(list(built))


def as_upstream(folder: Path | None, side: str, ours: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """The schemas to show for ``ours`` (the suite's): upstream's for the same tools, in upstream's order, when the
    sources are present; else ``ours``. The flag says whether upstream's were used."""
    built = None if folder is None else upstream_schemas(folder, side)
    if built is None:
        return ours, False
    wanted = {s["function"]["name"] for s in ours}
    chosen = [s for s in built if s["function"]["name"] in wanted]
    missing = wanted - {s["function"]["name"] for s in chosen}
    return chosen + [s for s in ours if s["function"]["name"] in missing], True
