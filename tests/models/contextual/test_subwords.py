"""Subword pieces aligned to a treebank's words, on hostile text."""
from __future__ import annotations

import numpy as np
import pytest

from models.errors import ModelError

pytest.importorskip("tokenizers")
from models.contextual.features import ContextualFeatures  # noqa: E402
from models.contextual.source import EncoderSpec  # noqa: E402
from models.contextual.subwords import MAX_PIECES  # noqa: E402

try:
    SPEC = EncoderSpec.new(layers=(1, 2))
except ModelError as exc:
    pytest.skip(f"no contextual encoder here: {exc}", allow_module_level=True)

HOSTILE = {
    "a very long word": ["see", "https://example.org/" + "abcdefghij" * 60, "now"],
    "unknown scripts": ["ᚠᛇᚻ", "𓀀𓀁", "ꦲꦏ꧀ꦱꦫ", "ⴰⵣⵓⵍ"],
    "one combining mark": ["\u0301", "e\u0301", "\u0308"],
    "emoji": ["😀", "👍🏽", "👨‍👩‍👧", "🇭🇺"],
    "erased by the normalizer": ["\u200b", "\u00ad", "\ufeff", "a"],
    "control and private use": ["\x07", "\ue000", "x"],
    "digits and punctuation": ["1.000.000", "--", "...", "«»"],
}


@pytest.fixture(scope="module")
def features():
    return ContextualFeatures(SPEC)


def _check(p, n_words, max_positions):
    assert len(p.starts) == len(p.ends) == n_words
    assert np.all(p.ends > p.starts)                              # every word has a piece
    assert np.all(p.ends - p.starts <= MAX_PIECES)
    assert np.all(p.starts[1:] >= p.ends[:-1])                   # in order, no overlap
    for a, b in p.windows:
        assert b - a <= max_positions
        assert p.ids[a] == 0 and p.ids[b - 1] == 2               # <s> ... </s>
    covered = set()
    for a, b in p.windows:
        covered |= set(range(a + 1, b - 1))
    for s, e in zip(p.starts, p.ends):                           # a word in one window
        assert set(range(s, e)) <= covered
        assert any(a < s and e < b for a, b in p.windows)


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_every_word_gets_its_own_pieces_and_a_finite_state(features, kind):
    words = HOSTILE[kind]
    p = features.pieces(words)
    _check(p, len(words), features.encoder.max_positions)
    states = features.sentences([words])[0]
    assert states.shape == (len(words), 2, 384) and np.isfinite(states).all()


def test_a_word_is_cut_to_its_first_and_last_pieces(features):
    long_word = "Donaudampfschifffahrtsgesellschaftskapitän" * 8
    (pieces,) = features.subwords.word_pieces([long_word])
    full = features.subwords.tok.encode([long_word], is_pretokenized=True,
                                        add_special_tokens=False).ids
    assert len(full) > MAX_PIECES and len(pieces) == MAX_PIECES
    assert list(pieces) == full[:MAX_PIECES // 2] + full[-(MAX_PIECES // 2):]


def test_a_sentence_longer_than_the_encoder_is_cut_at_words(features):
    words = [f"w{i}ord" for i in range(900)]
    p = features.pieces(words)
    assert len(p.windows) >= 2
    _check(p, len(words), features.encoder.max_positions)
    states = features.sentences([words])[0]
    assert states.shape[0] == 900 and np.isfinite(states).all()


def test_pieces_are_those_of_the_sentence_tokenized_whole(features):
    """Word by word, each with XLM-R's "▁": the pieces of the words joined by spaces."""
    words = ["Bu", "bir", "Türkçe", "cümledir", "."]
    p = features.pieces(words)
    whole = features.subwords.tok.encode(" ".join(words)).ids
    assert list(p.ids) == whole


def test_a_word_has_the_same_state_in_a_batch_as_alone(features):
    a, b = ["Ez", "egy", "mondat", "."], ["A", "much", "longer", "sentence", "than", "it", "."]
    both = features.sentences([a, b])
    np.testing.assert_allclose(both[0], features.sentences([a])[0], atol=2e-5)
    np.testing.assert_allclose(both[1], features.sentences([b])[0], atol=2e-5)
