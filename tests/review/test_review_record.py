"""The run record the review tools draw from: captions and moment kinds, the scoreboard over time, bad files."""

import json

import pytest

from review.record import load_run
from rules.errors import InputError
from rules.files import write_json_atomically
from rules.replay import read_log, replay
from rules.result import build_result


def test_chains_grand_slam_and_last_shot_are_moments(sc_run):
    record = load_run(sc_run)
    by_kind = {c.headline: c.kinds for c in record.captions}
    chains = [c for c in record.captions if "chain" in c.kinds]
    # red fills Position 1 (7 slots) one ball at a time: chains of 3, 4, 5, 6 and 7, the last a Grand Slam
    assert [c.headline.split("   ")[0] for c in chains] == [
        "CHAIN OF 3", "CHAIN OF 4", "CHAIN OF 5", "CHAIN OF 6", "GRAND SLAM - CHAIN OF 7"]
    slam = chains[-1]
    assert slam.kinds == ("grand_slam", "chain", "last_shot") and slam.players == ("red",)
    assert slam.headline.endswith("red +15")
    assert "   P1 base 1 + P1 chain bonus 1 + P1 Grand Slam 13" in slam.lines
    assert slam.shot_t is not None and slam.t - 4.0 < slam.shot_t < slam.t  # the shot that scored it
    assert not any(kinds for headline, kinds in by_kind.items() if "CHAIN" not in headline)
    assert all(c.players == ("red",) for c in chains)


def test_the_scoreboard_follows_the_engine_and_the_round_clock_runs_down(sc_run):
    record = load_run(sc_run)
    result = json.loads((sc_run / "result.json").read_text())
    end = record.boards[-1]
    assert dict(end.scores) == result["final_scores"]
    slam = next(c for c in record.captions if "grand_slam" in c.kinds)
    before, after = record.board_at(slam.t - 0.1), record.board_at(slam.t + 0.01)
    assert dict(after.scores)["red"] - dict(before.scores)["red"] == 15
    board = record.board_at(10.0)
    assert board.round_label == "game 1, round 1" and board.to_play == "red" and board.clock.counts_down
    assert board.clock_s(10.0) == pytest.approx(board.clock.length_s - (10.0 - board.clock.started_at))
    assert board.clock_s(12.0) == pytest.approx(board.clock_s(10.0) - 2.0)
    ended = end.clock.ended_at
    assert ended is not None and end.clock_s(ended + 5) == end.clock_s(ended)


def _write_run(folder, events, game="starcluster", config=None):
    folder.mkdir()
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    replayed = replay(read_log(folder / "events.jsonl"), game, config or {})
    write_json_atomically(folder / "result.json", build_result(replayed, {}))
    return folder


def test_a_play_line_foul_names_the_body_part(tmp_path):
    run = _write_run(tmp_path / "run", [
        {"type": "game_start", "t": 0, "players": [{"id": "red", "name": "Ana", "side": "right"},
                                                   {"id": "blue", "side": "left"}]},
        {"type": "round_start", "t": 0},
        {"type": "shot_started", "t": 1.0, "player": "red"},
        {"type": "play_line_crossing", "t": 1.2, "body_part": "left_wrist", "confidence": 0.87},
        {"type": "table_settled", "t": 3.0, "balls": [{"owner": "red", "at": {"place": "slot", "position": 1,
                                                                              "slot": 3}}]},
    ])
    record = load_run(run)
    foul = next(c for c in record.captions if "foul" in c.kinds)
    assert foul.headline.startswith("FOUL") and foul.shot_t == 1.0 and foul.players == ("red",)
    assert "   left wrist over the Play Line (87% sure)" in foul.lines
    assert record.players[0].label == "Ana (red)"


@pytest.mark.parametrize("damage, message", [
    (lambda run: (run / "result.json").unlink(), "result.json does not exist"),
    (lambda run: (run / "result.json").write_text("{not json"), "cannot be read as JSON"),
    (lambda run: (run / "result.json").write_text('{"game": "chess"}'), "field 'game' is 'chess'"),
    (lambda run: (run / "events.jsonl").write_text((run / "events.jsonl").read_text() + '{"type": "nonsense"}\n'),
     "events.jsonl line 2"),
    (lambda run: (run / "tracks.jsonl").write_text('{"t": 0, "tracks": [[1, "red"]]}\n'), "tracks.jsonl line 1"),
])
def test_a_damaged_run_folder_is_a_clear_error(tmp_path, damage, message):
    run = _write_run(tmp_path / "run", [{"type": "game_start", "t": 0, "players": [{"id": "red", "seat": 0},
                                                                                   {"id": "blue", "seat": 2}]}],
                     game="piratenbillard")
    damage(run)
    with pytest.raises(InputError, match=message):  # ReviewError, or the log reader's LogError
        load_run(run)
