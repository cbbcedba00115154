# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
OUT ?= out/demo

MODEL_VENV := .venv-models
POSE_MODEL := models/build/yolo11n-pose-int8.onnx  # the referee's; build_pose.py writes it last, after the float one

.PHONY: demo test env models clean browser

# The set-up of demo and test, in a make of its own with two jobs: the referee's environment is made while torch's (for
# the pose model's build) is, both mostly downloads and unpacking (a fresh 2-core machine: 168 s together, 236 s one
# after the other). The rest of each recipe runs line by line, and goals named together (`make clean test`) one after
# the other.
SET_UP = $(MAKE) --no-print-directory --jobs=2

env: $(STAMP)

models: $(POSE_MODEL)

# The build environment for models (torch, ultralytics) is separate: the referee never imports them. Its torch is
# pip's CUDA build (6.3 GB installed): with less disk free than that, say so before a minute of downloads fails.
MODEL_VENV_GB := 7
$(MODEL_VENV)/.installed-stamp: models/requirements-build.txt
	@free=$$(df -Pk . | awk 'NR == 2 {print int($$4 / 1048576)}'); if [ "$$free" -lt $(MODEL_VENV_GB) ]; then \
		echo "make: $(MODEL_VENV) (torch and ultralytics, to build the pose model) needs about $(MODEL_VENV_GB) GB" \
			"of free disk here and $$free GB is free: free some space, then run make again" >&2; exit 1; fi
	$(PYTHON) -m venv $(MODEL_VENV)
	$(MODEL_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MODEL_VENV)/bin/python -m pip install --quiet -r models/requirements-build.txt
	touch $@

$(POSE_MODEL): models/build_pose.py $(MODEL_VENV)/.installed-stamp
	$(MODEL_VENV)/bin/python models/build_pose.py

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,batch]'
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
REFEREED := sample_videos/starcluster/chain_grand_slam
RUN := $(OUT)/run

demo:
	@$(SET_UP) env models
	$(BIN)/referee replay examples/starcluster_full_game.jsonl --game starcluster --out $(OUT)
	$(BIN)/referee calibrate $(SAMPLE)/video.mp4 --profile starcluster --out $(OUT)/calibration.json --preview $(OUT)/calibration.png
	$(BIN)/referee run $(REFEREED)/video.mp4 --game starcluster --session $(REFEREED)/truth.json --out $(RUN) --annotate --fresh
	$(BIN)/referee eval $(RUN) $(REFEREED)/truth.json --json $(RUN)/eval.json
	$(BIN)/referee highlights $(RUN) $(REFEREED)/video.mp4
	$(BIN)/referee report $(RUN) --out $(RUN)/report.html
	@echo "Demo outputs:"
	@echo "  $(OUT)/score_sheet.txt, $(OUT)/result.json: a full game replayed from examples/starcluster_full_game.jsonl"
	@echo "  $(OUT)/calibration.json, $(OUT)/calibration.png: the table found in $(SAMPLE)/video.mp4"
	@echo "  $(RUN)/: $(REFEREED)/video.mp4 refereed (one causal pass, as a live feed): events.jsonl, decisions.jsonl, result.json, eval.json (against its truth),"
	@echo "  $(RUN)/annotated.mp4, $(RUN)/highlights/ (clips, reel.mp4, index.json) and $(RUN)/report.html (open it in a browser)"
	@echo "  (a run folder is never written over: the run of an earlier make demo, if any, was moved aside to $(RUN).replaced-<time>)"

# mypy checks the packages' type hints (pyproject.toml [tool.mypy]) before the suite runs. The suite runs in
# TEST_WORKERS processes (pytest-xdist), each given whole test files (a file's tests run in order, in one process,
# and its module fixtures are made once): one per core, at most 4 (the longest file takes about 3 minutes);
# TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))
test:
	@$(SET_UP) env models browser
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

clean:
	rm -rf $(VENV) $(MODEL_VENV) models/build out

# Not part of demo or test: the referee's colour detector side by side with YOLO11n + ByteTrack on the same
# samples (benchmarks/README.md). The first time it trains the YOLO baseline on the CPU (about 20 minutes on
# 2 cores, models/build_ball_yolo.py); the weights are built only when missing.
BALL_YOLO := models/build/ball_yolo11n.pt
.PHONY: bench-yolo

bench-yolo: $(STAMP) $(BALL_YOLO)
	OMP_NUM_THREADS=1 $(BIN)/python benchmarks/yolo_bytetrack.py --json out/bench-yolo/comparison.json

$(BALL_YOLO): | $(STAMP) $(MODEL_VENV)/.installed-stamp
	OMP_NUM_THREADS=1 $(MODEL_VENV)/bin/python models/build_ball_yolo.py
