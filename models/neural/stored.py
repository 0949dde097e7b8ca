"""How the neural analyser's weights are stored: large matrices as int8 with one
float32 scale per row, the rest as float16 (`quantize`, `dequantize`), and where its
word vectors live (its own directory, or a sibling analyser's: `share_vectors`)."""
from __future__ import annotations

import json
import os
import re

import numpy as np

from models.errors import ModelError
from models.text.word_vectors import FILE as VECTORS

HEADER = "analyser.json"
QUANTIZE_MIN = 65_536    # matrices of at least this many weights are stored as int8
SCALE = ".scale"         # the npz key of a quantized matrix's per-row scales: KEY.scale
SIBLING = re.compile(r"\.\./[A-Za-z0-9_-]+")   # where shared vectors may be: ../neural


def quantize(params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What `save` writes: each matrix of at least QUANTIZE_MIN weights as int8 with a
    float32 scale per row of its last axis (KEY.scale: max |w| / 127), the rest as
    float16. Symmetric rounding to 255 levels of each row's own range: the analyser's
    dev scores move by 0.02 (en_ewt, both analysers' files halve)."""
    out: dict[str, np.ndarray] = {}
    for k, v in params.items():
        v = np.asarray(v, np.float32)
        if v.ndim >= 2 and v.size >= QUANTIZE_MIN:
            scale = np.abs(v).max(axis=-1, keepdims=True) / 127.0
            scale[scale == 0] = 1.0
            out[k] = np.clip(np.rint(v / scale), -127, 127).astype(np.int8)
            out[k + SCALE] = scale.astype(np.float32)
        else:
            out[k] = v.astype(np.float16)
    return out


def dequantize(stored: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The float32 weights `quantize` stored (float16 files of format 1 read as they are)."""
    out = {}
    for k, v in stored.items():
        if k.endswith(SCALE):
            continue
        scale = stored.get(k + SCALE)
        if scale is not None and (v.dtype != np.int8 or scale.shape != v.shape[:-1] + (1,)):
            raise ModelError(f"the analyser's {k} and its scales do not match: "
                             f"{v.dtype} {v.shape}, scales {scale.shape}")
        out[k] = v.astype(np.float32) * scale if scale is not None else v.astype(np.float32)
    return out


def vectors_dir(directory: str, header: dict) -> str:
    """Where the analyser saved in `directory` keeps its word vectors: there (`"vectors":
    true`) or in a sibling analyser's directory (`"../neural"`, `share_vectors`); no
    other place, so that a model's parts never read outside the model."""
    where = header.get("vectors")
    if where is True:
        return directory
    if not isinstance(where, str) or not SIBLING.fullmatch(where):
        raise ModelError(f"the neural analyser in {directory} keeps its vectors at {where!r}:"
                         " only its own directory or a sibling ('../neural') may hold them")
    return os.path.normpath(os.path.join(directory, where))


def share_vectors(directory: str, sibling: str) -> bool:
    """Whether the analyser saved in `directory` now reads its word vectors from the
    analyser saved in the sibling directory `sibling`: done when both files are the
    same arrays (the contextual analyser is trained on the neural one's vectors), which
    saves a 5.5 MB copy in a model (en_ewt)."""
    own = os.path.join(directory, VECTORS)
    theirs = os.path.join(os.path.dirname(os.path.normpath(directory)), sibling, VECTORS)
    if not (os.path.exists(own) and os.path.exists(theirs)):
        return False
    with np.load(own, allow_pickle=False) as a, np.load(theirs, allow_pickle=False) as b:
        if sorted(a.files) != sorted(b.files) or any(
                a[k].dtype != b[k].dtype or not np.array_equal(a[k], b[k]) for k in a.files):
            return False
    path = os.path.join(directory, HEADER)
    with open(path, encoding="utf-8") as f:
        header = json.load(f)
    header["vectors"] = f"../{sibling}"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(header, f, ensure_ascii=False, separators=(",", ":"))
    os.remove(own)
    return True
