"""Shared fixtures: random small graphs and a brute-force tree enumerator."""
from __future__ import annotations

import itertools

import numpy as np

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


MASK = (1 << 14) - 1


def first_order_scorer(rng: np.random.Generator, n: int):
    """A Scorer with random arc scores and no higher-order weight."""
    from models.graph.decoders import Scorer
    from models.graph.prune import all_arcs

    enc = random_sentence(rng, n)
    S = rng.normal(size=(n + 1, n + 1))
    allowed = all_arcs(n)
    S[~allowed] = -np.inf
    return Scorer(1, S, allowed, enc.attrs, enc.upos_prefix, np.zeros(MASK + 1, np.float32), MASK)


def third_order_scorer(rng: np.random.Generator, n: int, allowed=None, scale: float = 1.0):
    """A third-order Scorer with random hashed weights (times scale)."""
    from models.graph.decoders import Scorer
    from models.graph.prune import all_arcs
    from models.graph.scoring import arc_scores

    enc = random_sentence(rng, n)
    w = (scale * rng.normal(size=MASK + 1)).astype(np.float32)
    allowed = all_arcs(n) if allowed is None else allowed
    S = arc_scores(enc.attrs, enc.upos_prefix, w, np.uint64(MASK), allowed)
    return Scorer(3, S, allowed, enc.attrs, enc.upos_prefix, w, MASK)


def train_tiny_graph(tmp_path, data, *flags: str):
    """`deptree train-graph` (order 2, gold tags, 2 epochs) on the first 150 sentences of
    `data` into tmp_path/m, with extra flags; returns the model directory."""
    import itertools
    import subprocess
    import sys

    from models.conllu import read_conllu, write_conllu

    write_conllu(itertools.islice(read_conllu(data), 150), tmp_path / "train.conllu")
    r = subprocess.run([sys.executable, "-m", "deptree.cli", "train-graph",
                        "--data", str(tmp_path / "train.conllu"), "--out", str(tmp_path / "m"),
                        "--order", "2", "--epochs", "2", "--pruner-epochs", "1",
                        "--label-epochs", "1", "--log2-size", "18", "--gold-tags", *flags],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return tmp_path / "m"
