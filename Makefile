# Timothy's developer commands. `make run` and `make test` work on a fresh Linux machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/timothy

test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check timothy app tests bench
	$(BIN)/ruff format --check timothy app tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
