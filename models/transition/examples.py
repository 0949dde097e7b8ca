"""Training instances of the transition classifier, in arrays with room for more.

The gold sequences' instances fill the first rows; each bootstrapping round writes its
explored instances after them (`bootstrap.explore_examples`), in the same arrays, so
the gold ones are never held twice. Rows not yet written are pages numpy has not
touched: they take no memory.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

EXPLORED_PER_WORD = 4     # room a round of exploration may fill: moves a word, at most


class Examples(NamedTuple):
    """X int32 [cap, templates]: feature rows; y int64 [cap]: the oracle's action;
    V uint8 [cap, ceil(actions / 8)]: the actions valid in the state, as bits
    (`classifier.pack_bits`; `valid_moves` unpacks them). Rows [:n] are filled."""
    X: np.ndarray
    y: np.ndarray
    V: np.ndarray
    n: int

    @classmethod
    def empty(cls, capacity: int, templates: int, actions: int) -> Examples:
        return cls(np.zeros((capacity, templates), np.int32), np.zeros(capacity, np.int64),
                   np.zeros((capacity, (actions + 7) // 8), np.uint8), 0)

    def filled(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Views of the rows written: (X, y, V)."""
        return self.X[:self.n], self.y[:self.n], self.V[:self.n]

    def room(self) -> int:
        return len(self.y) - self.n


def valid_moves(V: np.ndarray, actions: int) -> np.ndarray:
    """bool [rows, actions]: the valid-move bits of `Examples.V` rows, unpacked."""
    return np.unpackbits(V, axis=1, count=actions, bitorder="little").astype(bool)


def explore_room(golds) -> int:
    """Rows a round of exploration over the sentences of `golds` (heads, labels) may
    write: EXPLORED_PER_WORD a word, root included."""
    return sum(EXPLORED_PER_WORD * len(gh) for gh, _ in golds) + 16
