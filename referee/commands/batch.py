"""`referee batch`: many matches, each refereed, highlighted and reported, then the tournament page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rules.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "batch",
        help="referee a tournament's matches from a manifest, on a local pool or on Ray, and write its page",
        description=(
            "For each match of MANIFEST (CSV or JSON lines: id, video, game, and optionally profile, calibration, "
            "session, config, players, pose; docs/formats.md, 'Batch manifest'), do what `referee run`, "
            "`referee highlights` and `referee report` do, in DIR/matches/ID/. A match already complete (its "
            "stamp matches its inputs and outputs by hash) is skipped; a match that fails records its error and "
            "the others go on; Ctrl-C leaves no match counted complete that is not. Then DIR/reel.mp4 (the "
            "day's highlights), DIR/tournament.html and DIR/batch.json. Exit 1 if a match failed. See "
            "docs/review.md, 'Tournaments'."
        ),
    )
    p.add_argument("manifest", type=Path, metavar="MANIFEST", help="the matches: a CSV or JSON-lines file")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the matches and the page")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="matches at once: worker processes of the local pool (default: 1), or the CPUs of a Ray "
                        "head started here (--ray local)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run the matches on Ray: 'auto' (the cluster of `ray start --head` on this machine), a "
                        "head's host:port, or 'local' (a head started here)")
    p.add_argument("--title", default="Tournament", help="the page's title (default: Tournament)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or per-match lines")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from record.batch import read_manifest
    from referee.batch import MatchOutcome, local_pool, on_ray, run_batch

    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs is {args.jobs}; give 1 or more")
    if args.ray is not None and args.jobs is not None and args.ray != "local":
        raise InputError("--jobs sets the CPUs of a Ray head started here; with --ray "
                         f"{args.ray} the cluster's own CPUs are used: leave out --jobs")
    matches = read_manifest(args.manifest)
    jobs = args.jobs or 1
    executor = on_ray(args.ray, jobs) if args.ray is not None else local_pool(jobs)
    bar = tqdm(total=len(matches), unit="match", desc="batch", disable=args.quiet, leave=False, dynamic_ncols=True)

    def heard(outcome: MatchOutcome) -> None:
        bar.update()
        if not args.quiet:
            detail = outcome.error if outcome.error else (outcome.result or {}).get("status", "")
            bar.write(f"{outcome.match_id}: {outcome.status} ({outcome.seconds:.1f} s) {detail}")

    try:
        summary = run_batch(matches, args.out, executor, heard, title=args.title)
    except KeyboardInterrupt:
        print(f"referee: interrupted; matches finished so far are stamped in {args.out}/matches, the others are "
              f"refereed by the next `referee batch {args.manifest} --out {args.out}`", file=sys.stderr)
        return 130
    finally:
        bar.close()
    failed = [o for o in summary.outcomes if o.status == "failed"]
    for outcome in failed:
        print(f"referee: error: match {outcome.match_id}: {outcome.error} ({outcome.match_dir}/error.json)",
              file=sys.stderr)
    if not args.quiet:
        reel = f", {summary.day_reel}" if summary.day_reel is not None else ""
        print(f"{len(summary.outcomes)} matches: {summary.count('done')} refereed, {summary.count('skipped')} "
              f"already complete, {len(failed)} failed in {summary.seconds:.1f} s; wrote {summary.page}{reel} and "
              f"{args.out / 'batch.json'}")
    return 1 if failed else 0
