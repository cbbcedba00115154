# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
OUT ?= out/demo

.PHONY: demo test env clean

env: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/referee replay examples/starcluster_full_game.jsonl --game starcluster --out $(OUT)
	@echo "Demo outputs written to $(OUT)/ (result.json, score_sheet.txt)"

test: $(STAMP)
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) out
