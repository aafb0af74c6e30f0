"""A score distribution drawn with block characters: one bar per category or histogram bin.

Bars use eighth-block characters for sub-cell precision and the theme's score colours: pass
(value >= 1), fail (<= 0), partial (between), primary for values with no numeric face or a
numeric scale other than 0..1.
"""

from __future__ import annotations

import math
from typing import Any

from textual.content import Content
from textual.widget import Widget

from evtui.safe_text import safe_line

EIGHTHS = " ▏▎▍▌▋▊▉"
FULL_BLOCK = "█"


def bar_text(count: int, largest: int, width: int) -> str:
    """A bar of `width` cells for the largest count, proportionally shorter for smaller ones;
    any count above zero shows at least a sliver."""
    if largest <= 0 or width <= 0 or count <= 0:
        return ""
    eighths = max(1, round(count / largest * width * 8))
    full, rest = divmod(eighths, 8)
    return FULL_BLOCK * full + (EIGHTHS[rest] if rest else "")


def bucket_style(value: float | None, unit_scale: bool) -> str:
    """The theme variable for a bar: pass/fail/partial on a 0..1 scale, else the primary colour."""
    if value is None or not unit_scale or math.isnan(value):
        return "$primary"
    if value >= 1:
        return "$score-pass"
    if value <= 0:
        return "$score-fail"
    return "$score-partial"


def distribution_lines(distribution: Any, width: int) -> list[Content]:
    """The lines for a `store.queries.groups.Distribution` at `width` cells: label, bar, count, share."""
    buckets = list(distribution.buckets)
    if not buckets:
        unscored = distribution.unscored
        return [Content.styled(f"No scored values ({unscored} unscored)." if unscored else "No scores.", "$foreground-muted")]
    label_width = min(max(len(b.label) for b in buckets), 28)
    count_width = max(len(f"{b.count:,}") for b in buckets)
    tail_width = count_width + 9  # "  1,234  100.0%"
    bar_width = max(width - label_width - tail_width - 3, 4)
    largest = max(b.count for b in buckets)
    total = distribution.scored or 1
    low, high = distribution.minimum, distribution.maximum
    unit_scale = distribution.kind == "categorical" or (low is not None and high is not None and 0 <= low and high <= 1)
    lines = []
    for bucket in buckets:
        value = bucket.value if bucket.value is not None else _middle(bucket)
        label = safe_line(bucket.label, None)  # a categorical bucket is a score value: run data
        label = label if len(label) <= label_width else label[: label_width - 1] + "…"
        bar = bar_text(bucket.count, largest, bar_width)
        lines.append(
            Content.assemble(
                (f"{label:>{label_width}} ", "$foreground-muted"),
                (f"{bar:<{bar_width}}", bucket_style(value, unit_scale)),
                f"  {bucket.count:>{count_width},}",
                (f"  {bucket.count / total * 100:5.1f}%", "$foreground-muted"),
            )
        )
    return lines


def _middle(bucket: Any) -> float | None:
    if bucket.low is None or bucket.high is None:
        return None
    return (bucket.low + bucket.high) / 2


class ScoreDistribution(Widget):
    """Draws one Distribution; `show` replaces it. Height follows the number of bars."""

    DEFAULT_CSS = """
    ScoreDistribution {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.distribution: Any = None

    def show(self, distribution: Any) -> None:
        self.distribution = distribution
        self.refresh(layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:
        if self.distribution is None:
            return 1
        return max(len(self.distribution.buckets), 1)

    def render(self) -> Content:
        if self.distribution is None:
            return Content.styled("loading…", "$foreground-muted")
        return Content("\n").join(distribution_lines(self.distribution, self.content_region.width or self.size.width))
