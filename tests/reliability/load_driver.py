"""A small load driver for the fault tests: client threads posting real EWT sentences.

`Load(url, n_threads, body_for)` starts `n_threads` httpx clients that keep posting
`/parse` requests until stopped (or each has sent `per_thread`), and records every
outcome (status, error code, Retry-After, seconds, transport error). The checks in
`check_answered` are what every fault must keep true: each request sent got an
answer (200, or a 503 naming its error code with retry advice) within its deadline
plus one second (issue 20; `budget_caps.deadline_ms` when the body asks for none).
"""
from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from load_calibration import slowdown

ROOT = Path(__file__).resolve().parents[2]
DEV = Path(os.environ.get("DEPTREE_EWT_DIR", ROOT.parent / "shared" / "data" / "en_ewt")) \
    / "dev.conllu"


def dev_sentences(n: int = 400, skip: int = 0) -> list[str]:
    """The `# text =` lines of EWT dev (4 to 40 words, so each request costs about alike)."""
    out = []
    if DEV.exists():
        with open(DEV, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# text = "):
                    text = line[9:].strip()
                    if 4 <= len(text.split()) <= 40:
                        out.append(text)
    if not out:                      # no EWT data here: plain made-up sentences
        out = [f"The {i} dogs in the old house barked at the mail carrier ." for i in range(n)]
    out = out[skip:] + out[:skip]
    return (out * (n // len(out) + 1))[:n]


BUSY = {"restarts": 1000, "converge": 1000}     # ~0.1 s a sentence: workers stay busy
# the load's tagger: the accurate one (0.15 s for 600 words) keeps a request's cost at
# BUSY's; the contextual one, the shipped en_ewt's default, adds 0.3 to 2 s a request under
# this load, and the fault tests' own requests then spent their deadlines in the queue
LOAD_TAGGER = "accurate"


def busy(factor: float | None = None) -> dict:
    """BUSY divided by the machine's slowdown now (`load_calibration`, calibration): a
    request of the fault tests then costs about the same wall time on a busy machine
    as on a quiet one, so their queues drain, and their deadlines are met, alike
    (issue 61: with two busy loops the same requests ran past the 10 s deadline cap)."""
    f = slowdown() if factor is None else factor
    return {k: max(1, int(v / f)) for k, v in BUSY.items()}
DEADLINE_CAP_S = 10.0          # the servers' deadline_ms cap (the default): a request's
                               # deadline when its body names none


def caps(factor: float) -> tuple[dict[str, str], float]:
    """A server's DEPTREE_BUDGET_CAPS with the deadline cap (what bounds the load's
    requests, which name no deadline) scaled by a measured slowdown, and that cap in
    seconds for `Load.cap_s` (calibration: the default 10 s on a quiet machine)."""
    cap = DEADLINE_CAP_S * factor
    return {"DEPTREE_BUDGET_CAPS": f'{{"deadline_ms": {cap * 1000:.0f}}}'}, cap


def batches(n_per: int = 2, skip: int = 0, repeat: int = 600, **budget) -> Callable[[int], dict]:
    """Bodies for `Load`: request i -> n_per dev sentences (they come round again after
    `repeat`) with `budget` (default `busy()`), tagged by LOAD_TAGGER."""
    sents = dev_sentences(600, skip)
    budget = {"tagger": LOAD_TAGGER, **(budget or busy())}
    return lambda i: {"sentences": [sents[(i * n_per + j) % repeat] for j in range(n_per)],
                      **budget}


@dataclass
class Outcome:
    status: int | None               # None: no HTTP answer (transport error)
    seconds: float
    code: str | None = None          # error code of a non-200 answer
    retry_after: str | None = None
    error: str | None = None         # transport error
    body: Any = None
    deadline_s: float = DEADLINE_CAP_S   # the request's deadline (its body's deadline_ms)


@dataclass
class Load:
    url: str
    n_threads: int
    body_for: Callable[[int], dict]  # request number -> JSON body
    per_thread: int = 10**6
    timeout: float = 60
    cap_s: float = DEADLINE_CAP_S    # the server's deadline cap (see `caps`)
    outcomes: list[Outcome] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stop = threading.Event()
        self._counter = itertools.count()
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, daemon=True, name=f"load-{i}")
                        for i in range(self.n_threads)]

    def start(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=self.timeout) as c:
            for _ in range(self.per_thread):
                if self.stop.is_set():
                    return
                with self._lock:
                    i = next(self._counter)
                body = self.body_for(i)
                deadline_s = body.get("deadline_ms", self.cap_s * 1000) / 1000
                t0 = time.monotonic()
                try:
                    r = c.post("/parse", json=body)
                    o = Outcome(r.status_code, time.monotonic() - t0,
                                retry_after=r.headers.get("retry-after"),
                                deadline_s=deadline_s)
                    try:
                        o.body = r.json()
                    except ValueError:
                        o.body = r.text
                    if r.status_code != 200 and isinstance(o.body, dict):
                        o.code = (o.body.get("error") or {}).get("code")
                except httpx.HTTPError as exc:
                    o = Outcome(None, time.monotonic() - t0, error=f"{type(exc).__name__}: {exc}",
                                deadline_s=deadline_s)
                with self._lock:
                    self.outcomes.append(o)

    def wait_done(self, n: int, timeout: float) -> None:
        """Until at least n outcomes are recorded (or timeout)."""
        t0 = time.monotonic()
        while len(self.outcomes) < n and time.monotonic() - t0 < timeout:
            time.sleep(0.05)

    def finish(self, timeout: float = 120, stop: bool = False) -> list[Outcome]:
        """Wait for the threads (after their current request if `stop`); the outcomes."""
        if stop:
            self.stop.set()
        for t in self.threads:
            t.join(timeout)
        assert not any(t.is_alive() for t in self.threads), "a client thread still waits"
        return list(self.outcomes)

    def statuses(self) -> dict[Any, int]:
        out: dict[Any, int] = {}
        for o in self.outcomes:
            key = o.status if o.status == 200 else (o.status, o.code or o.error)
            out[key] = out.get(key, 0) + 1
        return out


def check_answered(outcomes: list[Outcome], bound_s: float, allow_503: tuple[str, ...] = (),
                   ) -> None:
    """Every request got 200 or a 503 with one of `allow_503` codes and a Retry-After,
    each within bound_s seconds and within its deadline plus one second; none was left
    without an HTTP answer."""
    assert outcomes, "no request was sent"
    for o in outcomes:
        assert o.status is not None, f"no answer: {o.error}"
        bound = min(bound_s, o.deadline_s + 1.0)
        assert o.seconds <= bound, f"answered after {o.seconds:.2f}s > {bound:g}s: {o}"
        if o.status == 200:
            sents = o.body["sentences"]
            assert sents and all(s["tokens"] for s in sents)
            continue
        assert o.status == 503 and o.code in allow_503, f"unexpected answer {o.status}: {o.body}"
        assert o.retry_after and int(o.retry_after) > 0, o
