#!/usr/bin/env bash
# The accelerator check: tiny random models on the GPU in bf16 against the CPU in fp32, with timings (under five
# minutes on one GPU). Needs python with torch (a CUDA build), transformers, peft and sentence-transformers; run it
# from a checkout of the kit: `bash scripts/accelerator_check.sh`. The kit's own trainer and backend run too when
# the kit imports: on a machine without its other dependencies, carry them as wheels built on a connected one
# (`pip wheel --no-deps . -w dist` for the kit, `pip download -d dist -r <(pip freeze)` for the rest) and install
# with `pip install --no-index --find-links dist evalkit`. Without an accelerator it runs the CPU half, says so and
# exits 0 (`--device cpu --dtype bf16` runs the device half on the CPU, a dry run); a failed tolerance exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TOKENIZERS_PARALLELISM=false
exec timeout 300 "${PYTHON:-python}" scripts/accelerator_check.py "$@"
