"""The console's web app: the pages, the state (JSON, server-sent events), the video, the umpire's inputs and a
few files of the run folder, over one `ConsoleHub` (docs/console.md).

Security: reading is open to whoever can reach the server (it binds 127.0.0.1 unless told otherwise); every
umpire POST is checked before its body is even read: a page of another site (its `Origin`) gets 403, a request
without the bearer token 401, a body that is not JSON 415; then a body that does not fit its model gets 422
naming the field. None of those reaches the referee, so none writes anything. Files are served only by name
from two fixed lists (the packaged pages, four files of the run folder): no path from a request is ever
joined to a folder.
"""

from __future__ import annotations

import asyncio
import hmac
import mimetypes
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPBearer
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from record.run_folder import DECISIONS_FILE, EVENTS_FILE, RESULT_FILE
from referee.session import Verdict
from rules.errors import InputError
from rules.events import (
    BallSighting,
    Confirm,
    Event,
    Location,
    OutOfBallsChoice,
    Overturn,
    Place,
    PlayerSpec,
    RoundEnd,
    RoundPause,
    RoundResume,
    RoundStart,
    Snapshot,
    SnapshotCorrection,
    UmpireFoul,
)

from .hub import ConsoleHub
from .state import table_json

UMPIRE_PATH = "/api/umpire/"
ANSWER_S = 5.0  # an umpire POST waits this long for the referee's verdict, then answers 202 pending
KEEPALIVE_S = 15.0  # an idle event stream gets a ": ping" comment this often
# GET /run/{name}: these files of the run folder, nothing else, and how each is served
RUN_FILES = {EVENTS_FILE: "application/x-ndjson", DECISIONS_FILE: "application/x-ndjson",
             RESULT_FILE: "application/json", "report.html": "text/html"}
PAGES = {"/": "scoreboard.html", "/umpire": "umpire.html"}
BOUNDARY = "frame"


@dataclass(frozen=True)
class ConsoleSettings:
    token: str  # the umpire's bearer token


# ---------------------------------------------------------------------------- request bodies


class Body(BaseModel):
    """Every umpire POST: unknown fields are refused, types are not coerced, `by` names who acted."""

    model_config = ConfigDict(extra="forbid", strict=True)
    by: str = Field("umpire", min_length=1, max_length=60)


class SetupPlayer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: str = Field(min_length=1, max_length=40)  # the ball colour that identifies the player
    name: str = Field("", max_length=60)
    side: Literal["right", "left"] | None = None
    seat: int | None = Field(None, ge=0, le=3)
    colour: str | None = Field(None, pattern=r"^#[0-9a-fA-F]{6}$")


class SetupBody(Body):
    players: list[SetupPlayer] = Field(min_length=1, max_length=4)
    rules: dict[str, Any] | None = None  # rules config options (docs/config.md)
    table: str | None = Field(None, max_length=120)  # one of GET /api/tables; None: the first


class RoundBody(Body):
    action: Literal["start", "pause", "resume", "end"]
    reason: str = Field("", max_length=200)


def one_of(options: tuple[str, ...]) -> AfterValidator:
    """A string field that must be one of `options` (the rules' own list, so the API never drifts from it)."""
    def check(value: str) -> str:
        if value not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return value

    return AfterValidator(check)


class ChoiceBody(Body):
    player: str = Field(min_length=1, max_length=40)
    choice: Annotated[str, one_of(OutOfBallsChoice.CHOICES)]


class ReviewBody(Body):
    target: str = Field(min_length=1, max_length=40)  # the id of the event behind the call, e.g. "L12"
    verdict: Literal["confirm", "overturn"]
    reason: str = Field("", max_length=200)


class BallBody(BaseModel):
    """A resting ball as the state's table lists it."""

    model_config = ConfigDict(extra="forbid", strict=True)
    owner: str = Field(min_length=1, max_length=40)
    place: Literal["slot", "play_area", "gutter", "grouped", "cell", "off_table"]
    position: int | None = None
    slot: int | None = None
    row: int | None = None
    col: int | None = None

    @model_validator(mode="after")
    def _a_place(self) -> BallBody:
        self.sighting()  # a slot needs its position and slot, a cell its row and col, nothing else has them
        return self

    def sighting(self) -> BallSighting:
        return BallSighting(self.owner, Location(Place(self.place), self.position, self.slot, self.row, self.col))


class CorrectionBody(Body):
    target: str = Field(min_length=1, max_length=40)  # the table_settled to correct (the state's table.event)
    balls: list[BallBody] = Field(max_length=200)
    reason: str = Field("", max_length=200)


class FoulBody(Body):
    player: str = Field(min_length=1, max_length=40)
    foul: Annotated[str, one_of(UmpireFoul.FOULS)]
    free_shot: bool = False
    reason: str = Field("", max_length=200)


class StopBody(Body):
    reason: str = Field("", max_length=200)


ROUND_EVENTS: dict[str, Callable[[RoundBody], Event]] = {
    "start": lambda body: RoundStart(0.0, by=body.by),
    "end": lambda body: RoundEnd(0.0, by=body.by),
    "pause": lambda body: RoundPause(0.0, by=body.by, reason=body.reason),
    "resume": lambda body: RoundResume(0.0, by=body.by, reason=body.reason),
}


