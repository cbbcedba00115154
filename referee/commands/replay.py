"""`referee replay`: run an event log through a rules engine and print the score sheet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rules.files import write_json_atomically
from rules.games import GAMES, load_config
from rules.replay import read_log, replay
from rules.result import build_result
from rules.scoresheet import render_score_sheet


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay an event log and print the score sheet",
        description=(
            "Replay a JSON-lines event log (observations and umpire inputs, see docs/events.md) "
            "through a game's rules engine. Prints the score sheet (every shot, turn and round) "
            "and writes result.json (docs/result.md). A malformed line stops the replay with its "
            "line number, and no result is written."
        ),
    )
    parser.add_argument("log", type=Path, metavar="EVENTS.jsonl", help="the event log to replay")
    parser.add_argument("--game", required=True, choices=sorted(GAMES), help="which game's rules apply")
    parser.add_argument("--config", type=Path, metavar="FILE", help="game config (JSON) overriding the defaults")
    parser.add_argument("--out", type=Path, default=Path("."), metavar="DIR",
                        help="folder for result.json and score_sheet.txt (default: current folder)")
    parser.add_argument("--quiet", action="store_true", help="do not print the score sheet")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config) if args.config else {}
    events = read_log(args.log)
    replayed = replay(events, args.game, config)
    sheet = render_score_sheet(replayed, str(args.log))
    result = build_result(replayed, {"log": str(args.log), "events": len(events)})
    write_json_atomically(args.out / "result.json", result)
    (args.out / "score_sheet.txt").write_text(sheet, encoding="utf-8")
    if not args.quiet:
        sys.stdout.write(sheet)
    print(f"wrote {args.out / 'result.json'} and {args.out / 'score_sheet.txt'}")
    return 0
