"""The encoder's words per CPU-second with the libm erf GELU against the rational one.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/contextual/gelu_ab.py

Three rounds of 300 en_ewt dev sentences each, both kernels on the same sentences in
each round, alternating, in one process (a ratio that holds on a noisy machine).
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

import models.contextual.encoder as E  # noqa: E402
from models.conllu import read_conllu  # noqa: E402
from models.contextual.features import ContextualFeatures  # noqa: E402
from models.contextual.source import EncoderSpec  # noqa: E402

DEV = ROOT.parent / "shared" / "data" / "en_ewt" / "dev.conllu"
LAYERS = (1, 2, 3, 4, 5)


@njit(cache=False, nogil=True)
def exact_(x: np.ndarray) -> None:
    """The GELU with libm's erf per element (the kernel before)."""
    flat = x.reshape(-1)
    for i in range(flat.size):
        v = flat[i]
        flat[i] = 0.5 * v * (1.0 + math.erf(v * 0.7071067811865476))


def main() -> None:
    kernels = {"exact": exact_, "rational": E.gelu_}
    sents = [[w.form for w in s.words] for s in read_conllu(DEV)]
    for k in kernels.values():                  # compiled, tokenizer read
        E.gelu_ = k
        ContextualFeatures(EncoderSpec.new(layers=LAYERS)).sentences(sents[:20])
    speed: dict[str, list[float]] = {k: [] for k in kernels}
    for r in range(3):
        batch = sents[100 + 300 * r: 400 + 300 * r]
        for name, k in kernels.items():
            E.gelu_ = k
            cf = ContextualFeatures(EncoderSpec.new(layers=LAYERS))
            cf.sentences(batch[:1])                 # loaded before the clock starts
            t = time.process_time()
            cf.sentences(batch)
            speed[name].append(sum(map(len, batch)) / (time.process_time() - t))
    print({k: [round(v) for v in vs] for k, vs in speed.items()})
    print("ratio rational / exact:", round(float(np.median(speed["rational"])
                                                 / np.median(speed["exact"])), 2))


if __name__ == "__main__":
    main()
