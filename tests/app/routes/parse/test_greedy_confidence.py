"""Greedy's per-arc confidence is informative at its default budget (issue 61, first
contact 6): with the analyser's arc scores the default search mostly ends in a single
optimum, and the optima alone gave every word 1.0 (`confidence_samples: 1`). Now it
also weighs each word's first-order arc probabilities (models/graph/confidence.py):
over en_ewt dev its expected calibration error is about 0.01 (bench/RESULTS.md). A
real `deptree serve` with the shipped model, the first 40 dev sentences."""
from __future__ import annotations

from itertools import islice

import numpy as np
import pytest

from models.conllu import read_conllu
from tests.conftest import EWT


@pytest.fixture(scope="module")
def dev():
    path = EWT / "dev.conllu"
    if not path.exists():
        pytest.skip(f"no EWT dev data at {path}")
    return list(islice(read_conllu(str(path)), 40))


def test_greedy_confidence_tells_right_heads_from_wrong_at_the_default_budget(server, dev):
    conf, ok = [], []
    with server.client() as c:
        for k in range(0, len(dev), 5):          # a few at a time: within the deadline cap
            r = c.post("/parse", json={"sentences": [[w.form for w in s.words]
                                                     for s in dev[k:k + 5]],
                                       "decoder": "greedy", "confidence": True})
            assert r.status_code == 200, r.text
            for s, out in zip(dev[k:k + 5], r.json()["sentences"]):
                assert len(out["stats"]["confidence"]) == len(s.words)
                conf += out["stats"]["confidence"]
                ok += [t["head"] == w.head for t, w in zip(out["tokens"], s.words)]
    conf, ok = np.array(conf), np.array(ok)
    assert (conf < 1.0).mean() > 0.5, "confidence 1.0 for most words"
    assert conf[~ok].mean() < conf[ok].mean() - 0.1       # wrong heads are less sure
    assert abs(conf.mean() - ok.mean()) < 0.1             # and sure about as often as right