# ---------------------------------------------------------------------------- the app


def create_app(hub: ConsoleHub, settings: ConsoleSettings) -> FastAPI:
    """The console over `hub`; its lifespan attaches the hub to the server's event loop and starts it."""
    static = resources.files("referee.console").joinpath("static")
    pages = {entry.name: entry for entry in static.iterdir() if entry.is_file()} if static.is_dir() else {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        hub.attach(asyncio.get_running_loop())
        hub.start()
        yield

    app = FastAPI(title="referee console", lifespan=lifespan,
                  description="The live referee's state, event stream, video and umpire inputs (docs/console.md).")
    app.add_middleware(UmpireGuard, token=settings.token)
    app.add_exception_handler(RequestValidationError, _invalid)
    # declares the bearer token to /docs; the check itself is UmpireGuard's, made before the body is read
    umpire = [Security(HTTPBearer(auto_error=False, description="the token `referee serve` printed or was given"))]

    def page(name: str) -> Response:
        entry = pages.get(name)
        if entry is None:
            return JSONResponse({"detail": "not found"}, 404)
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return Response(entry.read_bytes(), media_type=kind, headers={"X-Content-Type-Options": "nosniff"})

    for path, name in PAGES.items():
        app.add_api_route(path, partial(page, name), methods=["GET"], include_in_schema=False)

    @app.get("/static/{name}", include_in_schema=False)
    def static_file(name: str) -> Response:
        return page(name)

    @app.get("/api/state", summary="the match as it stands (the state JSON of docs/console.md)")
    def state() -> Response:
        return Response(hub.current(), media_type="application/json")

    @app.get("/api/tables", summary="the tables the umpire may choose from at set-up, the first the default")
    async def tables() -> dict[str, Any]:
        return {"tables": list(hub.tables) or [Path(hub.spec.profile or hub.spec.game).stem]}

    @app.get("/api/table", summary="the table's geometry, in board mm, for the diagram")
    def table() -> dict[str, Any]:
        return table_json(hub.profile)

    @app.get("/api/stream", summary="server-sent events: the current state, then each new version")
    async def stream() -> StreamingResponse:
        async def events() -> AsyncIterator[str]:
            async for item in hub.states.follow(KEEPALIVE_S):
                yield ": ping\n\n" if item is None else f"event: state\nid: {item[0]}\ndata: {item[1]}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/api/video.mjpg", summary="the annotated live frames as MJPEG, at most 5 a second, 640 px wide")
    async def video() -> StreamingResponse:
        async def parts() -> AsyncIterator[bytes]:
            with hub.watching():
                async for item in hub.pictures.follow(KEEPALIVE_S):
                    if item is not None:
                        yield (f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(item[1])}\r\n\r\n"
                               .encode() + item[1] + b"\r\n")

        return StreamingResponse(parts(), media_type=f"multipart/x-mixed-replace; boundary={BOUNDARY}",
                                 headers={"Cache-Control": "no-cache"})

    @app.get("/api/video.jpg", summary="the latest annotated frame (204 before the first)")
    async def picture() -> Response:
        item = await run_in_threadpool(hub.picture)
        return Response(status_code=204) if item is None else Response(item[1], media_type="image/jpeg",
                                                                        headers={"Cache-Control": "no-cache"})

    @app.get("/run/{name}", summary="a file of the run folder: " + ", ".join(RUN_FILES))
    def run_file(name: str) -> Response:
        path = hub.spec.out / name if name in RUN_FILES else None
        if path is None or not path.is_file():
            return JSONResponse({"detail": f"not found; the run folder's files served are {', '.join(RUN_FILES)}"},
                                404)
        return Response(path.read_bytes(), media_type=RUN_FILES[name], headers={"X-Content-Type-Options": "nosniff"})

    @app.post("/api/umpire/setup", dependencies=umpire, summary="set up the match and start it (only while "
              "waiting for setup)")
    async def setup(body: SetupBody) -> JSONResponse:
        problem = hub.rules_problem(body.rules, body.table) if body.rules else None
        if problem is not None:
            return _unfit("rules", problem)
        if body.table is not None and body.table not in hub.tables:
            return _unfit("table", f"must be one of {', '.join(hub.tables)} (GET /api/tables)")
        players = tuple(PlayerSpec(p.id, p.name, p.side, p.seat) for p in body.players)
        colours = {p.id: p.colour for p in body.players if p.colour is not None}
        try:
            await run_in_threadpool(hub.set_up, players, colours, body.rules, body.by, body.table)
        except InputError as error:
            return _refused(str(error))
        return JSONResponse({"accepted": True, "event_id": None, "reason": None})

    @app.post("/api/umpire/round", dependencies=umpire, summary="start, pause, resume or end the round")
    async def round_(body: RoundBody) -> JSONResponse:
        return await _answer(lambda: hub.submit(ROUND_EVENTS[body.action](body)))

    @app.post("/api/umpire/choice", dependencies=umpire, summary="answer the out-of-balls choice")
    async def choice(body: ChoiceBody) -> JSONResponse:
        return await _answer(lambda: hub.submit(OutOfBallsChoice(0.0, player=body.player, choice=body.choice,
                                                                 by=body.by)))

    @app.post("/api/umpire/review", dependencies=umpire, summary="confirm or overturn a call")
    async def review(body: ReviewBody) -> JSONResponse:
        kind = Confirm if body.verdict == "confirm" else Overturn
        return await _answer(lambda: hub.submit(kind(0.0, target=body.target, by=body.by, reason=body.reason)))

    @app.post("/api/umpire/correction", dependencies=umpire, summary="correct the balls of a settled table")
    async def correction(body: CorrectionBody) -> JSONResponse:
        snapshot = Snapshot(tuple(ball.sighting() for ball in body.balls))
        return await _answer(lambda: hub.submit(SnapshotCorrection(0.0, target=body.target, snapshot=snapshot,
                                                                   by=body.by, reason=body.reason)))

    @app.post("/api/umpire/foul", dependencies=umpire, summary="call a foul the camera did not")
    async def foul(body: FoulBody) -> JSONResponse:
        return await _answer(lambda: hub.submit(UmpireFoul(0.0, player=body.player, foul=body.foul,
                                                           free_shot=body.free_shot, by=body.by,
                                                           reason=body.reason)))

    @app.post("/api/umpire/undo", dependencies=umpire, summary="undo the last umpire input (overturn it)")
    async def undo(body: Body) -> JSONResponse:
        return await _answer(lambda: hub.undo(body.by))

    @app.post("/api/umpire/stop", dependencies=umpire, summary="stop refereeing; the record is finished as "
              "a stopped run")
    async def stop(body: StopBody) -> JSONResponse:
        try:
            ended = await run_in_threadpool(hub.stop_match, body.by, body.reason)
        except InputError as error:
            return _refused(str(error))
        return JSONResponse({"accepted": True, "event_id": None, "reason": None} | ({} if ended else {"pending": True}),
                            200 if ended else 202)

    return app


