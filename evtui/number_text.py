"""How a statistic reads as plain text, the same in the CLI, the reports and every screen.

Plain functions of numbers (no Textual, no run text), so the core's text reports and the
screens that show the same figures cannot drift apart.
"""

from __future__ import annotations

import math

MISSING = "–"


def fixed(value: float | None, digits: int = 3, sign: bool = False) -> str:
    """`value` to `digits` decimals (with its sign when `sign`); a dash for missing or non-finite."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 3) -> str:
    """A difference: always with its sign, so +0.012 and −0.012 read apart at a glance."""
    return fixed(value, digits, sign=True)


def p_value(p: float | None) -> str:
    """A p-value: four decimals below 0.01, three above, and a bound below 0.0001 (never "0.0000")."""
    if p is None or not math.isfinite(p):
        return MISSING
    if p < 1e-4:
        return "< 0.0001"
    return f"{p:.4f}" if p < 0.01 else f"{p:.3f}"
