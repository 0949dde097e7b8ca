"""Run one job on loaded models: the only place where the service calls a parser.

`Engine` holds the models a worker serves (loaded once, kernels warmed at start,
Parsito's per-worker workspace idea; on a cold numba cache the slow decoders warm in
the background, `worker/warm.py`); `run(job)` tokenizes what needs it,
checks the per-sentence limits on what it tokenized, then decodes each sentence
with the job's budget, tagging untagged input with the job's `tagger` (fast when a
job from an older gateway has none). A request deadline (`deadline_at`, unix time)
is shared out: each sentence's `deadline_ms` is its share, by tokens, of the time left
(one long sentence does not take all of it), and it covers every stage of that
sentence (`Pipeline.parse_words`). Between sentences, and between the chunks of the
analyser's look-ahead (`parse_policy.ahead_chunks`), the job stops when nobody waits
for it any more: past `expires_at` (the gateway answers 504 then), when `cancelled()`
says its client has gone, or when at its own measured pace it cannot end before
`expires_at` (`worker.pace`), so no job outlives its request by more than one step
(issue 61, defect 1). A job for a decoder still compiling waits for the warm-up
helper, asking the same between waits (`worker/warm.py`).
"""
from __future__ import annotations

import logging
import math
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from models.decoders import DEADLINE, Budget
from models.serve.registry import directories, expand
from models.serve.warmup import load_pipelines

from .config import WorkerConfig
from .items import prepare_item
from .logsafe import REQUEST_ID
from .pace import MIN_WORDS, Pace
from .protocol import JobError, LimitError, error_payload, rss_bytes, tree_dict
from .warm import Warmer

if TYPE_CHECKING:   # imported by load(): the gateway imports this module, never a kernel
    from models.serve.pipeline import Pipeline

logger = logging.getLogger(__name__)

JOB_FIELDS = {"model": str, "decoder": str, "items": list}    # what every job has
WAIT_SLICE_S = 0.1     # how often a job waiting for a compile asks whether it is still wanted
WARM_UP_WORDS = ["The", "quick", "brown", "fox", "jumped", "over", "the", "lazy", "dog", "."]


# A chunk's size, and the analysis pace, are counted in the units the analysis costs
# (`Pipeline.ahead_costs`): words, or the contextual encoder's subword pieces.
STEP_S = 0.25             # the time a chunk of look-ahead analysis is sized to take
MIN_CHUNK_WORDS = 2 * MIN_WORDS   # ... at the least (where the window has them): a
                          # smaller chunk is mostly a call's fixed cost, and one under
                          # MIN_WORDS does not count in the pace
PROBE_WORDS = (16, 48)     # the probe sentences of `Engine._analysis_pace`, each run twice


