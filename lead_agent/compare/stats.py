"""Paired statistics, by question: mean difference with a bootstrap 95% interval, the Wilcoxon
signed-rank and sign-test p-values (scipy), and a verdict in words.

For each question the repeats of a variant are averaged first, so a question counts once whatever
the number of repeats; questions where either variant has no value are left out of that metric.
The bootstrap resamples questions (paired: a question's two values stay together), 4000 times with
a fixed seed, and takes percentiles. Differences are B - A; for metrics read in percent the
relative difference is mean(B) / mean(A) - 1, bootstrapped the same way.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .metrics import Better, MetricInfo, Scale

ALPHA = 0.05
RESAMPLES = 4000
SEED = 20240611


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def bootstrap_ci(a: Sequence[float], b: Sequence[float], *, relative: bool = False, resamples: int = RESAMPLES,
                 seed: int = SEED, level: float = 0.95) -> Interval | None:
    """Percentile bootstrap interval of mean(b - a) (or mean(b)/mean(a) - 1), resampling pairs."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    n = len(x)
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    xa, yb = x[idx].mean(axis=1), y[idx].mean(axis=1)
    if relative:
        ok = xa != 0
        if not ok.all():
            return None
        stat = yb / xa - 1
    else:
        stat = yb - xa
    tail = (1 - level) / 2 * 100
    return Interval(float(np.percentile(stat, tail)), float(np.percentile(stat, 100 - tail)))


def wilcoxon_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value of b - a (zero differences dropped); 1.0 when all are zero."""
    d = np.asarray(b, float) - np.asarray(a, float)
    d = d[d != 0]
    if len(d) == 0:
        return 1.0
    if len(d) < 2:
        return 1.0  # one difference: the exact two-sided p-value is 1
    from scipy import stats as sps  # imported when needed: a second or more (bad input stays fast)

    return float(sps.wilcoxon(d).pvalue)


def sign_test_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided sign test: how often b > a among the pairs that differ (exact binomial)."""
    d = np.asarray(b, float) - np.asarray(a, float)
    up, down = int((d > 0).sum()), int((d < 0).sum())
    if up + down == 0:
        return 1.0
    from scipy import stats as sps

    return float(sps.binomtest(up, up + down, 0.5).pvalue)


@dataclass(frozen=True)
class Comparison:
    metric: str
    label: str
    a: str  # the baseline variant
    b: str
    n: int  # questions with a value for both
    mean_a: float | None
    mean_b: float | None
    diff: float | None  # mean(b - a)
    diff_ci: Interval | None
    rel: float | None  # mean(b) / mean(a) - 1
    rel_ci: Interval | None
    p_wilcoxon: float | None
    p_sign: float | None
    verdict: str
    significant: bool

    @property
    def p(self) -> float | None:
        return self.p_wilcoxon if self.p_wilcoxon is not None else self.p_sign

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def per_question(rows: Sequence[Mapping[str, Any]], variant: str, metric: str) -> dict[str, float]:
    """Mean over repeats of one metric for one variant, by question id (runs without a value left out)."""
    values: dict[str, list[float]] = {}
    for r in rows:
        v = r.get("metrics", {}).get(metric)
        if r["variant"] == variant and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            values.setdefault(r["question_id"], []).append(float(v))
    return {q: sum(v) / len(v) for q, v in values.items()}


