"""symbreak.experiments.statistics: standard errors of a mean, a proportion and a ratio of two sums; Welch, Holm.

References are written from the definitions, not from the package's code: the
sample mean and standard deviation of Python's :mod:`statistics`, hand-computed
cases, and for the delta method the spread of the ratio over many independent
Monte Carlo replicates (an independent numpy stream, not the package's).
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from symbreak.experiments import statistics as S
from symbreak.experiments.statistics import binomial_standard_error, mean_standard_error, ratio_standard_error


def test_mean_standard_error_by_hand():
    """[1, 2, 3, 4]: mean 5/2, s² = (9/4 + 1/4 + 1/4 + 9/4)/3 = 5/3, s.e. = √(5/3)/2."""
    mean, se = mean_standard_error([1.0, 2.0, 3.0, 4.0])
    assert mean == pytest.approx(2.5, rel=1e-15)
    assert se == pytest.approx(math.sqrt(5 / 3) / 2, rel=1e-14)


def test_mean_standard_error_against_the_statistics_module():
    sample = np.random.default_rng(11).lognormal(size=1001)
    mean, se = mean_standard_error(torch.tensor(sample))
    values = [float(v) for v in sample]
    assert mean == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert se == pytest.approx(statistics.stdev(values) / math.sqrt(len(values)), rel=1e-12)


@pytest.mark.parametrize(("p", "n", "expected"), [(0.5, 100, 0.05), (0.0, 7, 0.0), (1.0, 7, 0.0), (0.2, 16, 0.1)])
def test_binomial_standard_error_by_hand(p, n, expected):
    """√(p(1 − p)/n): 0.5 · 0.5 / 100 = 0.0025 → 0.05; 0.2 · 0.8 / 16 = 0.01 → 0.1."""
    assert binomial_standard_error(p, n) == pytest.approx(expected, abs=1e-15)


def test_binomial_standard_error_matches_the_spread_of_simulated_shares():
    """The standard deviation of the share over 4000 replicates of 400 draws is √(p(1−p)/n) within 5 %."""
    rng = np.random.default_rng(5)
    p, n = 0.3, 400
    shares = rng.binomial(n, p, size=4000) / n
    # the relative Monte Carlo error of a standard deviation from 4000 replicates is about 1/√8000 ≈ 1.1 %
    assert binomial_standard_error(p, n) == pytest.approx(shares.std(ddof=1), rel=0.05)


def test_ratio_standard_error_by_hand():
    """C = (1, 3), F = (1, 1): R̂ = 4/2 = 2, residuals C − R̂F = (−1, 1), s.e. = √2 / 2."""
    ratio, se = ratio_standard_error([1.0, 3.0], [1.0, 1.0])
    assert ratio == pytest.approx(2.0, rel=1e-15)
    assert se == pytest.approx(math.sqrt(2) / 2, rel=1e-15)


def test_ratio_standard_error_exact_proportionality_has_no_spread():
    """C_i = 3 F_i for every i: R̂ = 3 and every residual vanishes."""
    F = np.random.default_rng(2).exponential(size=50)
    ratio, se = ratio_standard_error(3.0 * F, F)
    assert ratio == pytest.approx(3.0, rel=1e-14)
    assert se <= 1e-13


def test_ratio_standard_error_matches_the_spread_of_the_ratio_over_replicates():
    """Delta method: the mean s.e. over replicates matches the standard deviation of R̂ across them.

    Pairs (C_i, F_i) with F_i ~ Exp(1) and C_i = 0.7 F_i + F_i ε_i, ε_i ~ N(0, 0.5²), so that
    Var(C − R F) = 0.25 E[F²] = 0.5 and se ≈ √(n · 0.5) / n.  With n = 400 pairs the
    delta method's first-order error is far below the 8 % tolerance; the Monte Carlo
    error of a standard deviation from 3000 replicates is about 1.3 %.
    """
    rng = np.random.default_rng(2026)
    n, replicates = 400, 3000
    F = rng.exponential(size=(replicates, n))
    C = 0.7 * F + F * rng.normal(scale=0.5, size=(replicates, n))
    results = np.array([ratio_standard_error(c, f) for c, f in zip(C, F, strict=True)])
    spread = results[:, 0].std(ddof=1)
    assert results[:, 1].mean() == pytest.approx(spread, rel=0.08)
    assert spread == pytest.approx(math.sqrt(n * 0.5) / n, rel=0.08)
    assert results[:, 0].mean() == pytest.approx(0.7, abs=5 * spread / math.sqrt(replicates))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: mean_standard_error([1.0]), ValueError, "sample: expected at least 2 values, got 1"),
        (lambda: mean_standard_error("12"), TypeError, "sample: expected a tensor, array or sequence"),
        (lambda: mean_standard_error([1.0, float("nan")]), ValueError, "sample: expected finite values"),
        (lambda: binomial_standard_error(1.5, 10), ValueError, r"p: expected a probability in \[0, 1\], got 1.5"),
        (lambda: binomial_standard_error(0.5, 0), ValueError, "n: expected an int >= 1, got 0"),
        (lambda: ratio_standard_error([1.0, 2.0], [1.0]), ValueError, "denominators: expected at least 2 values"),
        (lambda: ratio_standard_error([1.0, 2.0, 3.0], [1.0, 2.0]), ValueError, "expected as many of each, got 3"),
        (lambda: ratio_standard_error([1.0, 2.0], [0.0, 0.0]), ValueError, "denominators: expected a positive sum"),
        (lambda: ratio_standard_error(None, [1.0, 2.0]), TypeError, "numerators: expected a tensor"),
    ],
)
def test_bad_input_names_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


# Welch's test, Holm's adjustment and the verdict word (chapters 14-16).


def test_welch_matches_scipys_unequal_variance_t_test():
    """Interval and p-value against scipy's ``ttest_ind(equal_var=False)``, an independent implementation."""
    gen_a, gen_b = torch.Generator().manual_seed(11), torch.Generator().manual_seed(12)
    a = (1.0 + 0.3 * torch.randn(5, generator=gen_a, dtype=torch.float64)).tolist()
    b = (1.4 + 0.1 * torch.randn(3, generator=gen_b, dtype=torch.float64)).tolist()
    w = S.welch(a, b)
    ref = stats.ttest_ind(a, b, equal_var=False)
    low, high = ref.confidence_interval(0.95)
    assert w.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert w.dof == pytest.approx(ref.df, rel=1e-12)
    assert w.difference - w.half_width == pytest.approx(low, rel=1e-12)
    assert w.difference + w.half_width == pytest.approx(high, rel=1e-12)


