"""Stub the optional imports of pyserini's dense-retrieval modules, which BM25 search never uses.

``pyserini.search`` imports its dense searchers (torch, faiss, transformers, ...) on import. Put
this folder on ``PYTHONPATH`` when running ``regenerate_webshop_search.py`` so those imports
succeed without installing the packages; any use of a stub would fail loudly.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

STUBBED = {"faiss", "torch", "transformers", "sentencepiece", "onnxruntime", "sklearn", "scipy", "nmslib", "lightgbm"}


class _Stub(type):
    def __getattr__(cls, name: str) -> type:
        return _Stub(name, (), {})

    def __call__(cls, *args: object, **kwargs: object) -> type:
        return _Stub("instance", (), {})


class _Module(types.ModuleType):
    def __getattr__(self, name: str) -> type:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(name, (), {})


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):  # type: ignore[no-untyped-def]
        if fullname.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):  # type: ignore[no-untyped-def]
        module = _Module(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):  # type: ignore[no-untyped-def]
        return None


sys.meta_path.insert(0, _Finder())
