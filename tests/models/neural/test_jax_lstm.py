"""The LSTM recurrence's hand-written backward pass equals JAX's own gradient of the
same forward scan (the forward pass itself is checked against the numpy inference in
`test_network.py`)."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from models.neural import jax_lstm  # noqa: E402


def _autodiff_recurrence(gx, fresh, wh, low=jnp.float32):
    """The forward scan without the custom backward: `jax.grad` differentiates it."""
    return jax_lstm._forward(gx, fresh, wh, low)[0]


def _problem():
    steps, directions, batch, hidden = 9, 2, 3, 4
    rng = np.random.default_rng(0)
    gx = jnp.asarray(rng.normal(size=(steps, directions, batch, 4 * hidden)), jnp.float32)
    wh = jnp.asarray(rng.normal(0, 0.5, (directions, hidden, 4 * hidden)), jnp.float32)
    fresh = np.zeros((steps, directions, batch), np.float32)
    fresh[[0, 4, 7]] = 1.0                      # sentences start afresh mid-row
    fresh = jnp.asarray(fresh)
    probe = jnp.asarray(rng.normal(size=(steps, directions, batch, hidden)), jnp.float32)
    return gx, wh, fresh, probe


def _gradients(f, low):
    gx, wh, fresh, probe = _problem()
    return jax.grad(lambda g, w: jnp.sum(jnp.sin(f(g, fresh, w, low) * probe)),
                    argnums=(0, 1))(gx, wh)


def test_gradients_match_autodiff():
    gx, wh, fresh, _ = _problem()
    f32 = jnp.float32
    np.testing.assert_allclose(jax_lstm.recurrence(gx, fresh, wh, f32),
                               _autodiff_recurrence(gx, fresh, wh), atol=1e-6)
    ours = _gradients(jax_lstm.recurrence, f32)
    theirs = _gradients(_autodiff_recurrence, f32)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_bfloat16_products_stay_close_to_float32():
    """Mixed precision (`precision.py`): bfloat16 operands, float32 sums and state. The
    states and both gradients stay within bfloat16's rounding (8 bits of mantissa) of
    the float32 ones."""
    gx, wh, fresh, _ = _problem()
    np.testing.assert_allclose(jax_lstm.recurrence(gx, fresh, wh, jnp.bfloat16),
                               jax_lstm.recurrence(gx, fresh, wh, jnp.float32), atol=2e-2)
    low = _gradients(jax_lstm.recurrence, jnp.bfloat16)
    exact = _gradients(jax_lstm.recurrence, jnp.float32)
    for a, b in zip(low, exact):
        scale = float(np.abs(b).max())
        np.testing.assert_allclose(a, b, atol=3e-2 * scale)
        assert not np.array_equal(a, b)      # the products did run in bfloat16
