"""The games the referee knows, picked by name (`--game starcluster|piratenbillard`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from .engine import RulesEngine
from .errors import InputError
from .events import shown
from .files import loads


def _starcluster(config: dict[str, Any]) -> RulesEngine:
    from .starcluster import StarClusterConfig, StarClusterEngine

    return StarClusterEngine(StarClusterConfig.from_dict(config))


def _piratenbillard(config: dict[str, Any]) -> RulesEngine:
    from .piratenbillard import PiratenbillardConfig, PiratenbillardEngine

    return PiratenbillardEngine(PiratenbillardConfig.from_dict(config))


GAMES: dict[str, Callable[[dict[str, Any]], RulesEngine]] = {
    "starcluster": _starcluster,
    "piratenbillard": _piratenbillard,
}
TITLES = {"starcluster": "Star Cluster Ball", "piratenbillard": "Piratenbillard"}


def make_engine(game: str, config: dict[str, Any]) -> RulesEngine:
    try:
        factory = GAMES[game]
    except KeyError:
        raise InputError(f"unknown game {game!r}; use one of {', '.join(GAMES)}") from None
    return factory(config)


def table_config(config: dict[str, Any], table_settings: dict[str, Any], profile_name: str) -> dict[str, Any]:
    """The rules config with the settings the table decides (a profile's `rules_settings`, e.g. Star Cluster's
    slots per Position) filled in, so the table says them once; a config that says otherwise is refused."""
    merged = dict(config)
    for name, value in table_settings.items():
        if name not in merged:
            merged[name] = value
        elif merged[name] != value:
            raise InputError(f"config: {name!r} is {shown(merged[name])} but the table profile {profile_name!r} "
                             f"has {shown(value)}; drop {name!r} from the config (the table sets it) or use the "
                             "profile of the table played on")
    return merged


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a game config file (JSON object); the engine's config class validates the fields."""
    path = Path(path)
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"config file {path} does not exist; check the path") from None
    except (OSError, UnicodeDecodeError) as error:  # a folder, no permission, not UTF-8
        raise InputError(f"config file {path} cannot be read ({error}); pass a UTF-8 JSON file") from None
    except json.JSONDecodeError as error:
        raise InputError(f"config file {path} is not valid JSON (line {error.lineno}: {error.msg}); fix the file") from None
    if not isinstance(data, dict):
        raise InputError(f"config file {path} must hold a JSON object of settings")
    return data
