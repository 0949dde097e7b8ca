"""Turn a sentence's strings into the integer arrays the numba kernels read.

Every token becomes a row of hashed attributes (lower-cased form, lemma, UPOS,
XPOS, 3-letter suffix, word class); position 0 is the artificial root. The word
class is the word's Brown cluster when the model has clusters and the word has
one (Koo et al. 2008), else its lemma: the arc templates read it where they would
read the lemma, so a model without clusters gets the lemma features unchanged.
Strings are hashed with a stable 64-bit hash so no vocabulary has to be stored:
an unseen word simply hashes to features that carry no weight.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# attribute columns of `attrs`
A_WORD, A_LEMMA, A_UPOS, A_XPOS, A_SUFFIX, A_CLASS = 0, 1, 2, 3, 4, 5
N_ATTRS = 6

UPOS_TAGS = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART",
    "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)
UPOS_ROOT = len(UPOS_TAGS)       # id of the root token's tag
UPOS_UNKNOWN = UPOS_ROOT + 1     # "_" or a tag outside UD's 17
N_UPOS = UPOS_UNKNOWN + 1
_UPOS_ID = {t: i for i, t in enumerate(UPOS_TAGS)}


@lru_cache(maxsize=1 << 18)
def stable_hash(text: str) -> int:
    """63-bit hash of a string, the same in every process (unlike `hash`)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


_ROOT_WORD = stable_hash("<ROOT>")


@dataclass(frozen=True)
class EncodedSentence:
    """Kernel view of a sentence of n words (row 0 is the root).

    attrs: uint64 (n+1, N_ATTRS) hashed attributes; `upos` column holds small ids.
    upos_prefix: int32 (n+2, N_UPOS); upos_prefix[i, t] = #words j in 1..i-1 with tag t,
    so the tags strictly between two positions are counted in O(1).
    """

    attrs: np.ndarray
    upos_prefix: np.ndarray

    @property
    def n(self) -> int:
        return self.attrs.shape[0] - 1


def upos_id(tag: str) -> int:
    return _UPOS_ID.get(tag, UPOS_UNKNOWN)


def encode(
    forms: Sequence[str],
    lemmas: Sequence[str] | None,
    upos: Sequence[str],
    xpos: Sequence[str],
    clusters: Sequence[int] | None = None,
) -> EncodedSentence:
    """Encode one sentence given per-word strings (lemmas may be None or "_") and,
    optionally, each word's Brown cluster path (0: none; the lemma stands in)."""
    n = len(forms)
    attrs = np.zeros((n + 1, N_ATTRS), dtype=np.uint64)
    attrs[0] = (_ROOT_WORD, _ROOT_WORD, UPOS_ROOT, _ROOT_WORD, _ROOT_WORD, _ROOT_WORD)
    tags = np.empty(n + 1, dtype=np.int64)
    tags[0] = UPOS_ROOT
    for i in range(n):
        low = forms[i].lower()
        lemma = lemmas[i] if lemmas is not None and lemmas[i] not in ("_", "") else low
        tags[i + 1] = upos_id(upos[i])
        attrs[i + 1, A_WORD] = stable_hash("w:" + low)
        attrs[i + 1, A_LEMMA] = stable_hash("l:" + lemma.lower())
        attrs[i + 1, A_UPOS] = tags[i + 1]
        attrs[i + 1, A_XPOS] = stable_hash("x:" + xpos[i])
        attrs[i + 1, A_SUFFIX] = stable_hash("s:" + low[-3:])
        c = 0 if clusters is None else int(clusters[i])
        attrs[i + 1, A_CLASS] = stable_hash(f"c:{c}") if c else attrs[i + 1, A_LEMMA]
    prefix = np.zeros((n + 2, N_UPOS), dtype=np.int32)
    for i in range(1, n + 1):
        prefix[i + 1] = prefix[i]
        prefix[i + 1, tags[i]] += 1
    return EncodedSentence(attrs=attrs, upos_prefix=prefix)
