"""`worker.pace`: when a job's measured pace says it cannot end before its expiry."""
from __future__ import annotations

import pytest

from worker.pace import MIN_WORDS, SURE, Pace


def test_a_job_is_doomed_only_by_what_it_has_measured_or_the_prior():
    pace = Pace(deadline_at=100.0, expires_at=101.0)
    assert not pace.doomed(10_000, 10_000, now=100.5)      # nothing measured: go on
    pace.analysed(250, 0.5)                                 # 2 ms a word
    assert pace.doomed(1750, 0, now=100.5)                  # 3.5 s of analysis left
    assert not pace.doomed(250, 0, now=100.5)               # 0.5 s x SURE: it fits
    assert Pace(100.0, 101.0, prior=pace.rates()).doomed(1750, 0, now=100.0)
    # before its deadline a job goes by its own pace only, never another job's
    assert not Pace(100.0, 101.0, prior=pace.rates()).doomed(1750, 0, now=99.9)


def test_parses_before_the_deadline_do_not_count():
    """They search to their share of the deadline: dearer than the least effort after it."""
    pace = Pace(deadline_at=100.0, expires_at=101.0)
    pace.parsed(100, started=99.0, seconds=1.0)
    assert not pace.doomed(0, 10_000, now=100.5)
    pace.parsed(100, started=100.1, seconds=0.1)            # 1 ms a word, late
    assert pace.doomed(0, 1000, now=100.5)
    assert not pace.doomed(0, int(0.4 / 0.001 / SURE), now=100.5)
    assert not pace.doomed(0, 1000, now=99.0)               # before the deadline: no parse
                                                            # pace applies


def test_without_an_expiry_nothing_is_doomed():
    pace = Pace(deadline_at=None, expires_at=None)
    pace.analysed(10, 100.0)
    assert not pace.doomed(10**6, 10**6)


def test_a_step_of_few_words_does_not_set_the_pace():
    """One 2-word sentence's analysis is the call's fixed cost (27 ms under load): as a
    pace, 200 words more would need 4.3 s, and a job with 4 s to go was stopped."""
    pace = Pace(deadline_at=100.0, expires_at=110.0)
    pace.analysed(2, 0.054)
    assert not pace.doomed(200, 0, now=106.0)
    assert "analyse" not in pace.rates()
    pace.analysed(MIN_WORDS, MIN_WORDS * 0.004)             # 4 ms a word: it counts
    assert pace.rates()["analyse"] == pytest.approx(0.004)
