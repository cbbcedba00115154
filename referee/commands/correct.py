"""`referee correct`: record umpire corrections to a run and replay it with them."""

from __future__ import annotations

import argparse
from pathlib import Path

from record.run_folder import CORRECTED_RESULT_FILE, CORRECTIONS_FILE, DIFF_FILE, EVENTS_FILE, RESULT_FILE, utc_now


class _AskAction(argparse.Action):
    """Collect --confirm/--overturn/--snapshot/--foul in command-line order (ids follow that order)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        values = (values,) if isinstance(values, str) else tuple(values)
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), (self.const, values)])


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "correct",
        help="overturn or confirm calls, fix snapshots, add missed fouls; replay with the corrections",
        description=(
            "Record umpire corrections to a run folder of `referee run` and replay the whole log with them. "
            f"Corrections are appended to RUN_DIR/{CORRECTIONS_FILE} with who (--by) and why (--reason); "
            f"{EVENTS_FILE} is never changed. Writes RUN_DIR/{CORRECTED_RESULT_FILE} and RUN_DIR/{DIFF_FILE} "
            f"(what changed against {RESULT_FILE}) and prints the diff. Ids are those of the report: L<line> of "
            f"{EVENTS_FILE}, C<n> of corrections. A correction that makes no sense writes nothing. "
            "Without a new correction, the recorded ones are replayed again. See docs/review.md."
        ),
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the --out folder of `referee run`")
    p.add_argument("--overturn", action=_AskAction, dest="asks", const="overturn", metavar="ID",
                   help="overturn a play_line_crossing, table_movement or umpire_foul: replay as if it never happened")
    p.add_argument("--confirm", action=_AskAction, dest="asks", const="confirm", metavar="ID",
                   help="confirm a call (recorded; the call stands)")
    p.add_argument("--snapshot", action=_AskAction, dest="asks", const="snapshot", nargs="+",
                   metavar="ID_OR_EDIT",
                   help="fix the snapshot of table_settled ID: ID then edits COLOUR@FROM=TO, e.g. "
                        "`--snapshot L14 red@slot:3/5=slot:3/4`; FROM none adds a missed ball, TO none drops one. "
                        "Places: slot:POSITION/SLOT, cell:ROW/COL, grouped, play_area, gutter, off_table")
    p.add_argument("--foul", action=_AskAction, dest="asks", const="foul", metavar="PLAYER:KIND[:free]",
                   help="add a foul the camera missed (KIND: interference, touching_moving_ball, play_line, "
                        "table_movement; :free awards the opponent a free shot); needs --at")
    p.add_argument("--file", type=Path, metavar="FILE",
                   help="umpire events as JSON lines (confirm, overturn, snapshot_correction, umpire_foul; "
                        "docs/events.md); a line's own by/reason win over --by/--reason")
    p.add_argument("--at", type=float, metavar="SECONDS",
                   help="when the umpire's input applies (default: the time of the event it targets)")
    p.add_argument("--by", default="", metavar="NAME", help="who decided (required)")
    p.add_argument("--reason", default="", metavar="TEXT", help="why (required)")
    p.add_argument("--quiet", action="store_true", help="do not print the diff")
    p.set_defaults(handler=run, asks=[])


def run(args: argparse.Namespace) -> int:
    from review.corrections import Ask, CorrectionError, apply_corrections, load_run, make_corrections, record

    asks = [Ask(action, values) for action, values in args.asks]
    if asks and not args.by:
        raise CorrectionError("--by is required: say who decided the correction")
    if asks and not args.reason:
        raise CorrectionError("--reason is required: say why")
    loaded = load_run(args.run_dir)
    recorded_at = utc_now()
    new = make_corrections(loaded, asks, args.file, args.at, args.by, args.reason, recorded_at)
    if not new and not loaded.corrections:
        raise CorrectionError("nothing to correct: give --overturn, --confirm, --snapshot, --foul or --file")
    outcome = apply_corrections(loaded, new)
    record(loaded, new, outcome)
    if not args.quiet:
        for correction in loaded.corrections + tuple(new):
            print(correction.describe())
        print("\n".join(outcome.diff.lines()))
        print(f"wrote {args.run_dir / CORRECTED_RESULT_FILE} and {args.run_dir / DIFF_FILE}"
              + (f"; recorded {len(new)} correction(s) in {args.run_dir / CORRECTIONS_FILE}" if new else ""))
    return 0
