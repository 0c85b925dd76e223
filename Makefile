# Two commands do all set-up:  `make localnet`  and  `make test`.
# Each creates .venv on first use (torch==2.13.0 first, then the rest with the pin kept).
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
TORCH   = torch==2.13.0
MINERS ?= 3
ROUNDS ?= 2

.PHONY: install localnet test wire clean

$(BIN)/.audionet-installed: requirements.txt requirements-dev.txt requirements-nodeps.txt setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet $(TORCH) -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-nodeps.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

install: $(BIN)/.audionet-installed

localnet: install
	$(BIN)/audionet-localnet --miners $(MINERS) --rounds $(ROUNDS) --json localnet.json

test: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

wire: install
	$(BIN)/python -m benchmarks.wire

clean:
	rm -rf $(VENV) .pytest_cache localnet.json
