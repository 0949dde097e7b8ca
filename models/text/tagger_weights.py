"""The linear tagger's weights in their compact form (`compact_weights`): a loaded
tagger keeps only the non-zero weights of its dense [rows, classes] float32 matrix,
rows with more than classes / 8 non-zeros dense, the others as (class, value) pairs
(layout in `_tagger_kernels`), and gives them back as sorted flat indices
(`nonzero_weights`) to save them or rebuild the dense matrix.
"""
from __future__ import annotations

import numpy as np


def compact_weights(flat: np.ndarray, values: np.ndarray, n_rows: int, n_classes: int
                    ) -> tuple[np.ndarray, ...]:
    """(row_of, Wc, sp_start, sp_cls, sp_val) of the weights W.flat[flat] = values
    (flat: strictly increasing indices into a dense [n_rows, n_classes] matrix;
    layout in `_tagger_kernels`). Rows with more than n_classes / 8 non-zeros
    are dense rows of Wc (vectorized adds), the others (class, value) pairs."""
    if n_classes > np.iinfo(np.int16).max or n_rows > np.iinfo(np.int32).max:
        raise ValueError("too many classes or rows for the compact tagger weights")
    flat = np.asarray(flat, np.int64)
    values = np.asarray(values, np.float32)
    if len(flat) and (flat[0] < 0 or flat[-1] >= n_rows * n_classes
                      or not np.all(flat[1:] > flat[:-1])):
        raise ValueError("weight indices must be increasing and inside the matrix")
    row = flat // n_classes
    cls = (flat - row * n_classes).astype(np.int16)
    starts = np.flatnonzero(np.concatenate([[len(row) > 0], row[1:] != row[:-1]]))
    rows = row[starts]
    del row
    counts = np.diff(np.append(starts, len(flat)))
    dense = counts * 8 > n_classes
    n_dense = int(dense.sum())
    row_of = np.full(n_rows, -1, np.int32)
    row_of[rows[dense]] = np.arange(n_dense, dtype=np.int32)
    row_of[rows[~dense]] = -2 - np.arange(len(rows) - n_dense, dtype=np.int32)
    in_dense = np.repeat(dense, counts)
    Wc = np.zeros((n_dense, n_classes), np.float32)
    Wc[np.repeat(np.arange(n_dense), counts[dense]), cls[in_dense]] = values[in_dense]
    sp_start = np.zeros(len(rows) - n_dense + 1, np.int32)
    np.cumsum(counts[~dense], out=sp_start[1:])
    return row_of, Wc, sp_start, cls[~in_dense], values[~in_dense]


def nonzero_weights(row_of: np.ndarray, Wc: np.ndarray, sp_start: np.ndarray,
                    sp_cls: np.ndarray, sp_val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(flat indices, increasing, into the dense [rows, classes] matrix; float32 values)
    of compact weights, the inverse of `compact_weights`."""
    n_classes = Wc.shape[1]
    dense_rows = np.flatnonzero(row_of >= 0)
    block = Wc[row_of[dense_rows]]
    r, c = np.nonzero(block)
    sparse_rows = np.flatnonzero(row_of < -1)
    sparse_rows = sparse_rows[np.argsort(-2 - row_of[sparse_rows])]
    entry_rows = np.repeat(sparse_rows, np.diff(sp_start))
    flat = np.concatenate([dense_rows[r] * n_classes + c, entry_rows * n_classes + sp_cls])
    values = np.concatenate([block[r, c], sp_val])
    order = np.argsort(flat, kind="stable")
    return flat[order], values[order]