class Engine:
    def __init__(self, cfg: WorkerConfig, name: str | None = None) -> None:
        self.cfg = cfg
        self.name = name or f"{socket.gethostname()}:{os.getpid()}"
        self.pipes: dict[str, Pipeline] = {}      # by the name in pipeline.json
        self.sources: dict[str, str] = {}         # that name -> how the config named it
        self.served = 0
        self.started = time.time()
        self.directories: list[str] = []
        self.warmer: Warmer | None = None
        self.on_warm: Callable[[], None] | None = None   # more decoders are warm
        self.paces: dict[tuple[str, str, str], dict[str, float]] = {}  # the last job's
        # seconds a word of look-ahead analysis by (model, tagger): the last job's with
        # any decoder, else a probe's (`_analysis_pace`)
        self.analysis: dict[tuple[str, str], float] = {}

    # ---- start ---------------------------------------------------------------
    def load(self) -> None:
        dirs = [Path(d) for d in self.cfg.model_dirs]
        names = expand(self.cfg.models, dirs)
        # two directories of one model name are refused (naming both), not shadowed
        self.directories = [str(d) for d in directories(names, dirs)]
        if self.cfg.warm_up:      # on a cold numba cache a helper compiles meanwhile
            self.warmer = Warmer(self.directories, self._warm_changed)
            self.warmer.begin()
        for name, pipe in zip(names, load_pipelines(self.directories)):
            self.pipes[pipe.name] = pipe
            self.sources.setdefault(pipe.name, name)

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernels of the front-end and of one
        decoder now; the other decoders' too when the cache has them, else in the
        background (`worker/warm.py`; `warm_decoders` says which are warm)."""
        if self.warmer is None:
            self.warmer = Warmer(self.directories, self._warm_changed)
        self.warmer.start(list(self.pipes.values()))
        # the analysers' pace, for a first job that starts past its deadline: measured
        # here, off any job's time (a job's own probe took 0.4 s on a slow machine)
        for name, pipe in self.pipes.items():
            for tagger in pipe.taggers[1:]:          # those that analyse (not `fast`)
                try:
                    self._analysis_pace(pipe, name, tagger, {})
                except Exception as exc:              # a probe never stops a worker
                    logger.warning("no pace probe of %s's %s tagger: %s", name, tagger, exc)

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Wait until every decoder is warm (see warm_up); whether they all are."""
        return self.warmer is not None and self.warmer.wait(timeout)

    def _warm_changed(self) -> None:
        if self.on_warm is not None:
            self.on_warm()

    def warm_decoders(self) -> dict[str, list[str]]:
        """Model -> its decoders whose kernels are loaded (a job for another one waits
        while they compile)."""
        if self.warmer is None:
            return {key: [] for key in self.pipes}
        return {key: self.warmer.warm_decoders(pipe) for key, pipe in self.pipes.items()}

    def compiling(self) -> dict[str, list[str]]:
        """Model -> its decoders the warm-up helper is still compiling: the local
        gateway sends their jobs to no worker meanwhile (`app.dispatch.local`)."""
        if self.warmer is None:
            return {}
        return {key: self.warmer.compiling(pipe) for key, pipe in self.pipes.items()}

    def close(self) -> None:
        if self.warmer is not None:
            self.warmer.stop()

    def catalogue(self) -> dict[str, dict[str, Any]]:
        out = {}
        for key, pipe in self.pipes.items():
            comps = (["tokenizer"] if pipe.tokenizer else []) + (
                ["tagger", "lemmatizer"] if pipe.tagger else []) + ["parser"]
            out[key] = {"name": pipe.name, "source": self.sources.get(key, key),
                        "version": pipe.version, "language": pipe.language,
                        "labels": pipe.labels, "decoders": pipe.decoders(), "components": comps,
                        "taggers": pipe.taggers,
                        # neural analysers averaged (0: none; see the budget field
                        # `analysers` where there are several)
                        "analysers": pipe.analysers,
                        # what `neural` unset means with the accurate tagger (None: no
                        # neural analyser)
                        "arc_weight": pipe.arc_weight,
                        # the pretrained encoder the `contextual` tagger reads (None: none)
                        "encoder": pipe.encoder,
                        # the graph model's order, tensor rank (0: none), global features
                        "graph": pipe.graph_parts,
                        # taggers the model has that this install cannot run, and why
                        "unavailable": pipe.unavailable}
        return out

    def info(self) -> dict[str, Any]:
        return {"id": self.name, "pid": os.getpid(), "served": self.served,
                "rss_bytes": rss_bytes()}

    def should_recycle(self) -> str | None:
        if self.cfg.max_requests and self.served >= self.cfg.max_requests:
            return "requests"
        if self.cfg.max_rss_mb and rss_bytes() > self.cfg.max_rss_mb * 2**20:
            return "rss"
        return None

    # ---- jobs ----------------------------------------------------------------
    def run(self, job: dict, cancelled: Callable[[], bool] | None = None) -> dict[str, Any]:
        """A reply dict for `job`; never raises (whatever `job` is). `cancelled`, asked
        between sentences, says whether the job's client has gone."""
        if not isinstance(job, dict):
            logger.error("a job that is not an object: %.200r", job)
            return {"id": None, "ok": False, "worker": self.info(), "error": error_payload(
                JobError("invalid_input", f"a job is an object, not {type(job).__name__}"))}
        REQUEST_ID.set(str(job.get("rid", "-"))[:64])
        try:
            results = self._run(job, cancelled)
            # the version that made the trees, whatever the job was planned for: the
            # gateway caches them under it (during a reload the two can differ)
            reply = {"id": job.get("id"), "ok": True, "results": results,
                     "version": self.pipes[job["model"]].version}
        except Exception as exc:  # every failure becomes a reply
            error = error_payload(exc)
            if error["kind"] == "internal":
                logger.exception("job %s failed", job.get("id"))
            else:
                logger.info("job %s refused: %s", job.get("id"), exc)
            reply = {"id": job.get("id"), "ok": False, "error": error}
        self.served += 1
        reply["worker"] = self.info()
        return reply

    def _run(self, job: dict, cancelled: Callable[[], bool] | None = None
             ) -> list[list[dict]]:
        from models.serve.pipeline import FAST  # loaded by load()

        for key, kind in JOB_FIELDS.items():
            if not isinstance(job.get(key), kind):
                raise JobError("invalid_input", f"the job's {key!r} is not a"
                               f" {kind.__name__}: {job.get(key)!r:.100}")
        expires = job.get("expires_at")
        if expires is not None and time.time() > expires:
            raise JobError("expired", "the gateway stopped waiting for this job")
        pipe = self.pipes.get(job["model"])
        if pipe is None:
            raise JobError("unknown_model", f"this worker does not serve model {job['model']!r}",
                           value=sorted(self.pipes))
        limits = job.get("limits", {})
        max_tokens = int(limits.get("max_tokens_per_sentence", 10**9))
        max_sents = int(limits.get("max_sentences", 10**9))
        prepared = [prepare_item(pipe, item, max_tokens, max_sents) for item in job["items"]]
        n = sum(len(p) for p in prepared)
        if n > max_sents:
            raise LimitError("too_many_sentences",
                             f"the text splits into {n} sentences, more than"
                             f" max_sentences={max_sents}", limit="max_sentences",
                             value=max_sents, got=n)
        decoder = job["decoder"]
        if self.warmer is not None and decoder in pipe.decoders():
            # waits while the helper compiles it, for as long as someone waits for the job
            while not self.warmer.wait_unit(decoder, WAIT_SLICE_S):
                self._check(job, cancelled, f"{decoder} was still compiling")
        tagger = job.get("tagger") or FAST
        # the job's budget, checked once: here, or by the gateway (`checked`), whose
        # check the worker takes as it is; everything below takes this Budget
        budget = pipe.budget(decoder, job.get("budget"), tagger, bool(job.get("checked")))
        # `pace` says when the job cannot end before nobody waits (issue 61); until it
        # has measured itself, by the last job's pace with this decoder and tagger
        key = (job["model"], decoder, tagger)
        prior = dict(self.paces.get(key) or {})
        if "analyse" not in prior and self._late(job):
            prior["analyse"] = self._analysis_pace(pipe, job["model"], tagger, budget)
        pace = Pace(job.get("deadline_at"), job.get("expires_at"), prior=prior)
        try:
            return self._parse(pipe, job, prepared, pace, cancelled, tagger, budget)
        finally:
            self.paces[key] = rates = pace.rates()
            if "analyse" in rates:
                self.analysis[job["model"], tagger] = rates["analyse"]

    @staticmethod
    def _late(job: dict) -> bool:
        return job.get("deadline_at") is not None and time.time() >= job["deadline_at"]

    def _analysis_pace(self, pipe: Pipeline, model: str, tagger: str, budget: Budget
                       ) -> float:
        """Seconds a unit (`Pipeline.ahead_costs`: a word, or a piece of the contextual
        encoder) of `tagger`'s look-ahead analysis: the last job's (any decoder), else
        measured on two probe sentences of ordinary words, as the time the longer takes
        beyond the shorter (the fixed cost of a batch left out). A job that starts past
        its deadline goes by it until it has measured itself, so that it stops before
        its first step when it cannot end: the contextual tagger's first step, a
        250-word sentence, took 1.8 s, and a 1 ms deadline's workers were busy 3 s. Per
        piece, a word of many pieces is judged by what it costs: per word, such words
        (3 to 5 times an ordinary one) went by the ordinary words' pace, and one job
        kept the workers 2.1 s past a 1 ms deadline on a slow VM (2026-12-02)."""
        if (model, tagger) in self.analysis:
            return self.analysis[model, tagger]
        from models.serve.warmup import WORDS

        best: dict[int, tuple[float, int]] = {}     # words -> (seconds, units)
        for n in (4, *PROBE_WORDS * 2):        # the first: whatever a first call costs
            words = [f"Probe{n}x{time.time_ns()}"] + [WORDS[i % len(WORDS)]
                                                      for i in range(n - 1)]
            (units,) = pipe.ahead_costs([words], tagger, budget)
            t0 = time.perf_counter()
            pipe.analyze_ahead([words], tagger, budget)
            best[n] = min(best.get(n, (math.inf, 0)), (time.perf_counter() - t0, units))
        (short_s, short_u), (long_s, long_u) = (best[n] for n in PROBE_WORDS)
        rate = (long_s - short_s) / max(1, long_u - short_u)
        if rate > 0:                  # else too noisy to tell: the next late job probes
            self.analysis[model, tagger] = rate
        return max(rate, 0.0)

    def _parse(self, pipe: Pipeline, job: dict, prepared: list[list[tuple]], pace: Pace,
               cancelled: Callable[[], bool] | None, tagger: str, budget: Budget
               ) -> list[list[dict]]:
        """The trees of a job's prepared sentences (see `_run`)."""
        from models.serve.parse_policy import ahead_windows

        decoder, deadline_at = job["decoder"], job.get("deadline_at")
        fields = pipe.decoders().get(decoder, {}).get("fields", ())
        flat = [s for sents in prepared for s in sents]
        n = len(flat)
        # the analyser runs ahead window by window, each in chunks, so that a job can
        # stop between chunks
        ahead = {a: flat[a:b] for a, b in ahead_windows([len(f) for f, _, _ in flat])}
        tokens_left = sum(len(forms) for forms, _, _ in flat)
        untagged = [f for f, t, _ in flat if t is None]
        state = {"analyse": sum(pipe.ahead_costs(untagged, tagger, budget)), "parse": tokens_left}
        done = 0
        out = []
        for item, sents in zip(job["items"], prepared):
            text = item.get("text", "")
            trees = []
            for forms, tags, words in sents:
                where = f"stopped after {done} of {n} sentences"
                self._check(job, cancelled, where, pace, state)
                if done in ahead:
                    rest = self._analyze_window(pipe, ahead.pop(done), tagger, budget, job,
                                                cancelled, where, pace, state)
                    if rest:                 # analysed before the next sentence's parse
                        ahead[done + 1] = rest + ahead.get(done + 1, [])
                if deadline_at is not None and DEADLINE.name in fields:
                    share = (deadline_at - time.time()) * len(forms) / tokens_left
                    budget = budget.replace({DEADLINE.name: max(1.0, share * 1000.0)})
                tokens_left -= len(forms)
                started, t0 = time.time(), time.perf_counter()
                if words is not None:
                    tree = pipe.parse_tokens(words, text, decoder, budget, tagger=tagger)
                elif tags is None:
                    tree = pipe.parse_words(forms, decoder, budget, tagger=tagger)
                else:
                    tree = pipe.parse_words(forms, decoder, budget, upos=tags[0], xpos=tags[1],
                                            lemmas=tags[2])
                pace.parsed(len(forms), started, time.perf_counter() - t0)
                state["parse"] -= len(forms)
                trees.append(tree_dict(tree))
                done += 1
            out.append(trees)
        return out

    def _analyze_window(self, pipe: Pipeline, window: list[tuple], tagger: str,
                        budget: Budget, job: dict, cancelled: Callable[[], bool] | None,
                        where: str, pace: Pace, state: dict[str, int]) -> list[tuple]:
        """Analyse the untagged sentences of one look-ahead window chunk by chunk
        (`ahead_chunks`), checking between chunks that someone still waits and that the
        job can still end in time; the prepared sentences left for later. A late job
        that has not yet timed a parse analyses one chunk and leaves the rest until its
        next sentence: its first parse tells it whether it can end at all
        (`Pace.blind_to_parses`). A chunk holds the units (words, or the encoder's
        pieces: `Pipeline.ahead_costs`) that take about STEP_S at the pace known
        (`AHEAD_CHUNK_TOKENS` at most, and at least one sentence): the
        contextual tagger's 256 words of many subwords each took 1.7 s, a step the
        job could not stop in. It holds at least MIN_CHUNK_WORDS: sized by a pace
        measured on small steps (mostly fixed cost), chunks shrank to one sentence
        each, and their pace looked slower still."""
        from models.serve.parse_policy import AHEAD_CHUNK_TOKENS, ahead_chunks

        todo = [s for s in window if s[1] is None]
        costs = pipe.ahead_costs([s[0] for s in todo], tagger, budget)
        # units a word here (1, or the encoder's pieces a word): with a pace to go by,
        # a chunk may hold AHEAD_CHUNK_TOKENS words; without one, that many units
        per_word = max(1.0, sum(costs) / max(1, sum(len(s[0]) for s in todo)))
        a = 0
        while a < len(todo):
            self._check(job, cancelled, where, pace, state)
            if a and pace.blind_to_parses():
                return todo[a:]
            rate = pace.rates().get("analyse")
            tokens = AHEAD_CHUNK_TOKENS if not rate else max(
                MIN_CHUNK_WORDS, min(int(AHEAD_CHUNK_TOKENS * per_word), int(STEP_S / rate)))
            _, b = ahead_chunks(costs[a:], tokens)[0]
            b += a
            units = sum(costs[a:b])
            t0 = time.perf_counter()
            pipe.analyze_ahead([s[0] for s in todo[a:b]], tagger, budget)
            pace.analysed(units, time.perf_counter() - t0)
            state["analyse"] -= units
            a = b
        return []

    @staticmethod
    def _check(job: dict, cancelled: Callable[[], bool] | None, where: str,
               pace: Pace | None = None, left: dict[str, int] | None = None) -> None:
        """JobError when nobody waits for `job` any more: its client has gone
        (`cancelled`) or its `expires_at` has passed, or will have before the job can
        end (`pace`, with the words `left` to analyse and parse); `where` says how far
        it got."""
        if cancelled is not None and cancelled():
            raise JobError("client_closed", f"the client left; {where}")
        expires = job.get("expires_at")
        if expires is not None and time.time() > expires:
            raise JobError("expired", f"the gateway stopped waiting for this job; {where}"
                           + (f" ({pace.summary()})" if pace is not None else ""))
        if pace is not None and left is not None and pace.doomed(left["analyse"], left["parse"]):
            raise JobError("expired", f"the job cannot end before the gateway stops waiting"
                           f" for it, at the pace it has gone so far; {where}"
                           f" ({pace.summary()})")
