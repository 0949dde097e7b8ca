"""The number type of the analyser's matrix products in training: bfloat16 operands with
float32 sums for a large treebank where the CPU multiplies bfloat16 matrices in hardware
(Intel AMX, or the AVX512-BF16 dot products of AMD Zen 4 and Intel Cooper Lake),
float32 elsewhere.
Parameters, activations, the loss and Adam stay float32 (mixed precision,
Micikevicius et al. 2018; bfloat16 needs no loss scaling, Kalamkar et al. 2019), and
inference is float32 numpy whatever the training used."""
from __future__ import annotations

from pathlib import Path

CHOICES = ("auto", "bf16", "f32")
BF16_MIN_WORDS = 100_000    # `auto`: float32 for smaller training sets


def hardware_bf16(cpuinfo: str | Path = "/proc/cpuinfo") -> bool:
    """Whether this CPU multiplies bfloat16 in hardware: with AMX-BF16 tiles XLA's
    bfloat16 products with float32 sums run ~6x faster than float32 ones and a training
    step 1.17x; with AVX512-BF16 alone a step runs 1.05-1.1x faster
    (bench/journal/12-any-treebank.md, "Mixed precision: bfloat16 products in the
    analyser's training" and "Huge pages, and bfloat16 on AVX512-BF16")."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return False
    return any({"amx_bf16", "avx512_bf16"} & set(line.split()) for line in text.splitlines()
               if line.startswith("flags"))


def resolve(setting: str, words: int) -> str:
    """'bf16' or 'f32' for a `NeuralConfig.precision` setting and a training set of
    `words`. 'auto' takes bfloat16 on such a CPU from BF16_MIN_WORDS words on: en_ewt's
    analyser scored as its float32 twin did, and its build needs the speed to stay
    under an hour. Below, float32: with bfloat16, nl_lassysmall's analysers scored 0.43
    dev LAS lower on average over four seeds (0 to 0.73), hu_szeged's 0.33 in one, for
    a 1.1x faster training (bench/journal/12-any-treebank.md, "bfloat16 against float32 in four seeds")."""
    if setting not in CHOICES:
        raise ValueError(f"precision must be one of {', '.join(CHOICES)}, not {setting!r}")
    if setting == "auto":
        return "bf16" if words >= BF16_MIN_WORDS and hardware_bf16() else "f32"
    return setting
