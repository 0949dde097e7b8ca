"""Mixed precision in training: the choice by CPU, and the bfloat16 product's gradient."""
from __future__ import annotations

import numpy as np
import pytest

from models.neural import precision
from models.neural.precision import hardware_bf16, resolve

AMX = "flags\t\t: fpu vme sse2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8\n"
ZEN4 = "flags\t\t: fpu vme sse2 avx2 avx512f avx512_bf16 avx512_vnni\n"
OLDER = "flags\t\t: fpu vme sse2 avx2 avx512f avx512_vnni\n"


def test_the_cpu_flags_decide(tmp_path):
    (tmp_path / "amx").write_text("processor\t: 0\n" + AMX)
    (tmp_path / "zen4").write_text("processor\t: 0\n" + ZEN4)
    (tmp_path / "older").write_text("processor\t: 0\n" + OLDER)
    assert hardware_bf16(tmp_path / "amx")
    assert hardware_bf16(tmp_path / "zen4")
    assert not hardware_bf16(tmp_path / "older")
    assert not hardware_bf16(tmp_path / "missing")
    assert resolve("f32", 10**6) == "f32" and resolve("bf16", 10) == "bf16"
    with pytest.raises(ValueError, match="precision must be one of"):
        resolve("fp8", 10**6)


@pytest.mark.parametrize("hardware", [True, False])
def test_auto_takes_bfloat16_only_for_a_large_treebank_on_such_a_cpu(monkeypatch, hardware):
    monkeypatch.setattr(precision, "hardware_bf16", lambda: hardware)
    assert resolve("auto", precision.BF16_MIN_WORDS) == ("bf16" if hardware else "f32")
    assert resolve("auto", precision.BF16_MIN_WORDS - 1) == "f32"


def test_the_bfloat16_product_and_its_gradient_stay_close_to_float32():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from models.neural.jax_net import product

    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.normal(size=(12, 40)), jnp.float32)
    b = jnp.asarray(rng.normal(size=(40, 7)), jnp.float32)
    probe = jnp.asarray(rng.normal(size=(12, 7)), jnp.float32)

    def run(precision):
        mm = product(precision)
        value = mm(a, b)
        grads = jax.grad(lambda x, y: jnp.sum(mm(x, y) * probe), argnums=(0, 1))(a, b)
        return [value, *grads]

    for low, exact in zip(run("bf16"), run("f32")):
        assert low.dtype == jnp.float32
        np.testing.assert_allclose(low, exact, atol=2e-2 * float(np.abs(exact).max()))
        assert not np.array_equal(low, exact)
    with pytest.raises(ValueError, match="precision must be"):
        product("f16")
