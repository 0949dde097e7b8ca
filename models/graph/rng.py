"""Explicit random state for numba kernels: xorshift64* in a uint64[1] array.

Kernels take the state array instead of touching a global generator, so a
seeded decode is reproducible whatever else ran in the process.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_MUL = np.uint64(2685821657736338717)
_S12 = np.uint64(12)
_S25 = np.uint64(25)
_S27 = np.uint64(27)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0


def new_state(seed: int) -> np.ndarray:
    """State array for a seed (any int; 0 is remapped, xorshift needs non-zero)."""
    x = (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & 0xFFFFFFFFFFFFFFFF
    return np.array([x or 1], dtype=np.uint64)


@njit(cache=True, inline="always")
def next_u64(state):
    x = state[0]
    x ^= x >> _S12
    x ^= x << _S25
    x ^= x >> _S27
    state[0] = x
    return x * _MUL


@njit(cache=True, inline="always")
def uniform(state):
    """Uniform float in [0, 1)."""
    return np.float64(next_u64(state) >> _S11) * _INV53


@njit(cache=True, inline="always")
def randint(state, n):
    """Uniform int in [0, n)."""
    return np.int64(next_u64(state) % np.uint64(n))
