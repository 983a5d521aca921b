#!/usr/bin/env bash
# One command for a lent GPU (benchmarks/gpu_check.py): the verl update schedule under DeepSpeed ZeRO-3
# and FSDP2 on a randomly initialised Qwen2.5-7B-shaped model (step time, tokens/s, peak memory,
# optimizer steps per generation batch), generation tokens/s, and our trainer step beside TRL's
# GRPOTrainer on the same batch, written to one JSON. Sized for at most 8 minutes on one H200.
#
# The GPU machine has torch, transformers, accelerate and peft, nothing else, and cannot download;
# the packages it lacks travel as wheels in .whl/ (ignored by git, under 64 MiB). Prepare them here
# once (DeepSpeed is published as source only: its wheel is built here, without compiled ops):
#
#   bash benchmarks/gpu_check.sh --prepare-wheels
#
# then, from the repository root on the GPU machine (carrying .whl):
#
#   bash benchmarks/gpu_check.sh --json $OUT/gpu_check.json      # default: benchmarks/gpu_check.json
#
# `bash benchmarks/gpu_check.sh --dry-run` runs every part with tiny shapes on the CPU (the default
# test suite does, so the script cannot rot); it is a check of the script, not a measurement.
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRA_WHEELS=(hjson==3.1.0 ninja==1.13.2 py-cpuinfo==9.0.0 einops==0.8.2)

if [[ "${1:-}" == "--prepare-wheels" ]]; then
  bash benchmarks/gpu_step.sh --fetch-wheels
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d .whl "${EXTRA_WHEELS[@]}"
  DS_BUILD_OPS=0 python3 -m pip wheel --no-deps --no-build-isolation -w .whl "deepspeed==0.19.8"
  du -sh .whl
  exit 0
fi

if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/gpu_check_site \
    .whl/*.whl
  export PYTHONPATH="/tmp/gpu_check_site:${PYTHONPATH:-}"
fi
export PYTHONPATH="$PWD:$PWD/tests:${PYTHONPATH:-}" TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
PYTHON="${PYTHON:-python3}"
exec "$PYTHON" benchmarks/gpu_check.py "$@"
