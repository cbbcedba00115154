"""`referee replay`: run an event log through a rules engine and print the score sheet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rules.errors import InputError
from rules.files import write_json_atomically
from rules.games import GAMES, load_config, table_config
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
            "line number, and no result is written. Given a run folder of `referee run`, it replays the "
            "folder's events.jsonl with the game and rules config of its manifest: no other flag is needed."
        ),
    )
    parser.add_argument("log", type=Path, metavar="EVENTS.jsonl|RUN_DIR",
                        help="the event log to replay, or a run folder")
    parser.add_argument("--game", choices=sorted(GAMES), help="which game's rules apply (not with a run folder)")
    parser.add_argument("--config", type=Path, metavar="FILE", help="game config (JSON) overriding the defaults")
    parser.add_argument("--profile", metavar="FILE", help="the table profile the log was played on: the settings "
                        "the table decides (Star Cluster Ball's slots per Position) come from it (not with a run "
                        "folder; default: the game's shipped table)")
    parser.add_argument("--out", type=Path, default=Path("."), metavar="DIR",
                        help="folder for result.json and score_sheet.txt (default: current folder)")
    parser.add_argument("--quiet", action="store_true", help="do not print the score sheet")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from record.run_folder import EVENTS_FILE, MANIFEST_FILE, RESULT_FILE

    log, game = args.log, args.game
    if args.out.exists() and not args.out.is_dir():
        raise InputError(f"--out {args.out} is a file, not a folder; give a folder for result.json")
    if (args.out / EVENTS_FILE).exists() or (args.out / MANIFEST_FILE).exists():
        raise InputError(f"--out {args.out} is a run folder, whose {RESULT_FILE} is the run's own record; give "
                         "another --out folder")
    if args.log.is_dir():  # a run folder: its manifest says the game and the rules config
        from record.manifest import read_manifest

        if args.game or args.config or args.profile:
            raise InputError(f"{args.log} is a run folder: its manifest gives the game and the rules config; "
                             "leave out --game, --config and --profile")
        manifest = read_manifest(args.log)
        log, game, config = args.log / EVENTS_FILE, manifest.game, manifest.rules_config
    else:
        if game is None:
            raise InputError("--game is required when replaying an event log (or give a run folder)")
        from calibration.profile import load_profile

        profile = load_profile(args.profile or game)
        if profile.game != game:
            raise InputError(f"--profile {args.profile} is a {profile.game} table, not {game}; give the {game} "
                             "table the log was played on")
        config = table_config(load_config(args.config) if args.config else {}, profile.rules_settings, profile.name)
    events = read_log(log)
    replayed = replay(events, game, config)
    for warning in replayed.warnings:
        print(f"referee: warning: {warning}", file=sys.stderr)
    sheet = render_score_sheet(replayed, str(log))
    result = build_result(replayed, {"log": str(log), "events": len(events)})
    write_json_atomically(args.out / "result.json", result)
    (args.out / "score_sheet.txt").write_text(sheet, encoding="utf-8")
    if not args.quiet:
        sys.stdout.write(sheet)
    print(f"wrote {args.out / 'result.json'} and {args.out / 'score_sheet.txt'}")
    return 0
