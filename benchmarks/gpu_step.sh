#!/usr/bin/env bash
# Our trainer step against plain TRL GRPO on one GPU (benchmarks/gpu_step.py): a randomly
# initialised model of Qwen2.5-1.5B's architecture in bf16, tokens/s of each and the ratio.
# Sized to finish in well under 10 minutes on one H100/H200-class GPU.
#
# The GPU machine has torch, transformers, accelerate and peft but not TRL, datasets or gymnasium,
# and nothing can be downloaded there, so the missing packages travel as wheels in .whl/ (ignored
# by git, about 50 MB). Fetch them here first, once:
#
#   bash benchmarks/gpu_step.sh --fetch-wheels
#
# then run this script there from the repository root (carrying .whl):
#
#   bash benchmarks/gpu_step.sh [--steps 3 --batch 16 --tokens 128 --json $OUT/gpu_step.json]
#
# On a machine without a GPU, `bash benchmarks/gpu_step.sh --tiny` runs the same code path on the
# CPU with a tiny model (a check of the script, not a measurement).
#
# Any recipe instead: one training step of a config at its own sizes (benchmarks/recipe_step.py),
# weights random of the config's architecture (the GPU machine cannot download), its env's data
# carried in $AGENTGYM_DATA; `--dry-run` prints the plan, `-- --field value` overrides the config:
#
#   bash benchmarks/gpu_step.sh --recipe configs/alfworld_sdar_qwen2.5_7b.yaml --random-weights --json $OUT/step.json
#   bash benchmarks/gpu_step.sh --recipe configs/alfworld_grpo_qwen2.5_7b.yaml --dry-run -- --generation_batch_size 64
set -euo pipefail
cd "$(dirname "$0")/.."

WHEELS=(trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 pyarrow==26.0.1 gymnasium==1.4.0
        farama-notifications==0.0.6 jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0
        rpds-py==2026.9.1 platformdirs==4.14.9)

if [[ "${1:-}" == "--fetch-wheels" ]]; then
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d .whl "${WHEELS[@]}"
  exit 0
fi

if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/gpu_step_site \
    .whl/*.whl
  export PYTHONPATH="/tmp/gpu_step_site:${PYTHONPATH:-}"
fi
export PYTHONPATH="$PWD:$PWD/tests:${PYTHONPATH:-}" TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
PYTHON="${PYTHON:-python3}"
exec "$PYTHON" benchmarks/gpu_step.py "$@"
