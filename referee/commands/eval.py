"""`referee eval`: score a run folder against a simulation's truth.json."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="score a referee run against ground truth",
        description=(
            "Score the folder written by `referee run` against the truth.json of a simulated video: "
            "final scores, per-shot decisions, slot/space assignment, settle timing, ball detection "
            "(precision, recall, localisation in mm) and tracking (MOTA, IDF1, ID switches, by "
            "py-motmetrics). Prints a table; --json writes every figure and every mistake."
        ),
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the --out folder of referee run")
    parser.add_argument("truth", type=Path, metavar="TRUTH.json", help="truth.json written by referee simulate")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the full report as JSON ('-': stdout)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from vision.evaluate import evaluate, format_table, load_run, load_truth

    truth = load_truth(args.truth)
    report = evaluate(load_run(args.run_dir, truth), truth)
    data = json.dumps(report.to_json(), indent=2) + "\n"
    if args.json is not None and str(args.json) == "-":
        sys.stdout.write(data)
        return 0
    sys.stdout.write(format_table(report, str(args.run_dir)))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(data, encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
