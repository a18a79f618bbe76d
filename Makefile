# Timothy's developer commands. `make run` and `make test` work on a fresh Linux machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

DIST_STAMP := $(VENV)/.installed-dist

.PHONY: run test lint typecheck pytest bench clean dist check-bundle screenshots

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/timothy

test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check timothy app tests bench packaging tools
	$(BIN)/ruff format --check timothy app tests bench packaging tools

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

$(DIST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,dist]"
	touch $(DIST_STAMP)

# The one-folder bundle dist/Timothy/ (PyInstaller, build.spec), packed for this platform.
dist: $(DIST_STAMP)
	rm -rf dist/Timothy dist/Timothy.app
	$(BIN)/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build build.spec
	version=$$($(BIN)/python -c 'import timothy; print(timothy.__version__)'); \
	case "$$(uname -s)" in \
	  Linux) cp packaging/linux/install-desktop-entry.sh dist/Timothy/ && \
	         tar -C dist -czf "dist/Timothy-$$version-linux-$$(uname -m).tar.gz" Timothy && \
	         ls -l "dist/Timothy-$$version-linux-$$(uname -m).tar.gz" ;; \
	  Darwin) packaging/macos/make-dmg.sh "dist/Timothy.app" "dist/Timothy-$$version-macos-$$(uname -m).dmg" ;; \
	esac
	du -sh dist/Timothy

# Run the bundle with no Python, no network and a fresh data folder (Linux).
check-bundle:
	packaging/check-bundle.sh dist/Timothy

# Benchmarks print figures (they do not assert speed); the 100k store takes minutes to build.
bench: $(STAMP)
	$(BIN)/python bench/locomo.py
	$(BIN)/python bench/locomo.py --embedder local
	$(BIN)/python bench/relevance.py
	$(BIN)/python bench/recall.py
	$(BIN)/python bench/local_embedder.py
	$(BIN)/python bench/consolidation.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache

# The main window in its main states, rendered offscreen to screenshots/*.png (git-ignored).
screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m tools.screenshots
