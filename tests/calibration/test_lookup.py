"""Board point -> slot / space / region and back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.lookup import locate, slot_center, space_center
from calibration.profile import Region
from rules.errors import InputError


def test_every_slot_centre_maps_to_its_slot(starcluster):
    for pos in starcluster.positions:
        for i in range(len(pos.slots)):
            loc = locate(starcluster, slot_center(starcluster, pos.number, i))
            assert (loc.region, loc.position, loc.slot, loc.distance_mm) == (Region.SLOT, pos.number, i, 0.0)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2), st.integers(0, 10), st.floats(-0.49, 0.49), st.floats(-0.49, 0.49))
def test_points_inside_a_slot_find_it(starcluster, p, s, fx, fy):
    pos = starcluster.positions[p]
    s %= len(pos.slots)
    x, y = pos.slots[s]
    loc = locate(starcluster, (x + fx * pos.slot_width_mm, y + fy * pos.slot_depth_mm))
    assert (loc.region, loc.position, loc.slot) == (Region.SLOT, pos.number, s)


def test_star_cluster_regions(starcluster):
    assert locate(starcluster, (70, 800)).region is Region.GUTTER
    assert locate(starcluster, (320, 1170)).region is Region.GUTTER
    assert locate(starcluster, (320, 750)).region is Region.GROUPED
    assert locate(starcluster, (320, 300)).region is Region.PLAY_AREA
    assert locate(starcluster, (320, 100)).region is Region.PLAY_AREA  # behind the Play Line
    assert locate(starcluster, (-5, 300)).region is Region.OFF_TABLE
    assert locate(starcluster, (320, 1300)).region is Region.OFF_TABLE


def test_tolerance_widens_slots_and_table_edge(starcluster):
    x, y = slot_center(starcluster, 3, 0)
    near = (x, y + 17.0)  # 2 mm beyond the 30 mm deep slot
    assert locate(starcluster, near).region is Region.GROUPED
    loc = locate(starcluster, near, tolerance_mm=3.0)
    assert (loc.region, loc.position, loc.slot) == (Region.SLOT, 3, 0)
    assert locate(starcluster, (-2, 300), tolerance_mm=3.0).region is Region.PLAY_AREA


def test_piratenbillard_spaces_round_trip(piratenbillard):
    for row, col in piratenbillard.spaces():
        loc = locate(piratenbillard, space_center(piratenbillard, row, col))
        assert (loc.region, loc.row, loc.col) == (Region.CELL, row, col)
    x, y = space_center(piratenbillard, 4, 4)
    loc = locate(piratenbillard, (x + 21.0, y))  # in the gap: nearest space, with distance
    assert (loc.row, loc.col, round(loc.distance_mm, 3)) == (4, 4, 21.0)


def test_piratenbillard_off_board(piratenbillard):
    g = piratenbillard.grid
    assert locate(piratenbillard, (g.x_min + 10, g.y_max - 10)).region is Region.OFF_TABLE  # missing corner
    assert locate(piratenbillard, (30, 282)).region is Region.OFF_TABLE  # the margin
    assert locate(piratenbillard, (g.x_min - 2, 282)).region is Region.OFF_TABLE
    loc = locate(piratenbillard, (g.x_min - 2, 282), tolerance_mm=3.0)
    assert (loc.region, loc.col) == (Region.CELL, 0)


def test_inverse_rejects_unknown_places(starcluster, piratenbillard):
    with pytest.raises(InputError, match="no slot 7 in Position 1"):
        slot_center(starcluster, 1, 7)
    with pytest.raises(InputError, match="corners are missing"):
        space_center(piratenbillard, 0, 0)
