"""The exact median helper: the very float numpy's median gives, for odd and even lengths, ties and odd values; and a
frame's shared halvings, the same pixels as each region's own block means."""

import math
from pathlib import Path

import numpy as np
import pytest

from vision.numeric import Halvings, block_means, halved_box, median, median_byte, percentile_sorted
from vision.video_io import read_frames

SAMPLES = Path(__file__).resolve().parents[2] / "sample_videos"


def same_bits(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or np.float64(a).tobytes() == np.float64(b).tobytes()


@pytest.mark.parametrize("n", range(1, 40))
def test_it_is_numpys_median_to_the_bit(n):
    rng = np.random.default_rng(n)
    for scale in (1e-3, 1.0, 7.3, 1e4, 1e300):
        values = (rng.normal(size=n) * scale).tolist()
        assert same_bits(median(values), float(np.median(values)))
        rounded = [round(v / scale, 1) * scale for v in values]  # ties and repeats
        assert same_bits(median(rounded), float(np.median(rounded)))


def test_each_column_is_numpys_median_along_the_rows():
    rng = np.random.default_rng(0)
    for n in range(1, 30):
        rows = np.round(rng.normal(size=(n, 2)) * 50, 1)
        assert np.array_equal(np.array([median(col) for col in rows.T.tolist()]), np.median(rows, axis=0))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's own overflow and inf - inf
@pytest.mark.parametrize("values", [[1, 2], [3, 1, 2], [-0.0, 0.0], [0.0, -0.0], [-0.0], [2.0, math.inf],
                                    [math.inf, -math.inf], [1.0, math.nan, 2.0], [math.nan], [1e308, 1.7e308],
                                    [5e-324, 5e-324], [-5e-324, 0.0], [-5e-324, -0.0], [-0.0, 1.0, -0.0], (0.1, 0.2, 0.3, 0.4)])
def test_odd_values_follow_numpy(values):
    assert same_bits(median(values), float(np.median(values)))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 10, 11, 1000, 1001, 100_000])
def test_the_median_of_bytes_is_numpys_median_to_the_bit(n):
    rng = np.random.default_rng(n)
    for low, high in ((0, 256), (100, 104), (255, 256)):  # spread, many ties, all equal
        values = rng.integers(low, high, n).astype(np.uint8)
        assert same_bits(median_byte(values), float(np.median(values.astype(float))))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 100, 301])
def test_a_percentile_of_sorted_values_is_numpys_to_the_bit(n):
    rng = np.random.default_rng(n)
    for values in (rng.normal(size=n) * 37.1, rng.integers(0, 256, n).astype(np.uint8)):
        ordered = np.sort(values).astype(np.float64)
        for q in (0, 5, 10, 50, 90, 95, 100):
            assert same_bits(percentile_sorted(ordered, q), float(np.percentile(values, q)))


def test_a_region_cut_from_the_frames_halvings_is_its_own_block_means_to_the_bit():
    """The hand watch and the detector shrink the same frame: a region whose corners are multiples of k, cut from the
    frame's shared halvings, is `block_means` of the region itself (a real frame, and one of odd size); any other
    region or factor is left to the caller (None)."""
    frame = next(read_frames(SAMPLES / "piratenbillard" / "four_players" / "video.mp4")).image
    for image in (frame, frame[:717, :1279]):
        halvings = Halvings(image)
        for x0, y0, x1, y1, k in ((0, 0, 1278, 716, 2), (0, 0, 1276, 716, 4), (8, 12, 1000, 600, 4),
                                  (2, 4, 100, 60, 2), (16, 8, 1272, 712, 8)):
            cut = halvings.block_means(x0, y0, x1, y1, k)
            assert cut is not None and np.array_equal(cut, block_means(image[y0:y1, x0:x1], k))
        for x0, y0, x1, y1, k in ((1, 0, 100, 60, 2), (0, 2, 100, 60, 4), (0, 0, 99, 60, 3), (0, 0, 100, 60, 1),
                                  (0, 0, 1288, 716, 4)):
            assert halvings.block_means(x0, y0, x1, y1, k) is None


def test_halvings_of_a_box_give_the_same_blocks_and_only_inside_it():
    """Only the box the stages ask for is halved (`halved_box`: their regions' union, moved out to multiples of the
    largest factor, kept in the frame): a region inside it is `block_means` of the region itself, to the bit; one
    reaching out of it, or a factor the box's corner is no multiple of, is left to the caller (None)."""
    frame = next(read_frames(SAMPLES / "starcluster" / "chain_grand_slam" / "video.mp4")).image
    h, w = frame.shape[:2]
    hand, detector = (336, 180, 948, 572, 4), (246, 186, 1034, 718, 2)
    box = halved_box([hand, detector], w, h)
    assert box == (244, 180, 1036, 720)
    assert halved_box([], w, h) is None and halved_box([(1, 2, 1279, 719, 4)], w, h) == (0, 0, 1280, 720)
    halvings = Halvings(frame, box)
    for x0, y0, x1, y1, k in (hand, detector, (244, 180, 1036, 720, 4), (248, 200, 300, 260, 2)):
        cut = halvings.block_means(x0, y0, x1, y1, k)
        assert cut is not None and np.array_equal(cut, block_means(frame[y0:y1, x0:x1], k))
    for x0, y0, x1, y1, k in ((240, 184, 300, 260, 4), (244, 184, 1040, 720, 4), (256, 192, 320, 256, 8),
                              (251, 190, 301, 260, 2)):
        assert halvings.block_means(x0, y0, x1, y1, k) is None


def test_halvings_made_ahead_are_those_made_when_asked():
    """`Halvings.ahead(k)` (a file's decode thread makes them before the frame loop asks) gives the very blocks the
    stages would have made on asking, and cuts them as before."""
    frame = next(read_frames(SAMPLES / "piratenbillard" / "four_players" / "video.mp4")).image
    box = (0, 0, 1280, 720)
    for k in (2, 4, 8):
        ahead, asked = Halvings(frame, box).ahead(k), Halvings(frame, box)
        assert ahead.within == box
        for x0, y0, x1, y1, j in ((0, 0, 1280, 720, k), (8, 16, 640, 352, k), (0, 0, 1280, 720, 2)):
            a, b = ahead.block_means(x0, y0, x1, y1, j), asked.block_means(x0, y0, x1, y1, j)
            assert a is not None and np.array_equal(a, b) and np.array_equal(a, block_means(frame[y0:y1, x0:x1], j))
