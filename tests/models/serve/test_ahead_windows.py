"""`ahead_windows`: the batches a job's sentences are analysed in, in order, each
sentence once, within the sentence and word caps (a longer sentence alone)."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from models.serve.parse_policy import AHEAD_SENTENCES, AHEAD_TOKENS, ahead_windows


@given(st.lists(st.integers(1, 3 * AHEAD_TOKENS // 2), max_size=200))
def test_windows_cover_the_sentences_in_order_within_the_caps(lengths):
    windows = ahead_windows(lengths)
    assert [i for a, b in windows for i in range(a, b)] == list(range(len(lengths)))
    for a, b in windows:
        assert 0 < b - a <= AHEAD_SENTENCES
        assert b - a == 1 or sum(lengths[a:b]) <= AHEAD_TOKENS


def test_short_sentences_fill_a_window_long_ones_stand_alone():
    assert ahead_windows([10] * 70) == [(0, 32), (32, 64), (64, 70)]
    assert ahead_windows([3000, 5, 5]) == [(0, 1), (1, 3)]
    assert ahead_windows([]) == []
