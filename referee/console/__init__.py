"""The live console: a scoreboard, an umpire's console and a JSON API beside one running referee (docs/console.md).

`hub` runs a `referee.session.RefereeSession` in a thread and publishes its state in versions, `state` builds
the state JSON every client reads, `video` draws and encodes the live frames, `app` is the web app
(`create_app`), and `static/` holds the pages. `referee serve` (referee/commands/serve.py) puts them together.
"""
