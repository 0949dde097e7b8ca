"""The LSTM recurrence's hand-written backward pass equals JAX's own gradient."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from models.neural.jax_lstm import recurrence  # noqa: E402


def _autodiff_recurrence(gx, fresh, wh):
    """The same recurrence written plainly, for `jax.grad` to differentiate."""
    hidden = wh.shape[1]

    def step(carry, inp):
        h, c = carry
        g, new = inp
        keep = 1.0 - new[..., None]
        h, c = h * keep, c * keep
        g = g + jnp.matmul(h, wh)
        s = jax.nn.sigmoid(g[..., :3 * hidden])
        c = s[..., hidden:2 * hidden] * c + s[..., :hidden] * jnp.tanh(g[..., 3 * hidden:])
        h = s[..., 2 * hidden:] * jnp.tanh(c)
        return (h, c), h

    zero = jnp.zeros(gx.shape[1:-1] + (hidden,))
    return jax.lax.scan(step, (zero, zero), (gx, fresh))[1]


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

    np.testing.assert_allclose(recurrence(gx, fresh, wh), _autodiff_recurrence(gx, fresh, wh),
                               atol=1e-6)
    ours = jax.grad(loss(recurrence), argnums=(0, 1))(gx, wh)
    theirs = jax.grad(loss(_autodiff_recurrence), argnums=(0, 1))(gx, wh)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
