# The two set-up commands of the README: `make demo` (the whole mission on SQLite) and
# `make test` (the test suite; PostgreSQL cases run when a server answers).
VENV   ?= .venv
PYTHON ?= python3
BIN    := $(VENV)/bin
# The versions the suite passed with, installed as pip constraints; refresh with `make lock`.
LOCK   := requirements.lock
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml $(LOCK) | cksum | cut -d' ' -f1)
PYTEST_ARGS ?= -n auto --dist loadfile  # one worker per core; a module keeps its databases

.PHONY: install demo test test-fast lint bench lock clean

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/tcdb demo

test: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

# The tier a developer runs often, on SQLite: no server, browser or killed process, nothing
# marked slow, no PostgreSQL case (`make test` runs every one of them, on both databases).
test-fast: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS) -m "not slow and not server and not browser and not kill and not postgres"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python tools/typecheck.py

bench: $(STAMP)
	for script in bench/*.py; do $(BIN)/python $$script || exit 1; done

lock:
	bash tools/lock.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
