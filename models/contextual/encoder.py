"""The first layers of a BERT-shaped encoder in numpy, on the CPU.

A post-norm transformer (Vaswani et al. 2017; BERT, Devlin et al. 2019, Section 3):
embeddings of the piece, its position and token type 0, layer-normed; then per
layer x = LN(x + attention(x)), x = LN(x + W2 gelu(W1 x)). Only the layers up to the
last one a model reads are run: the middle layers carry the syntax, and cutting the
stack there is both faster and better than reading the top (issue 60's probes:
e5-small's layer 4 or 5 predicts heads far better than its layer 12).

Sequences are run in batches of similar length, padded and masked, so numpy's
matrix products do the work (`run`). The result is each sequence's states of the
requested layers, 0 being the embeddings' output.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.contextual.e5_file import E5File
from models.contextual.kernels import gelu_

BATCH_PIECES = 4096       # pieces of one batch (padding included)


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    d = x - mean
    var = (d * d).mean(-1, keepdims=True)
    return d / np.sqrt(var + eps) * w + b


def gelu(x: np.ndarray) -> np.ndarray:
    """The exact GELU, 0.5 x (1 + erf(x / sqrt 2)), as BERT and `e5.c` use it (a new
    float32 array; `kernels.gelu_` works in place)."""
    out = np.array(x, np.float32, order="C")
    gelu_(out)
    return out


@dataclass(frozen=True)
class Layer:
    qkv_w: np.ndarray      # [H, 3H] (x @ w)
    qkv_b: np.ndarray      # [3H]
    out_w: np.ndarray      # [H, H]
    out_b: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    ff_w: np.ndarray       # [H, FF]
    ff_b: np.ndarray
    ff_out_w: np.ndarray   # [FF, H]
    ff_out_b: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


class Encoder:
    """The first `depth` layers of the encoder in `file`."""

    def __init__(self, file: E5File, depth: int):
        h = file.header
        if not 0 <= depth <= h.layers:
            raise ValueError(f"the encoder has {h.layers} layers, not {depth}")
        self.file, self.depth = file, depth
        self.hidden, self.heads, self.eps = h.hidden, h.heads, h.eps
        self.max_positions = h.positions
        self.pos = file.array("emb.pos").reshape(h.positions, h.hidden)
        self.type0 = file.array("emb.type")[:h.hidden]
        self.eln = (file.array("emb.ln.w"), file.array("emb.ln.b"))
        self.layers = [self._layer(file, i) for i in range(depth)]

    @staticmethod
    def _layer(f: E5File, i: int) -> Layer:
        def w(name):                       # stored [n_out, n_in]: x @ w.T
            return np.ascontiguousarray(f.array(f"l{i}.{name}.w").T)

        def b(name):
            return f.array(f"l{i}.{name}")

        return Layer(qkv_w=np.ascontiguousarray(np.concatenate([w("q"), w("k"), w("v")], 1)),
                     qkv_b=np.concatenate([b("q.b"), b("k.b"), b("v.b")]),
                     out_w=w("ao"), out_b=b("ao.b"), ln1_w=b("aln.w"), ln1_b=b("aln.b"),
                     ff_w=w("fi"), ff_b=b("fi.b"), ff_out_w=w("fo"), ff_out_b=b("fo.b"),
                     ln2_w=b("oln.w"), ln2_b=b("oln.b"))

    def forward(self, ids: np.ndarray, lengths: np.ndarray,
                layers: Sequence[int]) -> np.ndarray:
        """float32 [len(layers), B, T, H]: the states of a padded batch ids [B, T]
        (sequences of `lengths`) after each of `layers` (0: the embeddings)."""
        batch, steps = ids.shape
        hd = self.hidden // self.heads
        x = self.file.word_rows(ids.reshape(-1)).reshape(batch, steps, self.hidden)
        x = layer_norm(x + self.pos[:steps] + self.type0, *self.eln, self.eps)
        keep = set(layers)
        out = {0: x} if 0 in keep else {}
        mask = np.where(np.arange(steps)[None, :] < np.asarray(lengths)[:, None], 0.0,
                        -1e9).astype(np.float32)[:, None, None, :]        # [B, 1, 1, T]
        scale = np.float32(1.0 / np.sqrt(hd))
        for i, ly in enumerate(self.layers[:max(layers, default=0)], 1):
            qkv = (x.reshape(-1, self.hidden) @ ly.qkv_w + ly.qkv_b).reshape(
                batch, steps, 3, self.heads, hd).transpose(2, 0, 3, 1, 4)   # [3, B, h, T, d]
            s = (qkv[0] * scale) @ qkv[1].transpose(0, 1, 3, 2) + mask      # [B, h, T, T]
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ qkv[2]).transpose(0, 2, 1, 3).reshape(-1, self.hidden)
            x = layer_norm(x + (ctx @ ly.out_w + ly.out_b).reshape(x.shape),
                           ly.ln1_w, ly.ln1_b, self.eps)
            f = x.reshape(-1, self.hidden) @ ly.ff_w + ly.ff_b
            gelu_(f)
            f = f @ ly.ff_out_w + ly.ff_out_b
            x = layer_norm(x + f.reshape(x.shape), ly.ln2_w, ly.ln2_b, self.eps)
            if i in keep:
                out[i] = x
        return np.stack([out[i] for i in layers])

    def run(self, sequences: Sequence[np.ndarray], layers: Sequence[int],
            batch_pieces: int = BATCH_PIECES) -> list[np.ndarray]:
        """float32 [n_i, len(layers), H] per sequence of piece ids (each at most
        `max_positions` long, its specials included), run in length-sorted batches."""
        if any(len(s) > self.max_positions for s in sequences):
            raise ValueError(f"a sequence is longer than {self.max_positions} pieces")
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        out: list[np.ndarray | None] = [None] * len(sequences)
        k = 0
        while k < len(order):
            longest = len(sequences[order[k]])
            j = k + 1
            while j < len(order):       # sorted: the next one is the longest so far
                n = len(sequences[order[j]])
                if n * (j - k + 1) > batch_pieces or n > 1.25 * longest + 8:
                    break
                j += 1
            group = order[k:j]
            steps = len(sequences[group[-1]])
            ids = np.ones((len(group), steps), np.int64)            # 1: XLM-R's <pad>
            lengths = np.array([len(sequences[i]) for i in group])
            for r, i in enumerate(group):
                ids[r, :lengths[r]] = sequences[i]
            states = self.forward(ids, lengths, layers)             # [L, B, T, H]
            for r, i in enumerate(group):
                out[i] = np.ascontiguousarray(states[:, r, :lengths[r]].transpose(1, 0, 2))
            k = j
        return out
