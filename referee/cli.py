"""`referee`: one command-line app, thin over the library packages."""

from __future__ import annotations

import argparse
import importlib
import sys

from rules.errors import InputError

from . import __version__

# Subcommand modules under referee/commands, in the order --help lists them.
COMMANDS = ("replay", "calibrate", "simulate", "run", "serve", "eval", "annotate", "highlights", "report", "correct",
            "batch")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee",
        description=(
            "A camera referee for Star Cluster Ball and Piratenbillard: "
            "replay event logs, calibrate the camera, referee videos."
        ),
    )
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMANDS:
        importlib.import_module(f"referee.commands.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except InputError as error:
        print(f"referee: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:  # before a run has set its own Ctrl-C handling (a run finishes its record)
        print("referee: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
