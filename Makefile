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

SAMPLE := sample_videos/starcluster/full_game

demo: $(STAMP)
	$(BIN)/referee replay examples/starcluster_full_game.jsonl --game starcluster --out $(OUT)
	$(BIN)/referee calibrate $(SAMPLE)/video.mp4 --profile starcluster --out $(OUT)/calibration.json --preview $(OUT)/calibration.png
	@echo "Demo outputs in $(OUT)/: score_sheet.txt and result.json (replayed game), calibration.json and calibration.png ($(SAMPLE)/video.mp4)"

test: $(STAMP)
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) out
