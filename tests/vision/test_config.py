"""The pipeline's settings: nested per stage, every field settable from a config file, checked, documented."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

from rules.errors import InputError
from vision.config import PipelineConfig, split_config

DOCS = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def leaves(config=PipelineConfig(), path="pipeline"):
    """(path, value) of every setting."""
    for f in fields(config):
        value = getattr(config, f.name)
        if is_dataclass(value):
            yield from leaves(value, f"{path}.{f.name}")
        else:
            yield f"{path}.{f.name}", value


def as_json(value):
    return [as_json(v) for v in value] if isinstance(value, tuple) else value


def nested(path, value):
    data = value
    for part in reversed(path.split(".")[1:]):
        data = {part: data}
    return data


# whole-number settings whose next valid value is not one more
STEPS = {"pipeline.pose.pose_input_px": 32, "pipeline.stabiliser.match_px": 40}


def test_every_setting_can_be_set_from_a_config_file():
    """Each field, set alone to a value other than its default, arrives in the stage's section."""
    for path, default in leaves():
        if isinstance(default, bool):
            changed = not default
        elif isinstance(default, int):
            changed = default + STEPS.get(path, 1)
        elif isinstance(default, float):
            changed = default / 2  # inside every range: fractions stay fractions, lower bounds hold
        else:
            changed = as_json(default)[:1]
        config = PipelineConfig.from_dict(nested(path, changed))
        value = config
        for part in path.split(".")[1:]:
            value = getattr(value, part)
        assert as_json(value) == changed, path


def test_a_game_config_splits_into_the_rules_and_the_pipeline():
    rules, pipeline = split_config({"rounds_per_game": 1, "pipeline": {"settle": {"rest_debounce_ms": 500}}})
    assert rules == {"rounds_per_game": 1}
    assert pipeline.settle.rest_debounce_ms == 500 and pipeline.settle.rest_debounce_s == 0.5
    assert pipeline.tracking == PipelineConfig().tracking  # untouched sections keep their defaults


@pytest.mark.parametrize("data, message", [
    ({"settle": {"rest_speed_mm_s": -1}}, "'settle.rest_speed_mm_s' must be a number >= 0"),
    ({"settle": {"rest_speed_mm_s": "fast"}}, "'pipeline.settle.rest_speed_mm_s' must be a number"),
    ({"tracking": {"confirm_hits": 2.5}}, "'pipeline.tracking.confirm_hits' must be an integer"),
    ({"tracking": {"confirm_hits": True}}, "'pipeline.tracking.confirm_hits' must be an integer"),
    ({"stabiliser": {"enabled": 1}}, "'pipeline.stabiliser.enabled' must be true or false"),
    ({"stabiliser": {"match_px": 4}}, "'stabiliser.match_px' must be 0"),
    ({"settle": 3}, "'pipeline.settle' must be an object of settings"),
    ({"setle": {}}, "unknown setting 'pipeline.setle'; known: settle, tracking"),
    ({"settle": {"rest_speed": 1}}, "unknown setting 'pipeline.settle.rest_speed'; known: rest_speed_mm_s"),
    ({"rest_debounce_ms": 500}, "it is now 'pipeline.settle.rest_debounce_ms'"),
    ({"play_line": {"parts": [["tail"]]}}, "unknown body parts"),
    ({"play_line": {"parts": "head"}}, "'pipeline.play_line.parts' must be a list"),
    ({"review": {"review_confidence": 2}}, "'review.review_confidence' must be in"),
    ({"monitor": {"check_interval_s": -1}}, "'monitor.check_interval_s' must be a number >= 0"),
    ({"pose": {"pose_input_px": 400}}, "'pose.pose_input_px' must be 0"),
    ({"cells": {"kept": 2.0}}, "0 < kept <= kept_beside < two_balls"),
    ({"cells": {"kept_beside": 0.1}}, "0 < kept <= kept_beside < two_balls"),
    ({"detector": {"min_area": 0}}, "0 < min_area < 1"),
    ({"detector": {"apart_diameters": 1.0}}, "0 <= apart_diameters < 1"),
    ({"detector": {"keep_split_share": 1.5}}, "0 <= keep_split_share <= 1"),
    ({"detector": {"split_look_delta": 0}}, "split_look_delta > 0"),
    ({"colour_model": {"min_lightness": 250}}, "min_lightness < max_lightness"),
    ({"opencv": {"threads": 0}}, "'opencv.threads' must be >= 1"),
])
def test_a_bad_setting_is_one_line_naming_it(data, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        PipelineConfig.from_dict(data)
    with pytest.raises(InputError):
        split_config({"pipeline": data})


def test_every_setting_is_documented_with_its_default():
    """docs/config.md has a row per setting of each section, with its default as a config file writes it."""
    text = DOCS.read_text(encoding="utf-8")
    sections = text.split("### `")[1:]
    documented = {}
    for section in sections:
        name = section.split("`", 1)[0]
        for line in section.splitlines():
            if line.startswith("| `"):
                cells = [c.strip() for c in line.strip("|").split("|")]
                documented[f"pipeline.{name}.{cells[0].strip('`')}"] = (cells[1].strip("`"), cells[2])
    expected = {path: json.dumps(as_json(default)) for path, default in leaves()}
    assert set(documented) == set(expected)
    for path, default in expected.items():
        assert documented[path][0] == default, path
        assert documented[path][1], f"{path} has no explanation in docs/config.md"
