"""symbreak.coarse: stable text and figure data for the measured numbers of chapters 11–15.

The chapters' checks (``thm-conservation``, ``thm-invariant-diagonal``, ``prop-flat-directions``,
the swap test of ``thm-exchange``) print a rounding-sized ratio to its bound against a stated share
(:func:`below_share`), and draw figures from snapped values (:func:`snap_log`, :func:`snap_linear`,
:func:`bucket_below`): the tests pin the texts, the rounding, and that equal inputs and inputs that
differ in their last bits give equal outputs.
"""

from __future__ import annotations

import numpy as np
import pytest

from symbreak.coarse import below_share, bucket_below, magnitude, percent, percent_of, snap_linear, snap_log


def test_percent():
    assert percent(0.25) == "25\u00a0%"
    assert percent(0.1) == "10\u00a0%"
    assert percent(1e-3) == "0.1\u00a0%"
    assert percent(1.0) == "100\u00a0%"
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            percent(bad)
    with pytest.raises(TypeError):
        percent(True)


def test_percent_of_formats_the_number_and_spaces_the_sign():
    # strings written by hand: 100 · 0.1862 = 18.62
    assert percent_of(0.1862) == "18.6\u00a0%"
    assert percent_of(0.1862, ".0f") == "19\u00a0%"
    assert percent_of(-0.05, "+.1f") == "−5.0\u00a0%"
    assert percent_of(1.0, "6.1f") == " 100.0\u00a0%"
    with pytest.raises(ValueError, match="spec: expected a float format"):
        percent_of(0.5, "d")
    with pytest.raises(TypeError, match="spec: expected a format str"):
        percent_of(0.5, 1)
    with pytest.raises(TypeError, match="share"):
        percent_of("0.5")


def test_magnitude_writes_powers_of_ten_without_e_notation():
    # expected strings written by hand from the values: 2^-52 · 100 = 2.22…e-14
    assert magnitude(1e-14) == "10⁻¹⁴"
    assert magnitude(100 * 2.0**-52) == "2.2·10⁻¹⁴"
    assert magnitude(100 * 2.0**-52, digits=1) == "2·10⁻¹⁴"
    assert magnitude(2.5e3) == "2.5·10³"
    assert magnitude(1e-9) == "10⁻⁹"
    assert magnitude(-4e-3) == "−0.004"
    assert [magnitude(v) for v in (0.0, 0.5, 3.0, 250.0)] == ["0", "0.5", "3", "250"]
    assert magnitude(9.96e-13) == "10⁻¹²"  # two significant digits: 9.96 rounds to 10
    for bad, error in ((float("inf"), ValueError), (float("nan"), ValueError), ("1e-14", TypeError), (True, TypeError)):
        with pytest.raises(error, match="value: expected"):
            magnitude(bad)
    with pytest.raises(ValueError, match="digits: expected an int >= 1, got 0"):
        magnitude(1.0, digits=0)


def test_below_share_names_the_threshold_never_the_ratio():
    assert below_share(0.097, 0.25) == "below 25\u00a0% of the bound"
    assert below_share(0.0, 1e-3, "the allowance") == "below 0.1\u00a0% of the allowance"
    assert below_share(0.3, 0.25) == "not below 25\u00a0% of the bound"
    assert below_share(0.25, 0.25) == "not below 25\u00a0% of the bound"  # strict
    # two ratios that differ by rounding read the same
    assert below_share(0.0612, 0.25) == below_share(0.0966, 0.25)
    with pytest.raises(ValueError):
        below_share(-1e-3, 0.25)
    with pytest.raises(ValueError):
        below_share(float("nan"), 0.25)
    with pytest.raises(TypeError):
        below_share("0.1", 0.25)


def test_snap_log_rounds_to_significant_digits():
    v = snap_log([0.021354278629362566, 3.295371e-06, 0.0, 1234567.0])
    assert v.tolist() == [0.02135, 3.295e-06, 0.0, 1235000.0]
    assert snap_log([0.0213542786], 3).tolist() == [0.0214]
    # values that differ in their last bits snap to the same float, bit for bit
    a, b = 0.021354278629362566, 0.021354278629362344
    assert snap_log([a])[0] == snap_log([b])[0]
    # at most half a unit of the fourth digit away
    x = np.geomspace(1e-17, 1e3, 997)
    assert np.all(np.abs(snap_log(x) - x) <= 5e-4 * x)
    assert snap_log(np.ones((2, 3))).shape == (2, 3)
    with pytest.raises(ValueError):
        snap_log([-1.0])
    with pytest.raises(ValueError):
        snap_log([float("nan")])
    with pytest.raises(ValueError):
        snap_log([1.0], 0)


def test_snap_linear_rounds_to_multiples_of_the_step():
    v = snap_linear([0.0123456789, -1.00000049, 2.0], 1e-6)
    assert np.allclose(v, [0.012346, -1.0, 2.0], rtol=0, atol=1e-15)
    assert snap_linear([0.5 + 1e-15], 1e-6)[0] == snap_linear([0.5 - 1e-15], 1e-6)[0]
    with pytest.raises(ValueError):
        snap_linear([1.0], 0.0)


def test_bucket_below_puts_rounding_sized_entries_in_one_bucket():
    shown, tau = bucket_below(np.array([-3e-16, 2e-14, 1.23456e-4, -2.5]), 7.31852e-13)
    assert shown.tolist() == [0.0, 0.0, 1.235e-4, 2.5]
    assert tau == 7.319e-13
    # rounding-sized entries that differ between two runs give the same picture
    again, tau_again = bucket_below(np.array([5e-17, 3e-13, 1.234560000001e-4, -2.5]), 7.31852e-13)
    assert again.tolist() == shown.tolist() and tau_again == tau
    with pytest.raises(ValueError):
        bucket_below([1.0], 0.0)
