"""One reading of a statistic everywhere: the CLI, the text reports and the screens share these."""

import math

from evtui.number_text import fixed, p_value, signed


def test_a_tiny_p_value_reads_as_a_bound_never_as_zero():
    assert p_value(3e-9) == "< 0.0001"
    assert p_value(0.0) == "< 0.0001"
    assert p_value(0.004321) == "0.0043"
    assert p_value(0.04321) == "0.043"
    assert p_value(1.0) == "1.000"


def test_missing_and_non_finite_figures_read_as_a_dash():
    for missing in (None, math.nan, math.inf, -math.inf):
        assert p_value(missing) == "–"
        assert fixed(missing) == "–"
        assert signed(missing) == "–"


def test_differences_always_carry_their_sign():
    assert signed(0.0123) == "+0.012"
    assert signed(-0.0123) == "-0.012"
    assert fixed(0.5, 2) == "0.50"
    assert fixed(0.5, 1, sign=True) == "+0.5"
