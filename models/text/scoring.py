"""Span and tag scores for the text front-end (UD-style span F1 over characters)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence


def span_f1(gold: Iterable[tuple[int, int]], pred: Iterable[tuple[int, int]]) -> dict[str, float]:
    """Precision/recall/F1 of exactly matching (start, end) spans (multiset)."""
    g, p = Counter(gold), Counter(pred)
    hit = sum((g & p).values())
    ng, np_ = sum(g.values()), sum(p.values())
    prec = hit / np_ if np_ else 0.0
    rec = hit / ng if ng else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": prec, "recall": rec, "f1": f1, "gold": ng, "pred": np_}


def accuracy(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> float:
    """Token accuracy over sentences of equal lengths."""
    n = hit = 0
    for gs, ps in zip(gold, pred, strict=True):
        if len(gs) != len(ps):
            raise ValueError(f"sentence length {len(ps)} != gold {len(gs)}")
        n += len(gs)
        hit += sum(a == b for a, b in zip(gs, ps))
    return hit / n if n else 0.0
