"""Whether a job can still finish before nobody waits for it: its own measured pace.

A job's answer is all its trees or none: once the gateway's wait (`expires_at`: the
request's deadline plus DEADLINE_GRACE_S) has passed, every tree is wasted. Between
sentences `worker.engine` stops a job past that time, but one step (a chunk of the
analyser's look-ahead, one sentence's parse) can take a second or more on long
sentences, so a job that has no chance went on for seconds after its 504 (issue 61,
defect 1). `Pace` measures, within the job, the analyser's seconds per unit of its work
(a word, or a piece of the contextual encoder: `Pipeline.ahead_costs`) and, past
the request's deadline (where each sentence gets the least effort), the parses'
seconds per word; `doomed` says when what is left, at that pace, cannot end before
`expires_at`. Until the job has measured a step of its own, once past its deadline, it
goes by the worker's last measured pace (`prior`: the engine keeps the last job's), so
that a job that starts too late to end (the 1 ms deadline of the repro, a job queued
until just before its expiry) stops before its first step. It is a lower bound of the work left
(the parses before the deadline do not count, being dearer than the least effort),
scaled by SURE (below 1), so that a job that could still answer is not stopped: the
error is to stop late, never early.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

SURE = 0.8       # the share of the measured pace counted on: a margin for a faster rest
# A step of analysis of fewer words is mostly the call's fixed cost, not its words: the
# contextual tagger's call costs about 12 ms whatever its size, and 1 ms a word beyond it
# (quiet, one core), so a chunk of one 2-word sentence measured 6.7 ms a word. Such a
# step's time is not counted in the pace: a 64-sentence /process request, cut into
# 16-sentence jobs on a busy machine, judged its ~200 words by it, thought it needed
# 4 s more than it had, and was answered 504 with 5 s still to go (issue 61, defect 1).
MIN_WORDS = 32


@dataclass
class Pace:
    deadline_at: float | None      # unix time: past it, parses take the least effort
    expires_at: float | None       # unix time: past it, nobody waits for the answer
    analysed_words: int = 0
    analysis_s: float = 0.0
    parsed_words: int = 0          # parsed past the deadline
    parse_s: float = 0.0
    prior: dict[str, float] | None = None   # seconds a word: "analyse", "parse" (late)
    started_at: float = field(default_factory=time.time)

    def analysed(self, words: int, seconds: float) -> None:
        """A step of analysis of `words` units took `seconds` (not counted below
        MIN_WORDS)."""
        if words >= MIN_WORDS:
            self.analysed_words += words
            self.analysis_s += seconds

    def parsed(self, words: int, started: float, seconds: float) -> None:
        """A sentence of `words` parsed in `seconds`, started at `started` (unix time)."""
        if self.deadline_at is None or started >= self.deadline_at:
            self.parsed_words += words
            self.parse_s += seconds

    def doomed(self, to_analyse: int, to_parse: int, now: float | None = None) -> bool:
        """Whether analysing `to_analyse` more words and parsing `to_parse` more, at the
        pace measured so far, surely ends past `expires_at`."""
        if self.expires_at is None:
            return False
        now = time.time() if now is None else now
        late = self.deadline_at is None or now >= self.deadline_at
        rates = self.rates(prior=late)
        need = to_analyse * rates.get("analyse", 0.0)
        if late:
            need += to_parse * rates.get("parse", 0.0)
        return now + SURE * need > self.expires_at

    def blind_to_parses(self, now: float | None = None) -> bool:
        """Whether the job is past its deadline and knows no late parse's pace (its own
        or the prior's): `doomed` then counts the analysis only, so a whole window of
        look-ahead (up to 2,048 words, 0.6 s) ran before the first parse could tell
        that the job was lost, and the workers stayed busy 0.9 s after a 1 ms deadline.
        The engine then analyses one chunk ahead, parses, and so measures the parses."""
        if self.deadline_at is None:
            return False
        now = time.time() if now is None else now
        return now >= self.deadline_at and "parse" not in self.rates()

    def summary(self) -> str:
        """How the job has gone, for the log of a job stopped for time: when it started
        against its deadline (a late start is time spent in the queue), and what it has
        measured."""
        out = []
        if self.deadline_at is not None:
            ahead = self.deadline_at - self.started_at
            out.append(f"started {abs(ahead):.2f} s {'before' if ahead >= 0 else 'after'}"
                       " its deadline")
        out.append(f"timed {self.analysed_words} words (or encoder pieces) of analysis in"
                   f" {self.analysis_s:.2f} s (steps of {MIN_WORDS} or more)")
        if self.parsed_words:
            out.append(f"{self.parsed_words} late words parsed in {self.parse_s:.2f} s")
        return ", ".join(out)

    def rates(self, prior: bool = True) -> dict[str, float]:
        """Seconds a unit of analysis and a word of late parsing: this job's where it has
        measured them, else (with `prior`) the prior's. `doomed` uses the prior only
        past the deadline: another job's pace, measured under another load, never
        stops a job that still has time of its own to measure itself."""
        out = dict(self.prior or {}) if prior else {}
        if self.analysed_words:
            out["analyse"] = self.analysis_s / self.analysed_words
        if self.parsed_words:
            out["parse"] = self.parse_s / self.parsed_words
        return out
