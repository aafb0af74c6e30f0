"""The paired difference B − A of two runs over the samples both have (already lined up).

d_i = b_i − a_i; SE = sd(d, ddof=1)/√n (or Inspect's clustered stderr of d with C − 1 df);
interval d̄ ± t·SE; p-value from exact McNemar when both runs' scores are 0/1, else paired t.
All differences equal gives SE = 0: "no variation" and no p-value rather than p = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evtui.scoring.stats.distributions import binomial_cdf, t_quantile, t_two_sided_p
from evtui.scoring.stats.power import minimum_detectable_effect

__all__ = ["PairedResult", "paired_difference", "mcnemar_exact", "paired_t", "clustered_stderr", "correlation", "is_binary"]

MCNEMAR = "mcnemar_exact"
# Differences equal up to float rounding (0.3 − 0.2 vs 0.5 − 0.4) leave an sd of ~1e-17, which
# a t test turns into p ≈ 1e-32: below this (relative to the scale) there is no variation.
_NO_VARIATION = 1e-12
PAIRED_T = "paired_t"


@dataclass(frozen=True)
class PairedResult:
    n: int
    mean_a: float
    mean_b: float
    difference: float  # mean(b − a)
    stderr: float  # paired (clustered when clusters were given)
    ci: tuple[float, float]
    p_value: float  # NaN when it cannot be said (see note)
    test: str  # MCNEMAR or PAIRED_T
    statistic: float  # t, or the discordant count n10 for McNemar
    correlation: float  # Pearson r of a and b (NaN when either is constant)
    a_only_right: int  # binary: A right, B wrong (n10)
    b_only_right: int  # binary: A wrong, B right (n01)
    sd_difference: float
    mde: float  # minimum detectable effect at 80% power, α = 0.05
    clusters: int = 0
    note: str = ""

    @property
    def design_sd(self) -> float:
        """sd(d) as the standard error sees it (stderr·√n; the clustered one inflates it), for
        power: the MDE and the samples needed for a difference use this one."""
        return self.stderr * math.sqrt(self.n) if math.isfinite(self.stderr) and self.n else self.sd_difference


def is_binary(values: np.ndarray) -> bool:
    return bool(np.all((values == 0) | (values == 1)))


def mcnemar_exact(a_only_right: int, b_only_right: int) -> float:
    """Two-sided exact McNemar: min(1, 2·P[X ≤ min(n10, n01)]), X ~ Binomial(n10 + n01, ½); 1 with none."""
    discordant = a_only_right + b_only_right
    if discordant == 0:
        return 1.0
    return min(1.0, 2.0 * binomial_cdf(min(a_only_right, b_only_right), discordant, 0.5))


def paired_t(differences: np.ndarray) -> tuple[float, float]:
    """(t, two-sided p) of the paired t test on the differences; NaN when all are equal."""
    n = len(differences)
    if n < 2:
        return math.nan, math.nan
    sd = float(np.std(differences, ddof=1))
    if sd <= _NO_VARIATION * max(1.0, abs(float(np.mean(differences)))):
        return math.nan, math.nan
    t = float(np.mean(differences)) / (sd / math.sqrt(n))
    return t, t_two_sided_p(t, n - 1)


def clustered_stderr(values: np.ndarray, labels: np.ndarray) -> tuple[float, int]:
    """Inspect's `_clustered_stderr` on `values` partitioned by integer `labels`:
    √(C/(C−1) · Σ_c (Σ_{i∈c}(x_i − x̄))²) / N, and the number of clusters C (0.0 below two)."""
    _, codes = np.unique(labels, return_inverse=True)
    count = int(codes.max()) + 1 if len(codes) else 0
    if count < 2:
        return 0.0, count
    sums = np.bincount(codes, weights=values - values.mean(), minlength=count)
    return float(math.sqrt(count / (count - 1) * float(np.sum(sums**2))) / len(values)), count


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of the two runs' per-sample scores; NaN when either does not vary."""
    if len(a) < 2:
        return math.nan
    a_dev, b_dev = a - a.mean(), b - b.mean()
    # Products summed by numpy, not `@`: BLAS spreads a long dot over threads that spin (3–30 ms
    # of CPU for 1M on a busy machine against 1 ms), and numpy's pairwise sum is as accurate.
    denominator = math.sqrt(float(np.sum(a_dev * a_dev)) * float(np.sum(b_dev * b_dev)))
    return float(np.sum(a_dev * b_dev)) / denominator if denominator > 0 else math.nan


def paired_difference(a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None = None, confidence: float = 0.95) -> PairedResult:
    """The comparison of paired scores `a`, `b` (same length, same sample order; floats)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n = len(a)
    d = b - a
    binary = n > 0 and is_binary(a) and is_binary(b)
    a_only = int(np.count_nonzero((a == 1) & (b == 0))) if binary else 0
    b_only = int(np.count_nonzero((a == 0) & (b == 1))) if binary else 0
    if n == 0:
        return PairedResult(0, math.nan, math.nan, math.nan, math.nan, (math.nan, math.nan), math.nan,
                            MCNEMAR if binary else PAIRED_T, math.nan, math.nan, 0, 0, math.nan, math.nan,
                            note="no shared samples")  # fmt: skip
    mean_d = float(d.mean())
    sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
    if n > 1 and sd <= _NO_VARIATION * max(1.0, abs(mean_d)):
        sd = 0.0
    note = ""
    cluster_count = 0
    if clusters is not None:
        stderr, cluster_count = clustered_stderr(d, clusters) if sd != 0 else (0.0, len(np.unique(clusters)))
        df = cluster_count - 1
        if cluster_count < 2:
            stderr, note = math.nan, "fewer than two clusters: no clustered stderr"
    else:
        stderr = sd / math.sqrt(n) if n > 1 else math.nan
        df = n - 1
    if n < 2:
        note = note or "one shared sample: no interval"
    if math.isfinite(stderr) and df >= 1:
        half = t_quantile((1 + confidence) / 2, df) * stderr
        ci = (mean_d - half, mean_d + half)
    else:
        ci = (math.nan, math.nan)
    if binary:
        test, statistic, p = MCNEMAR, float(a_only), mcnemar_exact(a_only, b_only)
        if a_only + b_only == 0:
            note = note or "no discordant samples"
    else:
        test = PAIRED_T
        if math.isfinite(stderr) and stderr > 0 and df >= 1:
            statistic = mean_d / stderr
            p = t_two_sided_p(statistic, df)
        else:
            statistic = p = math.nan
            if n > 1 and stderr == 0 and cluster_count != 1:
                note = note or "no variation: every difference is the same"
    return PairedResult(
        n, float(a.mean()), float(b.mean()), mean_d, stderr, ci, p, test, statistic, correlation(a, b),
        a_only, b_only, sd, minimum_detectable_effect(stderr * math.sqrt(n), n) if math.isfinite(stderr) else math.nan,
        cluster_count, note,
    )  # fmt: skip
