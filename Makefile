# Two commands on a fresh machine: `make run` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench screenshots setup clean

$(STAMP): pyproject.toml
	@echo "Setting up $(VENV) (first time: about a minute; pip shows its progress below)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --progress-bar on -e '.[test]'
	touch $(STAMP)
	@echo "Set up. Next times start at once."

setup: $(STAMP)

# Exit code 2 is anton-tui's own "stopped, and said why" (an invalid setting, Quit on its screen, a bad argument):
# the reason is on screen already, so make adds no "Error 2" line under it. Scripts that run anton-tui get the 2.
run: $(STAMP)
	@$(BIN)/anton-tui $(ARGS) || { code=$$?; [ $$code -eq 2 ] || exit $$code; }

# Two test processes (pytest-xdist): the suite mostly waits on subprocesses, servers and screens, so two halve its
# time on a 2-core machine. TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= 2

test: lint
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) $(PYTEST_ARGS)

# Ruff (lint and format) and mypy over anton_tui/, with the configuration in pyproject.toml.
lint: $(STAMP)
	$(BIN)/ruff check anton_tui
	$(BIN)/ruff format --check anton_tui
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(ARGS)

screenshots: $(STAMP)
	$(BIN)/python -m benchmarks.screenshots

clean:
	rm -rf $(VENV) build dist *.egg-info
