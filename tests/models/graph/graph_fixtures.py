"""Shared fixtures: random small graphs and a brute-force tree enumerator."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from models.graph.encode import encode
from models.tree import is_valid_tree


def all_trees(n: int):
    """Every UD tree (one root child, no cycle) over n words, as heads arrays."""
    for hs in itertools.product(range(n + 1), repeat=n):
        heads = np.array((-1,) + hs, dtype=np.int64)
        if any(heads[i] == i for i in range(1, n + 1)):
            continue
        if is_valid_tree(heads):
            yield heads


def random_sentence(rng: np.random.Generator, n: int):
    tags = ["NOUN", "VERB", "DET", "ADJ", "ADP", "PRON"]
    return encode([f"w{rng.integers(5)}" for _ in range(n)], None,
                  list(rng.choice(tags, n)), list(rng.choice(["A", "B", "C"], n)))


