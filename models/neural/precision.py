"""The number type of the analyser's matrix products in training: bfloat16 operands with
float32 sums where the CPU multiplies bfloat16 matrices in hardware (Intel AMX, or the
AVX512-BF16 dot products of AMD Zen 4 and Intel Cooper Lake), float32 elsewhere.
Parameters, activations, the loss and Adam stay float32 (mixed precision,
Micikevicius et al. 2018; bfloat16 needs no loss scaling, Kalamkar et al. 2019), and
inference is float32 numpy whatever the training used."""
from __future__ import annotations

from pathlib import Path

CHOICES = ("auto", "bf16", "f32")


def hardware_bf16(cpuinfo: str | Path = "/proc/cpuinfo") -> bool:
    """Whether this CPU multiplies bfloat16 in hardware: with AMX-BF16 tiles XLA's
    bfloat16 products with float32 sums run ~6x faster than float32 ones and a training
    step 1.17x; with AVX512-BF16 alone a step runs 1.05-1.1x faster (bench/RESULTS.md,
    "Mixed precision" and "Huge pages")."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return False
    return any({"amx_bf16", "avx512_bf16"} & set(line.split()) for line in text.splitlines()
               if line.startswith("flags"))


def resolve(setting: str) -> str:
    """'bf16' or 'f32' for a `NeuralConfig.precision` setting ('auto': by the CPU)."""
    if setting not in CHOICES:
        raise ValueError(f"precision must be one of {', '.join(CHOICES)}, not {setting!r}")
    if setting == "auto":
        return "bf16" if hardware_bf16() else "f32"
    return setting
