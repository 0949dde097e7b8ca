"""A treebank's words as the encoder's subword pieces, and back.

Each word is tokenized on its own, as pre-tokenized input (`tokenizers`, with the
encoder's own `tokenizer.json`: XLM-R's normalizer and a "▁" before every word), so a
piece never spans two words and the alignment is exact. Words are cached by form.
Two kinds of word need care:

- a word the normalizer erases (a lone zero-width or control character, say) has no
  piece: it gets the unknown piece, so that every word has a state;
- a very long word (a URL, a hash) keeps its first `MAX_PIECES` / 2 and last
  `MAX_PIECES` / 2 pieces, so that one word cannot fill the encoder's window.

A sentence is `<s>` + its words' pieces + `</s>`; one of more than the encoder's
positions is cut into windows of whole words, each with its own `<s>` and `</s>`
(`windows`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.errors import ModelError

MAX_PIECES = 16          # of one word
CACHE_FORMS = 200_000


@dataclass(frozen=True)
class Pieces:
    """One sentence as piece ids: `ids` [P] (specials included), `starts`, `ends` [n]
    (each word's pieces are ids[starts:ends]) and the `windows` the encoder runs."""

    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    windows: tuple[tuple[int, int], ...]    # [a, b) ranges of ids, each one sequence


class Subwords:
    def __init__(self, tokenizer_json: str | Path):
        try:
            from tokenizers import Tokenizer
        except ModuleNotFoundError as exc:
            raise ModelError("the contextual encoder needs the package tokenizers: "
                             "pip install -e '.[contextual]'") from exc
        try:
            self.tok = Tokenizer.from_file(str(tokenizer_json))
        except Exception as exc:         # tokenizers raises its own Exception kinds
            raise ModelError(f"cannot read {tokenizer_json}: {exc}") from exc
        # each special by its own lookup: `get_vocab()` builds a dict of all 250,002
        # pieces, a third of a second of every load
        specials = {p: self.tok.token_to_id(p) for p in ("<s>", "</s>", "<unk>")}
        for piece, i in specials.items():
            if i is None:
                raise ModelError(f"{tokenizer_json} has no '{piece}' piece")
        self.bos, self.eos, self.unk = specials["<s>"], specials["</s>"], specials["<unk>"]
        self._cache: dict[str, np.ndarray] = {}

    def word_pieces(self, forms: Sequence[str]) -> list[np.ndarray]:
        """int64 piece ids of each word (1 to MAX_PIECES of them)."""
        missing = list(dict.fromkeys(f for f in forms if f not in self._cache))
        if missing:
            if len(self._cache) > CACHE_FORMS:
                self._cache = {}
            encoded = self.tok.encode_batch([[f] for f in missing], is_pretokenized=True,
                                            add_special_tokens=False)
            for f, e in zip(missing, encoded):
                ids = e.ids or [self.unk]
                if len(ids) > MAX_PIECES:
                    ids = ids[:MAX_PIECES // 2] + ids[-(MAX_PIECES // 2):]
                self._cache[f] = np.asarray(ids, np.int64)
        return [self._cache[f] for f in forms]

    def sentence(self, forms: Sequence[str], max_positions: int) -> Pieces:
        """The pieces of one sentence, in windows of at most max_positions."""
        pieces = self.word_pieces(forms)
        room = max_positions - 2
        ids: list[np.ndarray] = []
        starts = np.zeros(len(forms), np.int64)
        ends = np.zeros(len(forms), np.int64)
        windows = []
        at, used, w0 = 0, 0, 0
        for i, p in enumerate(pieces):
            if i == 0 or used + len(p) > room:          # a new window
                if i:
                    ids.append(np.array([self.eos]))
                    at += 1
                    windows.append((w0, at))
                w0 = at
                ids.append(np.array([self.bos]))
                at += 1
                used = 0
            ids.append(p)
            starts[i], ends[i] = at, at + len(p)
            at += len(p)
            used += len(p)
        ids.append(np.array([self.eos]))
        at += 1
        windows.append((w0, at))
        return Pieces(np.concatenate(ids), starts, ends, tuple(windows))
