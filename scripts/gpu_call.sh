#!/usr/bin/env bash
# One device call, start to finish (docs/gpu-hosts.md, "The first GPU tables"): from the repository root on
# the GPU machine (CPython 3.12 with torch and CUDA, no registry), install the GPU kit's part that the call
# carries (`make gpu-kit` builds it into dist/gpu-kit/part1), show torch's CUDA, run gpu-check's plan (which
# checks the CUDA libraries first, then runs each step within its limit), and leave what matters in $OUT:
#     results.tar.gz  gpu-tables.md  gpu-check.md  (written again after every step)  gpu-call.log
# so a call cut short still returns the tables of the steps it finished. Unpack with
#     tar xzf "$FILES/results.tar.gz" -C benchmarks/results
# Arguments pass to gpu-check (e.g. --budget 300, or --eval.* / --<group>.<name> flags for the steps).
# Settings from the environment: GPU_KIT_PART (default dist/gpu-kit/part1), GPU_PYTHON (python3),
# GPU_KIT_SITE (install.sh's, /tmp/site), OUT (required: where the call's files come back from).
# The rehearsal runs this same script on a CPU with --cpu-rehearsal (tests/benchmarks/test_gpu_call.py).
set -uo pipefail
: "${OUT:?OUT must name the folder whose files come back}"
KIT="${GPU_KIT_PART:-dist/gpu-kit/part1}"
PY="${GPU_PYTHON:-python3}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-call.log") 2>&1 # the log comes back too, however the call ends
started=$(date +%s)
echo "gpu-call: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo 'no git') in $PWD"

if [ -f "$KIT/install.sh" ]; then
  # install.sh prints the export line on stdout and its summary on stderr
  if exports="$(GPU_KIT_PYTHON="$PY" bash "$KIT/install.sh")"; then
    eval "$exports"
  else
    echo "gpu-call: the kit at $KIT did not install: steps whose packages are missing are skipped"
  fi
else
  echo "gpu-call: no kit at $KIT (make gpu-kit): steps whose packages are missing are skipped"
fi
echo "gpu-call: kit installed in $(($(date +%s) - started)) s"

"$PY" -c 'import sys, torch; print(f"gpu-call: Python {sys.version.split()[0]}, torch {torch.__version__} (CUDA {torch.version.cuda}), GPU visible: {torch.cuda.is_available()}")'

export PYTHONPATH="pythonpath${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
"$PY" -m audionet.benchmarks gpu-check --pack "$OUT" "$@"
code=$?
echo "gpu-call: gpu-check ended with exit $code after $(($(date +%s) - started)) s; in $OUT: $(ls "$OUT" | tr '\n' ' ')"
exit "$code"
