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
- greedy: the distinct local optima of the restarts (up to 256), each weighted by
  softmax(score / GREEDY_TAU) over the optima (the count of restarts that
  reached an optimum is ignored: it measures the size of its basin, not its
  score). A word's confidence is the total weight of the optima in which it
  has the decoded head. With a single optimum every word gets 1.0.

The two temperatures are temperature scaling (Guo et al. 2017) fitted on 300
en_ewt dev sentences outside the benchmark's 500-sentence subset
(`python bench/graph/bench_sampling.py tune`); on the subset the expected
calibration error is 0.036 (sampling) and 0.047 (greedy), see
bench/RESULTS.md (sampling section). They belong to the shipped model's score
scale, not to a request, so they are not budget fields; a retrained model
should refit them.
"""
from __future__ import annotations

import numpy as np

CONFIDENCE_TEMPERATURE = 0.5
CONFIDENCE_SWEEPS = 50
GREEDY_TAU = 2.0


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