async def _answer(submit: Callable[[], Future[Verdict]]) -> JSONResponse:
    """The referee's verdict on an input: 200 accepted, 409 refused (and why), 202 pending after ANSWER_S."""
    try:
        future = submit()
    except InputError as error:
        return _refused(str(error))
    try:  # shielded: a timeout here must not cancel the referee's future
        verdict = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), ANSWER_S)
    except TimeoutError:
        return JSONResponse({"accepted": False, "event_id": None, "reason": None, "pending": True}, 202)
    return JSONResponse({"accepted": verdict.accepted, "event_id": verdict.event_id, "reason": verdict.reason},
                        200 if verdict.accepted else 409)


def _refused(reason: str) -> JSONResponse:
    return JSONResponse({"accepted": False, "event_id": None, "reason": reason}, 409)


def _unfit(field: str, problem: str) -> JSONResponse:
    """422 for a body field that fits its type but not this match (as `_invalid` words it)."""
    return JSONResponse({"detail": [{"loc": ["body", field], "msg": problem, "type": "value_error"}],
                         "message": f"{field}: {problem}"}, 422)


async def _invalid(request: Request, error: Exception) -> JSONResponse:
    """422 whose `message` names each field that is wrong, e.g. `players[0].side: Input should be 'right' or
    'left'`; `detail` keeps FastAPI's list (without echoing the input)."""
    assert isinstance(error, RequestValidationError)
    problems = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in error.errors()]
    message = "; ".join(f"{'body' if p['type'] == 'json_invalid' else _field(p['loc'])}: {p['msg']}"
                        for p in problems)
    return JSONResponse({"detail": problems, "message": message}, 422)


def _field(loc: list[Any]) -> str:
    """("body", "players", 0, "side") -> "players[0].side"."""
    name = ""
    for part in loc[1:] if loc and loc[0] == "body" else loc:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "body"


class UmpireGuard:
    """Checks every request under /api/umpire/ before the app reads its body: 403 when it comes from a page of
    another site (an `Origin` that is not this server), 401 without the bearer token, 415 unless the body is
    JSON. A cross-site form post is refused by the first and the last, and cannot carry the token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(UMPIRE_PATH):
            refusal = self._refusal(Headers(scope=scope), scope.get("scheme", "http"))
            if refusal is not None:
                status, detail, headers = refusal
                await JSONResponse({"detail": detail}, status, headers=headers)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, headers: Headers, scheme: str) -> tuple[int, str, dict[str, str]] | None:
        origin = headers.get("origin")
        if origin is not None and origin != f"{scheme}://{headers.get('host', '')}":
            return 403, f"origin {origin} is not this server: umpire inputs come from its own pages", {}
        given = headers.get("authorization", "")
        scheme_name, _, token = given.partition(" ")
        if scheme_name.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), self.token):
            return 401, "umpire inputs need the umpire's token: Authorization: Bearer <token>", \
                {"WWW-Authenticate": "Bearer"}
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return 415, f"the body must be JSON (Content-Type: application/json), not {kind or 'none'}", {}
        return None

