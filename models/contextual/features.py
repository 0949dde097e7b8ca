"""Each word's contextual states: the encoder's layers, pooled over its pieces.

`ContextualFeatures(spec)` finds the encoder's installed files (`source.py`), runs
its first max(spec.layers) layers over sentences (`encoder.py`) and returns per
sentence float32 [n words, len(layers), H]: the mean of each word's pieces' states in
each layer read. The analyser mixes the layers with learnt weights (ELMo's scalar
mix, Peters et al. 2018, Section 3.2) and projects the mix; it never sees a piece.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.contextual.e5_file import E5File
from models.contextual.encoder import BATCH_PIECES, Encoder
from models.contextual.source import EncoderSpec
from models.contextual.subwords import Pieces, Subwords


def pool(states: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """float32 [n, L, H]: the mean over ends[i] - starts[i] (>= 1) pieces of states
    [P, L, H] for each word i."""
    c = np.concatenate([np.zeros((1,) + states.shape[1:], np.float64),
                        np.cumsum(states, axis=0, dtype=np.float64)])
    n = (ends - starts).astype(np.float64)[:, None, None]
    return ((c[ends] - c[starts]) / n).astype(np.float32)


class ContextualFeatures:
    def __init__(self, spec: EncoderSpec):
        weights, tokenizer = spec.locate()
        self.spec = spec
        self.layers = spec.layers
        self.encoder = Encoder(E5File(weights), max(spec.layers))
        self.subwords = Subwords(tokenizer)

    @property
    def dims(self) -> tuple[int, int]:
        """(layers read, hidden size)."""
        return len(self.layers), self.encoder.hidden

    def pieces(self, forms: Sequence[str]) -> Pieces:
        return self.subwords.sentence(forms, self.encoder.max_positions)

    def sentences(self, sentences: Sequence[Sequence[str]],
                  batch_pieces: int = BATCH_PIECES) -> list[np.ndarray]:
        """float32 [n_i, len(layers), H] for each sentence (each of at least one
        word), its windows run in length-sorted batches."""
        split = [self.pieces(s) for s in sentences]
        seqs, where = [], []
        for k, p in enumerate(split):
            for a, b in p.windows:
                seqs.append(p.ids[a:b])
                where.append((k, a))
        states = self.encoder.run(seqs, self.layers, batch_pieces)
        out = [np.zeros((len(p.ids), len(self.layers), self.encoder.hidden), np.float32)
               for p in split]
        for (k, a), st in zip(where, states):
            out[k][a:a + len(st)] = st
        return [pool(full, p.starts, p.ends) for full, p in zip(out, split)]
