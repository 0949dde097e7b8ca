"""UD's limits on a predicate's core dependents, kept when relations are chosen for a
tree: at most one subject not subtyped `:outer`, and at most one `obj` (the official
validator's level-3 tests `too-many-subjects` and `too-many-objects`; UD guidelines,
"Core arguments"). Relations are chosen arc by arc, so two dependents of one verb can
both come out `obj` (en_ewt dev, v6 model: 34 verbs with two objects, none in gold)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

SUBJECT = re.compile(r"^[nc]subj(:|$)")


@lru_cache(maxsize=64)
def rule_masks(labels: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Which relations count as an inner subject, and which as a direct object."""
    subj = np.array([bool(SUBJECT.match(r)) and r.split(":")[1:] != ["outer"]
                     for r in labels])
    obj = np.array([r.split(":")[0] == "obj" for r in labels])
    return subj, obj


def breaks_limits(best: np.ndarray, heads: Sequence[int], subj: np.ndarray,
                  obj: np.ndarray) -> bool:
    """Whether relations best (ids, one a word) give some head two subjects or two
    objects."""
    heads = np.asarray(heads)
    for mask in (subj, obj):
        h = heads[mask[best]]
        if len(h) != len(np.unique(h)):
            return True
    return False


def best_relations(scores: np.ndarray, heads: Sequence[int], subj: np.ndarray,
                   obj: np.ndarray) -> np.ndarray:
    """Each word's relation (a column of scores [n, relations]) maximising the summed
    score under the two limits for every head. Only heads whose argmax breaks a limit
    are searched: every pair (subject holder, object holder) among their dependents."""
    best = scores.argmax(1)
    heads = np.asarray(heads)
    for h in np.unique(heads):
        deps = np.flatnonzero(heads == h)
        if subj[best[deps]].sum() < 2 and obj[best[deps]].sum() < 2:
            continue
        best[deps] = _one_head(scores[deps], subj, obj)
    return best


def _one_head(s: np.ndarray, subj: np.ndarray, obj: np.ndarray) -> np.ndarray:
    """Relations of one head's dependents s [k, relations] with at most one subject and
    one object, by trying every subject holder and object holder (or none)."""
    other = np.where(subj | obj, -np.inf, s)
    x, xs = other.max(1), other.argmax(1)
    gain_s = np.where(subj, s, -np.inf).max(1) - x      # what holding the subject adds
    gain_o = np.where(obj, s, -np.inf).max(1) - x
    k = len(s)
    top = (0.0, -1, -1)
    for a in range(-1, k):
        ga = gain_s[a] if a >= 0 else 0.0
        for b in range(-1, k):
            if b >= 0 and b == a:
                continue
            g = ga + (gain_o[b] if b >= 0 else 0.0)
            if g > top[0]:
                top = (g, a, b)
    out = xs.copy()
    if top[1] >= 0:
        out[top[1]] = np.where(subj, s[top[1]], -np.inf).argmax()
    if top[2] >= 0:
        out[top[2]] = np.where(obj, s[top[2]], -np.inf).argmax()
    return out
