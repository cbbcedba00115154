"""`referee serve`: referee live with a console beside it: a scoreboard, an umpire's console, the video and a
JSON API in the browser (docs/console.md)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rules.errors import InputError

from .run import add_match_options, report_end, run_spec, stop_on_signals

if TYPE_CHECKING:
    from referee.session import RunSpec

TOKEN_ENV = "REFEREE_TOKEN"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve",
        help="referee live with a scoreboard, an umpire console and a JSON API in the browser",
        description=(
            "Referee a camera or a stream as `referee run` does, or a video file played at its own rate (refereed "
            "frame by frame, so it is called exactly as `referee run` calls it; --live: through the live path, as "
            "a camera would be), writing the same run folder, and serve the match as it happens: a scoreboard (/), the umpire's "
            "console (/umpire), the annotated video, the state as JSON and server-sent events, and the umpire's "
            "inputs, each written to events.jsonl (see docs/console.md). Without --session or --players the "
            "umpire sets the match up in the console. Listens on 127.0.0.1 unless --host says otherwise; "
            "another host needs a --token. Ctrl-C or SIGTERM stops refereeing and finishes the record; "
            "--resume continues it."
        ),
    )
    add_match_options(p)
    p.add_argument("--live", action="store_true", help="play a video file through the live path, as a camera: frames "
                                                       "are skipped and pose is not waited for when the referee falls "
                                                       "behind (default: at its own rate, every frame refereed)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine "
                                                       "only); any other needs --token")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000; 0: any free port)")
    p.add_argument("--tables", type=Path, help="a folder of table profiles (*.json) the umpire may choose from when "
                                                "setting the match up in the console (besides --profile or the "
                                                "shipped table)")
    p.add_argument("--token", help=f"the umpire's token (default: ${TOKEN_ENV}; on 127.0.0.1 without one, a new "
                                   "one is made and printed in the umpire console's address)")
    p.set_defaults(handler=serve)


def serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if token is None and not loopback(args.host):
        raise InputError(f"--host {args.host} lets other machines reach the umpire's console: give a --token (or "
                         f"set {TOKEN_ENV}), or leave out --host to listen on 127.0.0.1 only")
    if not 0 <= args.port <= 65535:
        raise InputError(f"--port {args.port} is not a port; give 0..65535 (0: any free port)")
    spec = run_spec(args, live=args.live, paced=not args.resume)
    listener = listen(args.host, args.port)
    try:
        return _serve(args, spec, listener, token)
    finally:
        listener.close()


def _serve(args: argparse.Namespace, spec: RunSpec, listener: socket.socket, token: str | None) -> int:
    import uvicorn

    from referee.claim import recorded_files
    from referee.console.app import ConsoleSettings, create_app
    from referee.console.hub import ConsoleHub

    def say(t: float, message: str) -> None:
        if not args.quiet:
            print(f"referee: warning: {message}", file=sys.stderr)

    waiting = not args.resume and args.session is None and args.players is None
    if waiting and spec.start == "new" and spec.out.is_dir() and recorded_files(spec.out):
        raise InputError(f"--out {spec.out} already holds a run: continue it with --resume, start afresh with "
                         "--fresh (the old folder is moved aside), or use another --out folder")
    if args.tables is not None and not waiting:
        raise InputError("--tables is for a match set up in the console; leave it out with --session, --players "
                         "or --resume (give the table with --profile)")
    if args.tables is not None and not args.tables.is_dir():
        raise InputError(f"--tables {args.tables} is not a folder; give a folder of table profiles (*.json)")
    hub = ConsoleHub.waiting_for_setup(spec, say, tables=args.tables) if waiting else ConsoleHub.open(spec, say)
    with hub, stop_on_signals(hub):
        host, port = listener.getsockname()[:2]
        address = f"http://{f'[{host}]' if ':' in host else host}:{port}"
        print(f"console at {address}/", flush=True)
        if token is None:
            token = secrets.token_urlsafe(24)
            print(f"umpire console at {address}/umpire#token={token}", flush=True)
        else:
            print(f"umpire console at {address}/umpire (with the token given)", flush=True)
        config = uvicorn.Config(create_app(hub, ConsoleSettings(token)), log_level="warning", access_log=False,
                                timeout_graceful_shutdown=1)
        uvicorn.Server(config).run(sockets=[listener])  # until Ctrl-C or SIGTERM, which then stops the referee
        summary = hub.wait()
        if hub.failure is not None:  # the pages said so while they were served; the exit status says so too
            raise hub.failure
    if summary is None or hub.session is None:
        return 0
    return report_end(summary, hub.session, args, "serve")


def loopback(host: str) -> bool:
    """Only this machine can reach `host`."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, before anything else starts: a port in use is one clear line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as error:
        raise InputError(f"cannot listen on {host}:{port} ({error.strerror or error}); pick another --port or "
                         "--host") from None