def compare_metric(rows: Sequence[Mapping[str, Any]], info: MetricInfo, a: str, b: str) -> Comparison:
    qa, qb = per_question(rows, a, info.key), per_question(rows, b, info.key)
    common = sorted(set(qa) & set(qb))
    xa, xb = [qa[q] for q in common], [qb[q] for q in common]
    n = len(common)
    if n == 0:
        return Comparison(info.key, info.label, a, b, 0, None, None, None, None, None, None, None, None,
                          f"{info.label}: no paired values", False)
    mean_a, mean_b = sum(xa) / n, sum(xb) / n
    diff = mean_b - mean_a
    rel = mean_b / mean_a - 1 if mean_a else None
    rel_ci = bootstrap_ci(xa, xb, relative=True) if rel is not None else None
    pw, ps = wilcoxon_p(xa, xb), sign_test_p(xa, xb)
    c = Comparison(info.key, info.label, a, b, n, mean_a, mean_b, diff, bootstrap_ci(xa, xb), rel, rel_ci, pw, ps,
                   "", False)
    significant = c.p is not None and c.p < ALPHA and diff != 0
    return Comparison(**{**asdict(c), "diff_ci": c.diff_ci, "rel_ci": c.rel_ci,
                         "verdict": verdict(c, info, significant), "significant": significant})


def fmt_p(p: float | None) -> str:
    if p is None:
        return "p=n/a"
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def _interval(low: float, high: float, pct: bool) -> str:
    f = (lambda v: f"{v * 100:.0f}%") if pct else (lambda v: f"{v:.3g}")
    if low < 0 < high:  # the interval crosses zero: keep the signs
        return f" [{'-' if low < 0 else '+'}{f(abs(low))}, +{f(high)}]"
    lo, hi = sorted((abs(low), abs(high)))
    return f" [{f(lo)}, {f(hi)}]"


def _amount(c: Comparison, info: MetricInfo) -> str:
    """The size of a difference: in percent of A for relative metrics, in points for rates."""
    if info.scale is Scale.RELATIVE and c.rel is not None:
        ci = _interval(c.rel_ci.low, c.rel_ci.high, True) if c.rel_ci else ""
        return f"{abs(c.rel) * 100:.0f}%{ci}"
    assert c.diff is not None
    ci = _interval(c.diff_ci.low, c.diff_ci.high, False) if c.diff_ci else ""
    return f"{abs(c.diff):.3g}{' points' if info.scale is Scale.POINTS else ''}{ci}"


def verdict(c: Comparison, info: MetricInfo, significant: bool) -> str:
    """"terse is cheaper by 31% [22%, 40%], p=0.002 (better)" or "no significant difference in …"."""
    if not significant or c.diff is None:
        return f"no significant difference in {info.label} ({fmt_p(c.p)}, n={c.n})"
    better = ""
    if info.better is not Better.NEITHER:
        better = " (better)" if (c.diff < 0) == (info.better is Better.LOWER) else " (worse)"
    return f"{c.b} {info.phrase(c.diff > 0)} by {_amount(c, info)}, {fmt_p(c.p)}{better}"


def preference_summary(wins_b: int, wins_a: int, ties: int, a: str, b: str) -> dict[str, Any]:
    """Pairwise judge preferences over questions: the sign test on wins (ties left out)."""
    from scipy import stats as sps

    p = float(sps.binomtest(wins_b, wins_a + wins_b, 0.5).pvalue) if wins_a + wins_b else 1.0
    n = wins_a + wins_b + ties
    if p < ALPHA and wins_b != wins_a:
        lead = b if wins_b > wins_a else a
        text = f"the judge prefers {lead} ({b} {wins_b}, {a} {wins_a}, ties {ties} of {n}), {fmt_p(p)}"
    else:
        text = f"no significant preference ({b} {wins_b}, {a} {wins_a}, ties {ties} of {n}, {fmt_p(p)})"
    return {"a": a, "b": b, "wins_a": wins_a, "wins_b": wins_b, "ties": ties, "p_sign": p, "verdict": text,
            "significant": p < ALPHA and wins_a != wins_b}


def mean_ci(values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, Interval | None]:
    """The mean of per-question values with a percentile bootstrap 95% interval."""
    x = np.asarray(values, float)
    if len(x) == 0:
        raise ValueError("no values")
    if len(x) < 2:
        return float(x.mean()), None
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    return float(x.mean()), Interval(float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))
