"""Board point -> slot / space / region (the profile kinds' `locate`), and named places -> board points."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.errors import InputError
from rules.events import Place


def test_every_slot_centre_maps_to_its_slot(starcluster):
    for pos in starcluster.positions:
        for i in range(len(pos.slots)):
            loc = starcluster.locate(starcluster.slot_center(pos.number, i))
            assert (loc.at.place, loc.at.position, loc.at.slot, loc.distance_mm) == (Place.SLOT, pos.number, i, 0.0)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2), st.integers(0, 10), st.floats(-0.49, 0.49), st.floats(-0.49, 0.49))
def test_points_inside_a_slot_find_it(starcluster, p, s, fx, fy):
    pos = starcluster.positions[p]
    s %= len(pos.slots)
    x, y = pos.slots[s]
    loc = starcluster.locate((x + fx * pos.slot_width_mm, y + fy * pos.slot_depth_mm))
    assert (loc.at.place, loc.at.position, loc.at.slot) == (Place.SLOT, pos.number, s)


def test_star_cluster_regions(starcluster):
    assert starcluster.locate((70, 800)).at.place is Place.GUTTER
    assert starcluster.locate((320, 1170)).at.place is Place.GUTTER
    assert starcluster.locate((320, 750)).at.place is Place.GROUPED
    assert starcluster.locate((320, 300)).at.place is Place.PLAY_AREA
    assert starcluster.locate((320, 100)).at.place is Place.PLAY_AREA  # behind the Play Line
    assert starcluster.locate((-5, 300)).at.place is Place.OFF_TABLE
    assert starcluster.locate((320, 1300)).at.place is Place.OFF_TABLE


def test_tolerance_widens_slots_and_table_edge(starcluster):
    x, y = starcluster.slot_center(3, 0)
    near = (x, y + 17.0)  # 2 mm beyond the 30 mm deep slot
    assert starcluster.locate(near).at.place is Place.GROUPED
    loc = starcluster.locate(near, tolerance_mm=3.0)
    assert (loc.at.place, loc.at.position, loc.at.slot) == (Place.SLOT, 3, 0)
    assert starcluster.locate((-2, 300), tolerance_mm=3.0).at.place is Place.PLAY_AREA


def test_piratenbillard_spaces_round_trip(piratenbillard):
    for row, col in piratenbillard.spaces():
        loc = piratenbillard.locate(piratenbillard.checked_space_center(row, col))
        assert (loc.at.place, loc.at.row, loc.at.col) == (Place.CELL, row, col)
    x, y = piratenbillard.checked_space_center(4, 4)
    loc = piratenbillard.locate((x + 21.0, y))  # in the gap: nearest space, with distance
    assert (loc.at.row, loc.at.col, round(loc.distance_mm, 3)) == (4, 4, 21.0)


def test_piratenbillard_off_board(piratenbillard):
    g = piratenbillard.grid
    assert piratenbillard.locate((g.x_min + 10, g.y_max - 10)).at.place is Place.OFF_TABLE  # missing corner
    assert piratenbillard.locate((30, 282)).at.place is Place.OFF_TABLE  # the margin
    assert piratenbillard.locate((g.x_min - 2, 282)).at.place is Place.OFF_TABLE
    loc = piratenbillard.locate((g.x_min - 2, 282), tolerance_mm=3.0)
    assert (loc.at.place, loc.at.col) == (Place.CELL, 0)


def test_inverse_rejects_unknown_places(starcluster, piratenbillard):
    with pytest.raises(InputError, match="no slot 7 in Position 1"):
        starcluster.slot_center(1, 7)
    with pytest.raises(InputError, match="corners are missing"):
        piratenbillard.checked_space_center(0, 0)
