"""Binary averaged perceptron over hashed sparse features, and its compact file: the
learner of the sentence splitter (`splitter.py`) and the word segmenter
(`segmenter.py`), each of which decides a gap from its own features."""
from __future__ import annotations

import json
import logging
import os
from array import array

import numpy as np
from numba import njit

logger = logging.getLogger(__name__)


@njit(cache=True)
def _train_epoch(indptr, indices, labels, order, w, u, step):
    """One perceptron sweep; w, u float32 [n_buckets]; returns the new step and errors.

    indptr int64 [n+1], indices int64 [nnz] (hashed feature ids), labels int8 [n]
    in {-1, +1}. u accumulates step * update for lazy averaging (w - u / step).
    """
    errors = 0
    for k in range(order.shape[0]):
        i = order[k]
        score = 0.0
        for j in range(indptr[i], indptr[i + 1]):
            score += w[indices[j]]
        y = labels[i]
        if y * score <= 0.0:
            errors += 1
            for j in range(indptr[i], indptr[i + 1]):
                w[indices[j]] += y
                u[indices[j]] += y * step
        step += 1
    return step, errors


class GapExamples:
    """Training examples of a gap classifier: each one's hashed feature ids and label
    (+1 or -1), kept in flat machine arrays as they come. Python lists of ints took
    ~40 bytes an id: 2 GB for the splitter's 1.6M gaps of a 50,000-sentence treebank."""

    def __init__(self) -> None:
        self.ids = array("q")
        self.ends = array("q", [0])
        self.labels = array("b")

    def add(self, ids: list[int], label: int) -> None:
        self.ids.extend(ids)
        self.ends.append(len(self.ids))
        self.labels.append(label)

    def __len__(self) -> int:
        return len(self.labels)


def train_averaged(examples: GapExamples, n_bits: int, epochs: int, seed: int, name: str
                   ) -> np.ndarray:
    """float32 [2**n_bits] averaged weights of the examples, visited in a new random
    order each epoch."""
    indptr = np.frombuffer(examples.ends, np.int64)
    ix = np.frombuffer(examples.ids, np.int64)
    y = np.frombuffer(examples.labels, np.int8)
    w = np.zeros(1 << n_bits, np.float32)
    u = np.zeros_like(w)
    rng = np.random.default_rng(seed)
    step = 1
    for epoch in range(epochs):
        order = rng.permutation(len(y)).astype(np.int64)
        step, errors = _train_epoch(indptr, ix, y, order, w, u, step)
        logger.info("%s epoch %d: %d errors / %d gaps", name, epoch + 1, errors, len(y))
    return (w - u / step).astype(np.float32)


def save_weights(path: str, weights: np.ndarray) -> None:
    """The non-zero weights as float16, with their indices (compressed npz)."""
    nz = np.flatnonzero(weights).astype(np.int32)
    np.savez_compressed(path, index=nz, value=weights[nz].astype(np.float16))


def load_weights(path: str, n_bits: int) -> np.ndarray:
    data = np.load(path)
    w = np.zeros(1 << n_bits, np.float32)
    w[data["index"]] = data["value"].astype(np.float32)
    return w


def save_model(directory: str, name: str, weights: np.ndarray, header: dict) -> None:
    """A gap classifier's two files: `name`.npz, its weights (`save_weights`), and
    `name`.json, `header` (format_version, n_bits, ...) with the features' hash."""
    os.makedirs(directory, exist_ok=True)
    save_weights(os.path.join(directory, f"{name}.npz"), weights)
    with open(os.path.join(directory, f"{name}.json"), "w", encoding="utf-8") as f:
        json.dump({**header, "hash": "crc32"}, f, indent=0)


def load_model(directory: str, name: str, format_version: int) -> tuple[np.ndarray, dict]:
    """The weights and header `save_model` wrote; a ValueError for another format."""
    with open(os.path.join(directory, f"{name}.json"), encoding="utf-8") as f:
        header = json.load(f)
    version = header.get("format_version")
    if version != format_version:
        raise ValueError(f"{name} format {version} != {format_version}: retrain the front-end "
                         "with this version of deptree")
    return load_weights(os.path.join(directory, f"{name}.npz"), header["n_bits"]), header
