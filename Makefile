# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
OUT ?= out/demo

MODEL_VENV := .venv-models
POSE_MODEL := models/build/yolo11n-pose.onnx

.PHONY: demo test env models clean browser

env: $(STAMP)

models: $(POSE_MODEL)

# The build environment for models (torch, ultralytics) is separate: the referee never imports them.
$(MODEL_VENV)/.installed-stamp: models/requirements-build.txt
	$(PYTHON) -m venv $(MODEL_VENV)
	$(MODEL_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MODEL_VENV)/bin/python -m pip install --quiet -r models/requirements-build.txt
	touch $@

$(POSE_MODEL): models/build_pose.py $(MODEL_VENV)/.installed-stamp
	$(MODEL_VENV)/bin/python models/build_pose.py

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Headless Chromium for the review report's browser test (tests/review), from Debian's package: the
# binary is the stamp, so apt-get runs only when it is missing. Playwright drives it; `playwright install` never runs.
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

browser: $(CHROMIUM)

$(CHROMIUM):
	$(SUDO) apt-get update
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-liberation

SAMPLE := sample_videos/starcluster/full_game

demo: $(STAMP) $(POSE_MODEL)
	$(BIN)/referee replay examples/starcluster_full_game.jsonl --game starcluster --out $(OUT)
	$(BIN)/referee calibrate $(SAMPLE)/video.mp4 --profile starcluster --out $(OUT)/calibration.json --preview $(OUT)/calibration.png
	@echo "Demo outputs in $(OUT)/: score_sheet.txt and result.json (replayed game), calibration.json and calibration.png ($(SAMPLE)/video.mp4)"

test: $(STAMP) $(POSE_MODEL) browser
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) $(MODEL_VENV) models/build out