def test_welchs_interval_excludes_zero_exactly_when_p_is_below_its_level():
    gen = torch.Generator().manual_seed(5)
    for shift in (0.0, 0.05, 0.1, 0.2, 0.4, 0.8):
        a, b = torch.randn(4, generator=gen, dtype=torch.float64), torch.randn(4, generator=gen, dtype=torch.float64)
        w = S.welch((a + shift).tolist(), b.tolist())
        assert (abs(w.difference) > w.half_width) == (w.p_value < 0.05)


def test_welch_of_constant_samples_and_bad_input():
    assert S.welch([1.0, 1.0], [1.0, 1.0]) == (0.0, 0.0, float("inf"), 1.0)
    assert S.welch([1.0, 1.0], [2.0, 2.0]).p_value == 0.0
    with pytest.raises(ValueError, match="a: expected at least 2 values"):
        S.welch([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"level: expected a number in \(0, 1\)"):
        S.welch([1.0, 2.0], [1.0, 2.0], level=95)


def test_holm_on_a_worked_example():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, max(., 2*0.03), max(., 1*0.04)
    assert S.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert S.holm([0.6, 0.9]) == [1.0, 1.0]  # capped at 1


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8), st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_rejects_what_holms_sequential_procedure_rejects(p, alpha):
    """Holm (1979): reject H_(1), H_(2), ... while p_(i) <= alpha / (m - i + 1); stop at the first that is not."""
    m, order = len(p), sorted(range(len(p)), key=lambda i: p[i])
    rejected = set()
    for rank, i in enumerate(order):
        if p[i] > alpha / (m - rank):
            break
        rejected.add(i)
    adjusted = S.holm(p)
    assert {i for i in range(m) if adjusted[i] <= alpha} == rejected
    assert all(a >= q for a, q in zip(adjusted, p, strict=True))


def test_reading_words_and_bad_input():
    assert S.reading(-0.1, 0.01) == "better" and S.reading(0.1, 0.01) == "worse"
    assert S.reading(-0.1, 0.2) == "level" and S.reading(-0.1, 0.05) == "level"
    with pytest.raises(ValueError, match="p_value: expected a probability"):
        S.reading(0.0, 1.5)
    with pytest.raises(ValueError, match="p_values: expected probabilities"):
        S.holm([0.1, 2.0])
