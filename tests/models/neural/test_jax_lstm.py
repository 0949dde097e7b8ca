"""The LSTM recurrence's hand-written backward pass equals JAX's own gradient of the
same forward scan (the forward pass itself is checked against the numpy inference in
`test_network.py`)."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from models.neural import jax_lstm  # noqa: E402


def _autodiff_recurrence(gx, fresh, wh):
    """The forward scan without the custom backward: `jax.grad` differentiates it."""
    return jax_lstm._forward(gx, fresh, wh)[0]


def test_gradients_match_autodiff():
    steps, directions, batch, hidden = 9, 2, 3, 4
    rng = np.random.default_rng(0)
    gx = jnp.asarray(rng.normal(size=(steps, directions, batch, 4 * hidden)), jnp.float32)
    wh = jnp.asarray(rng.normal(0, 0.5, (directions, hidden, 4 * hidden)), jnp.float32)
    fresh = np.zeros((steps, directions, batch), np.float32)
    fresh[[0, 4, 7]] = 1.0                      # sentences start afresh mid-row
    fresh = jnp.asarray(fresh)
    probe = jnp.asarray(rng.normal(size=(steps, directions, batch, hidden)), jnp.float32)

    def loss(f):
        return lambda g, w: jnp.sum(jnp.sin(f(g, fresh, w) * probe))

    np.testing.assert_allclose(jax_lstm.recurrence(gx, fresh, wh),
                               _autodiff_recurrence(gx, fresh, wh), atol=1e-6)
    ours = jax.grad(loss(jax_lstm.recurrence), argnums=(0, 1))(gx, wh)
    theirs = jax.grad(loss(_autodiff_recurrence), argnums=(0, 1))(gx, wh)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
