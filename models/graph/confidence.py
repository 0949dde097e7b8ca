"""Per-arc confidence of a decoded tree: how sure the search is of each head.

With `"confidence": true` in the budget, `Decoded.stats["confidence"]` is a
list of n floats in [0, 1], one per word 1..n (list index 0 = word 1), beside
`stats["confidence_samples"]` (how many trees it was computed from).

- sampling: after annealing, one more chain starts from the decoded tree (the
  best of all chains) and runs CONFIDENCE_SWEEPS sweeps at the fixed
  temperature CONFIDENCE_TEMPERATURE; the first fifth is burn-in. A word's confidence
  is the fraction of the remaining sweeps' trees in which it has the decoded head: a
  Monte Carlo estimate of the marginal
  p(head of m = decoded head) under p(y) ~ exp(s(y)/CONFIDENCE_TEMPERATURE).
  This phase never changes the decoded tree. When the deadline leaves it no
  sample, `confidence` is None.
- greedy: the mean of two estimates of p(head of m = decoded head). One is the
  search's: the distinct local optima of the restarts (up to 256), each weighted by
  softmax(score / GREEDY_TAU) over the optima (the count of restarts that reached an
  optimum is ignored: it measures the size of its basin, not its score); a word's
  share is the total weight of the optima in which it has the decoded head. The
  other is the arcs': each word's softmax over its allowed heads of the first-order
  scores (the model's pruner, plus the analyser's weighted arc log-probabilities
  when they are in the scores) at GREEDY_ARC_TEMPERATURE, or
  GREEDY_NEURAL_ARC_TEMPERATURE with the analyser's scores. The arcs' estimate
  is what makes it informative at the default budget: with the analyser's scores,
  greedy's default search ends in a single optimum for 94% of en_ewt dev sentences,
  where the optima alone gave every word 1.0.

The temperatures are temperature scaling (Guo et al. 2017). Sampling's were fitted
on 300 en_ewt dev sentences outside the benchmark's 500-sentence subset
(`python bench/graph/bench_sampling.py tune`, gold tags); on the subset the expected
calibration error is 0.036 (bench/journal/04-sampling.md, "Calibration of per-arc
confidence"; 0.032 in its rerun, bench/RESULTS.md). Greedy's were fitted on 300 en_ewt dev
sentences (seed 0) of the default request, `deptree parse` tags:
the accurate tagger with the analyser's arc scores at the model's `arc_weight`, and
the fast tagger without them; over the whole of dev the expected calibration error is
0.011 and 0.017 (bench/graph/greedy_confidence.py). They belong to the shipped
model's score scale, not to a request, so they are not budget fields. A model's
calibrate stage refits the temperature with the analyser's scores for each of its
analysers (`confidence_temperature` in pipeline.json, `models/build/calibrate.py`): en_ewt's
contextual analyser is far surer than its accurate one, and at 1.6 its default
request's ECE was 0.070.
"""
from __future__ import annotations

import numpy as np

CONFIDENCE_TEMPERATURE = 0.5
CONFIDENCE_SWEEPS = 50
GREEDY_TAU = 1.0
GREEDY_ARC_TEMPERATURE = 0.55           # the graph model's first-order scores alone
GREEDY_NEURAL_ARC_TEMPERATURE = 1.6     # with the analyser's arc scores in them


def expected_calibration_error(conf: np.ndarray, right: np.ndarray, bins: int = 10
                               ) -> tuple[float, list[tuple]]:
    """ECE of confidences against 0/1 rightness over `bins` equal-width bins (Guo et al.
    2017, Section 2), and each non-empty bin's (lo, hi, words, mean confidence, share
    right)."""
    conf, right = np.asarray(conf, np.float64), np.asarray(right, np.float64)
    b = np.minimum((conf * bins).astype(int), bins - 1)
    rows, e = [], 0.0
    for i in range(bins):
        sel = b == i
        if sel.any():
            rows.append((i / bins, (i + 1) / bins, int(sel.sum()), float(conf[sel].mean()),
                         float(right[sel].mean())))
            e += sel.sum() / len(conf) * abs(right[sel].mean() - conf[sel].mean())
    return float(e), rows


def sample_confidence(agree: np.ndarray | None, kept: int) -> list[float] | None:
    """Fraction of kept samples agreeing with the decoded head, words 1..n.

    agree: float64 (n+1), agree[m] = kept samples in which m has its decoded head."""
    if agree is None or kept <= 0:
        return None
    return [float(min(1.0, a / kept)) for a in agree[1:]]


def optima_confidence(optima: np.ndarray, scores: np.ndarray, heads: np.ndarray,
                      tau: float = GREEDY_TAU) -> list[float]:
    """Score-weighted share of the local optima that agree with `heads`.

    optima: int64 (k, n+1) distinct local optima; scores: float64 (k);
    heads: int64 (n+1), the decoded tree. Weights are softmax(scores / tau).
    """
    n = heads.shape[0] - 1
    if len(scores) == 0:
        return [1.0] * n
    s = np.asarray(scores, dtype=np.float64) / tau
    wts = np.exp(s - s.max())
    wts /= wts.sum()
    agree = (np.asarray(optima)[:, 1:] == np.asarray(heads)[None, 1:])
    conf = wts @ agree
    return [float(min(1.0, max(0.0, c))) for c in conf]


def arc_confidence(scores: np.ndarray, allowed: np.ndarray, heads: np.ndarray,
                   temperature: float) -> np.ndarray:
    """Each word's probability of its decoded head under the softmax of its allowed
    heads' first-order scores / temperature, words 1..n.

    scores: float64 (n+1, n+1) [head, dependent]; allowed: bool, the same shape;
    heads: int64 (n+1), the decoded tree."""
    x = np.where(allowed, scores, -np.inf) / temperature
    top = x.max(axis=0, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    p = np.exp(x - top)
    p /= np.maximum(p.sum(axis=0, keepdims=True), 1e-300)
    n = heads.shape[0] - 1
    return p[np.asarray(heads)[1:], np.arange(1, n + 1)]


def greedy_confidence(first_order: np.ndarray, allowed: np.ndarray, neural: bool,
                      optima: np.ndarray, scores: np.ndarray, heads: np.ndarray,
                      temperature: float | None = None) -> list[float]:
    """Greedy's per-arc confidence (see above): the mean of the optima's share and the
    first-order arcs' probability; `neural`: the analyser's arc scores are in the
    first-order scores; `temperature`: the arcs' temperature the model calibrated for
    its analyser (`deptree train`'s calibrate stage), else the constants above."""
    if temperature is not None:
        t = temperature
    else:
        t = GREEDY_NEURAL_ARC_TEMPERATURE if neural else GREEDY_ARC_TEMPERATURE
    arcs = arc_confidence(first_order, allowed, heads, t)
    search = np.asarray(optima_confidence(optima, scores, heads))
    return [float(min(1.0, max(0.0, c))) for c in (arcs + search) / 2]
