"""Training state of the tensor component and the joint passive-aggressive step.

Lei et al. (ACL 2014), Section 4: one PA-I step updates the sparse weights theta and
U, V, W together. The score is theta.phi + lam * T (`tensor`), so the step is

    tau = min(C, loss / (|d theta|^2 + lam^2 (|dU|^2 + |dV|^2 + |dW|^2)))

theta += tau d theta and U += tau lam dU (likewise V, W), dU being the gradient of
T(gold) - T(pred). Without a tensor this is `online.pa_update` exactly. (RBGParser
scales theta's share by gamma as well: gamma * theta.phi + (1 - gamma) T. With the
model's weights standing for gamma * theta, that makes theta's steps gamma^2 = 0.09
times as long, and on tr_imst dev the model ended 0.24 UAS below the one without a
tensor, bench/journal/29.) U, V and W start as normal values of deviation 0.1: from
RBGParser's random unit columns (entries about 0.005 over 30,000 rows) the tensor's
scores stayed at 0.4% of the sparse ones' spread after 8 epochs.
Averaging is the same lazy trick as `online` (w_avg = w - u / step).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .tensor import (
    N_ARC_ROWS,
    TensorArcs,
    project,
    scatter_rows,
    tensor_gradients,
    tensor_scores_into,
    word_rows,
)


@njit(cache=True)
def active_norm2(idx, val, active):
    """Squared norm of the sparse difference over the active features."""
    s = 0.0
    for i in range(idx.shape[0]):
        if active[idx[i]]:
            s += val[i] * val[i]
    return s


@njit(cache=True)
def apply_sparse(w, u, step, idx, val, coef, active):
    """w[idx] += coef * val (active features only), with the averaging accumulator."""
    for i in range(idx.shape[0]):
        if active[idx[i]]:
            d = coef * val[i]
            w[idx[i]] += d
            u[idx[i]] += step * d


@njit(cache=True)
def apply_rows(M, uM, step, rows, grad, coef):
    """M[rows] += coef * grad, with the averaging accumulator."""
    for t in range(rows.shape[0]):
        for k in range(M.shape[1]):
            d = coef * grad[t, k]
            M[rows[t], k] += d
            uM[rows[t], k] += step * d


def _random_rows(rng: np.random.Generator, rows: np.ndarray, size: int, rank: int,
                 scale: float) -> np.ndarray:
    """(size, rank) float32, zero but on `rows`, normal with deviation `scale` there."""
    M = np.zeros((size, rank), dtype=np.float32)
    M[rows] = scale * rng.standard_normal((rows.shape[0], rank))
    return M


@dataclass
class Sentence:
    """What scoring one training sentence leaves for its update."""

    rows: np.ndarray
    P: np.ndarray
    Q: np.ndarray


class TensorState:
    """Dense U, V (2**log2, rank), W and their averaging accumulators while training."""

    def __init__(self, rank: int, log2: int, gamma: float, attrs_of_training, seed: int = 0,
                 scale: float = 0.1):
        size = 1 << log2
        self.rank, self.log2, self.gamma = rank, log2, gamma
        self.lam = 1.0 - gamma
        self.mask = size - 1
        self.used = np.zeros(size, dtype=np.bool_)
        for attrs in attrs_of_training:
            self.used[word_rows(attrs, self.mask).ravel()] = True
        rng = np.random.default_rng(seed)
        rows = np.flatnonzero(self.used)
        self.U = _random_rows(rng, rows, size, rank, scale)
        self.V = _random_rows(rng, rows, size, rank, scale)
        self.W = _random_rows(rng, np.arange(26), N_ARC_ROWS, rank, scale)
        self.uU = np.zeros(self.U.shape)
        self.uV = np.zeros(self.V.shape)
        self.uW = np.zeros(self.W.shape)
        self.identity = np.arange(size, dtype=np.int32)

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        return {"U": self.U, "V": self.V, "W": self.W, "uU": self.uU, "uV": self.uV,
                "uW": self.uW}

    def restore(self, arrays) -> None:
        for name in ("U", "V", "W", "uU", "uV", "uW"):
            getattr(self, name)[...] = arrays[f"tensor_{name}"]

    def add_scores(self, attrs: np.ndarray, allowed: np.ndarray, S: np.ndarray) -> Sentence:
        """S += lam * T on the allowed arcs (the current, not averaged, matrices)."""
        rows = word_rows(attrs, self.mask)
        P = project(rows, self.identity, self.U)
        Q = project(rows, self.identity, self.V)
        tensor_scores_into(P, Q, self.W.astype(np.float64), allowed, self.lam, S)
        return Sentence(rows, P, Q)

    def pa_step(self, sent: Sentence, gold: np.ndarray, pred: np.ndarray, loss: float,
                C: float, w: np.ndarray, u: np.ndarray, step: float, idx: np.ndarray,
                val: np.ndarray, active: np.ndarray) -> float:
        """One joint PA-I step (module docstring); returns tau."""
        gP, gQ, gW = tensor_gradients(gold, pred, sent.P, sent.Q, self.W.astype(np.float64))
        rU, dU = scatter_rows(sent.rows, gP)
        rV, dV = scatter_rows(sent.rows, gQ)
        norm2 = active_norm2(idx, val, active) + self.lam * self.lam * (
            float((dU * dU).sum()) + float((dV * dV).sum()) + float((gW * gW).sum()))
        if norm2 <= 0.0 or loss <= 0.0:
            return 0.0
        tau = min(C, loss / norm2)
        apply_sparse(w, u, step, idx, val, tau, active)
        apply_rows(self.U, self.uU, step, rU, dU, tau * self.lam)
        apply_rows(self.V, self.uV, step, rV, dV, tau * self.lam)
        apply_rows(self.W, self.uW, step, np.arange(N_ARC_ROWS), gW, tau * self.lam)
        return tau

    def averaged(self, step: float) -> TensorArcs:
        s = max(step, 1.0)
        return TensorArcs.from_dense((self.U - self.uU / s).astype(np.float32),
                                     (self.V - self.uV / s).astype(np.float32),
                                     (self.W - self.uW / s).astype(np.float32), self.used,
                                     self.lam)
