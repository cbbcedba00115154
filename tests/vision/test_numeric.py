"""The exact median helper: the very float numpy's median gives, for odd and even lengths, ties and odd values."""

import math

import numpy as np
import pytest

from vision.numeric import median, median_byte, percentile_sorted


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
