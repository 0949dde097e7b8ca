"""What the gateway does with a parse request: validate, look up the cache, dispatch.

The gateway never parses. `ParseService.plan` checks the request against the
limits and against what the workers reported about their models (decoders and
their budget fields, taggers), and builds the effective budget (decoder defaults <
settings < request), chooses the tagger (request, else `default_tagger`) and one
cache key per sentence (the tagger is in every key, so "fast" and "accurate"
answers are never shared). `run` answers what it can from the cache, sends the
rest to workers in jobs of at most `chunk_sentences` sentences (so several workers
share one large request), stores what came back (unless its deadline hit: such a
tree is not the seeded result) and records the workers' measurements in the
metrics. Both /parse and /process go through here.

A job names the model version it was planned for (the catalogue's, which is whatever
worker reported last); the worker answers with the version it holds, and fresh trees
are cached under that one: while workers of two versions serve (a reload, a rolling
upgrade) an old model's tree is never stored as the new model's.
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from models.decoders import DEADLINE, BudgetError, DecoderSpec, find
from worker.logsafe import REQUEST_ID

from . import metrics
from .cache import NullCache, cache_key
from .core.config import Settings
from .dispatch.base import Dispatcher
from .errors import ServiceError, from_reply_error, limit_error

logger = logging.getLogger(__name__)

AUTO = "auto"       # the tagger setting that means: the most accurate the model has

# How long past a request's deadline the gateway waits for its trees before answering
# 504 `deadline_exceeded` (issue 20: a client waits at most its deadline plus one
# second; the rest of that second is for the answer's way back). Jobs that come late
# decode each sentence with the least effort; past it, the worker stops the job.
DEADLINE_GRACE_S = 0.8

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CONTROL_TOKEN = re.compile("[\x00-\x1f\x7f-\x9f]")
# U+2028 and U+2029 are spaces in text but line breaks to str.splitlines: a token is
# written into a CoNLL-U FORM column, whose line they would split
_LINE_SEPARATOR = re.compile("[\u2028\u2029]")
# Whitespace and the Default_Ignorable_Code_Point characters of Unicode
# (DerivedCoreProperties.txt: zero-width spaces and joiners, bidi controls, BOM, word
# joiner, soft hyphen, variation selectors, tags): a string of these alone shows nothing
_INVISIBLE = re.compile("[\\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
                        "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff"
                        "\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                        "\U000e0000-\U000e0fff]*")


def check_text(s: str, where: str, token: bool = False) -> None:
    """Refuse empty or invisible-only strings, lone surrogates and control characters
    (422)."""
    if _INVISIBLE.fullmatch(s):
        raise ServiceError("empty_token" if token else "empty_sentence", f"{where} is empty"
                           + (" (only invisible characters)" if s.strip() else ""))
    m = _SURROGATE.search(s)
    if m:
        raise ServiceError("invalid_unicode", f"{where} holds a lone surrogate"
                           f" U+{ord(m.group()):04X} at character {m.start()}")
    m = (_CONTROL_TOKEN if token else _CONTROL_TEXT).search(s)
    if m:
        raise ServiceError("control_character", f"{where} holds the control character"
                           f" U+{ord(m.group()):04X} at character {m.start()}")
    m = _LINE_SEPARATOR.search(s) if token else None
    if m:
        raise ServiceError("line_separator", f"{where} holds the line separator"
                           f" U+{ord(m.group()):04X} at character {m.start()}")


@dataclass
class Item:
    """One input unit: a sentence (raw, tokens or tagged) or a document."""

    kind: str
    payload: dict[str, Any]
    text: str | None = None
    key: str = ""


@dataclass
class Plan:
    model: str
    info: dict[str, Any]
    decoder: str
    budget: dict[str, Any]
    items: list[Item]
    deadline_at: float | None = None
    tagger: str | None = None          # None: the model has no tagger
    deadline_limit: tuple[str, float] | None = None   # what set deadline_at: (name, ms)
    results: list[tuple[list[dict], bool]] = field(default_factory=list)
    versions: set[str] = field(default_factory=set)    # of the models that made the trees

    @property
    def version(self) -> str:
        """The model version that made the answer's trees (the catalogue's when none was
        made, e.g. no tree yet); two, comma-separated, while two versions serve."""
        return ", ".join(sorted(self.versions)) or self.info["version"]

    def key_for(self, item: Item, version: str) -> str:
        """The cache key of `item` had it been planned for model `version`."""
        if version == self.info["version"]:
            return item.key
        return cache_key(self.model, version, self.decoder, self.budget, item.kind,
                         item.payload, tagger=self.tagger)


def items_from_sentences(sentences: list[str | list[str]], s: Settings) -> list[Item]:
    if not sentences:
        raise ServiceError("empty_request", "the sentence list is empty")
    if len(sentences) > s.max_sentences:
        raise limit_error("too_many_sentences", "max_sentences", s.max_sentences,
                          len(sentences), f"a request of {len(sentences)} sentences")
    items, chars = [], 0
    for i, sent in enumerate(sentences):
        if isinstance(sent, str):
            chars += len(sent)
            check_text(sent, f"sentence {i}")
            items.append(Item("sentence", {"text": sent}, sent))
        else:
            if not sent:
                raise ServiceError("empty_sentence", f"sentence {i} has no tokens")
            if len(sent) > s.max_tokens_per_sentence:
                raise limit_error("too_many_tokens", "max_tokens_per_sentence",
                                  s.max_tokens_per_sentence, len(sent),
                                  f"sentence {i} of {len(sent)} tokens")
            for j, tok in enumerate(sent):
                chars += len(tok)
                check_text(tok, f"token {j} of sentence {i}", token=True)
            items.append(Item("tokens", {"forms": list(sent)}, " ".join(sent)))
        if chars > s.max_chars:
            raise limit_error("too_many_characters", "max_chars", s.max_chars, chars,
                              "the request's characters")
    return items


def item_from_text(text: str, s: Settings) -> Item:
    if len(text) > s.max_chars:
        raise limit_error("too_many_characters", "max_chars", s.max_chars, len(text),
                          "the text's characters")
    check_text(text, "text")
    return Item("document", {"text": text}, text)


def model_taggers(info: dict[str, Any]) -> list[str]:
    """The taggers a model offers (`Pipeline.taggers`); workers that predate the
    `taggers` entry of the catalogue offer the fast tagger when they have one."""
    if "taggers" in info:
        return list(info["taggers"])
    return ["fast"] if "tagger" in info.get("components", ()) else []


def default_model(s: Settings, cat: dict[str, dict[str, Any]]) -> str:
    """`default_model`, else the first configured model (a name or a directory)."""
    want = s.default_model or (s.models[0] if s.models else "en_ewt")
    if want == "*":                      # a whole directory: en_ewt if served, else the first
        want = "en_ewt" if "en_ewt" in cat else min(cat)
    if want in cat:
        return want
    return next((n for n, i in cat.items() if i.get("source") == want), want)


class ParseService:
    def __init__(self, settings: Settings, dispatcher: Dispatcher, cache: NullCache) -> None:
        self.settings = settings
        self.dispatcher = dispatcher
        self.cache = cache

    # ---- validation --------------------------------------------------------------
    def model_info(self, model: str | None) -> tuple[str, dict[str, Any]]:
        cat = self.dispatcher.catalogue()
        if not cat:
            err = self.dispatcher.status().get("error")
            if err:
                raise ServiceError("no_workers", f"no worker could load its models: {err}")
            raise ServiceError("not_ready", "no worker has loaded its models yet; retry shortly")
        name = model or default_model(self.settings, cat)
        if name not in cat:
            raise ServiceError("unknown_model", f"unknown model {name!r}; available: "
                               + ", ".join(sorted(cat)), value=sorted(cat))
        return name, cat[name]

    def choose_tagger(self, name: str, info: dict[str, Any], tagger: str | None) -> str | None:
        """The tagger a request gets: the one asked for, else `default_tagger`; None for
        a model without a tagger when none was asked for (its input must be tagged)."""
        taggers = model_taggers(info)
        if tagger is None:
            if not taggers:
                return None
            tagger = self.settings.default_tagger
        if tagger == AUTO and taggers:
            tagger = taggers[-1]                 # the most accurate one the model has
        if tagger not in taggers:
            has = ", ".join(taggers) if taggers else "no tagger (send tagged CoNLL-U)"
            why = (info.get("unavailable") or {}).get(tagger)
            raise ServiceError("unknown_tagger", f"model {name}'s {tagger} tagger is off on"
                               f" this server: {why}; it has: {has}" if why else
                               f"unknown tagger {tagger!r}; model {name} has: {has}",
                               value=taggers)
        return tagger

    def plan(self, model: str | None, decoder: str | None, requested: dict[str, Any],
             items: list[Item], tagger: str | None = None,
             arrived_at: float | None = None) -> Plan:
        """The plan of a request; its deadline counts from `arrived_at` (time.time() when
        the request's head came in, see RequestIdMiddleware), else from now."""
        s = self.settings
        start = time.time() if arrived_at is None else arrived_at
        name, info = self.model_info(model)
        tagger = self.choose_tagger(name, info, tagger)
        decoder = decoder or s.default_decoder
        decs = info["decoders"]
        try:
            spec = DecoderSpec.from_description(decoder, find(decoder, decs))
            caps = spec.caps(s.budget_caps)
            # The one check of the request's budget (None: unset), with the server's
            # caps: its job says so (`checked`) and the worker takes the budget as it
            # is. The deadline is left out of the cache key, so a cached tree would
            # answer a request a check refuses: every field is checked before the cache.
            asked = spec.validate({k: v for k, v in requested.items() if v is not None}, caps)
            # the server's own defaults (settings) of the fields the request leaves unset
            server = spec.validate({k: v for k, v in s.default_budget.get(decoder, {}).items()
                                    if k in spec.names and k not in asked})
        except BudgetError as exc:
            raise ServiceError(exc.code, exc.message, limit=exc.limit, value=exc.value,
                               got=exc.got) from None
        budget = {**spec.defaults(), **server, **asked}
        deadline_at, limit = None, None
        if budget.get(DEADLINE.name) is not None:
            deadline_at = start + budget[DEADLINE.name] / 1000.0
            limit = (DEADLINE.name, budget[DEADLINE.name])
        elif DEADLINE.name in caps:
            # No deadline asked for: the cap still bounds the request's decoding time
            # (a tree it cuts says deadline_hit and is not cached).
            deadline_at = start + caps[DEADLINE.name] / 1000.0
            limit = (f"budget_caps.{DEADLINE.name}", caps[DEADLINE.name])
        for it in items:
            it.key = cache_key(name, info["version"], decoder, budget, it.kind, it.payload,
                               tagger=tagger)
        return Plan(name, info, decoder, budget, items, deadline_at, tagger, limit)

    # ---- execution ---------------------------------------------------------------
    async def run(self, plan: Plan, gone: Awaitable[None] | None = None) -> Plan:
        """Answer `plan`; if `gone` (see `client_gone`) finishes first, the client has hung
        up: its jobs are withdrawn (a queued job is never decoded) and 499 is raised."""
        if gone is None:
            return await self._run(plan)
        work, watch = asyncio.ensure_future(self._run(plan)), asyncio.ensure_future(gone)
        try:
            await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
            if not work.done():
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
        if work.cancelled():
            logger.info("client closed the connection; its %d sentence(s) withdrawn",
                        len(plan.items))
            raise ServiceError("client_closed", "the client closed the connection before"
                               " the answer", status=499)
        return work.result()

    async def _run(self, plan: Plan) -> Plan:
        s = self.settings
        keys = list(dict.fromkeys(it.key for it in plan.items))
        hits = await self.cache.get_many(keys)
        backend = self.cache.backend
        metrics.CACHE_UP.set(1 if self.cache.up else 0)
        todo = [k for k in keys if k not in hits]
        if self.cache.backend != "none":
            metrics.CACHE_HITS.labels(backend).inc(len(keys) - len(todo))
            metrics.CACHE_MISSES.labels(backend).inc(len(todo))
        first = {}
        for it in plan.items:
            first.setdefault(it.key, it)
        fresh: dict[str, list[dict]] = {}
        made_by: dict[str, str] = {}       # key -> the model version that answered
        if todo:
            chunks = [todo[i:i + s.chunk_sentences] for i in range(0, len(todo),
                                                                     s.chunk_sentences)]
            replies = await self._all_or_none(
                [self._submit(plan, [first[k] for k in chunk]) for chunk in chunks])
            for chunk, (results, version) in zip(chunks, replies):
                for k, trees in zip(chunk, results):
                    fresh[k] = trees
                    made_by[k] = version
            store = {plan.key_for(first[k], made_by[k]): t for k, t in fresh.items()
                     if not any(tr["stats"].get("deadline_hit") for tr in t)}
            await self.cache.set_many(store)
            metrics.CACHE_UP.set(1 if self.cache.up else 0)
            for trees in fresh.values():
                for tree in trees:
                    metrics.observe_tree(plan.model, plan.decoder, tree)
        plan.results = [(fresh[it.key], False) if it.key in fresh else (hits[it.key], True)
                        for it in plan.items]
        plan.versions = set(made_by.values()) | (
            {plan.info["version"]} if len(fresh) < len(keys) else set())
        return plan

    @staticmethod
    async def _all_or_none(jobs: list[Awaitable]) -> list:
        """The replies of a request's jobs, in order; at the first that fails, the
        others are withdrawn (a queued job is never decoded, a running one stops at its
        next check) and its error raised. The answer is all the trees or none: a request
        of 256 sentences in 16 jobs went on dispatching and running them for 2 s after
        its first job knew that it could not end in time (issue 61, defect 1)."""
        tasks = [asyncio.ensure_future(j) for j in jobs]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for t in tasks:
                if t in done and t.exception() is not None:
                    raise t.exception()
            return [t.result() for t in tasks]
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _submit(self, plan: Plan, items: list[Item]) -> tuple[list[list[dict]], str]:
        """The trees of `items` and the model version that made them. The job is waited
        for until the request's deadline plus DEADLINE_GRACE_S (or request_timeout_s,
        whichever comes first); it carries that time as `expires_at`, past which the
        worker stops it between sentences."""
        s = self.settings
        now = time.time()
        wait = s.request_timeout_s
        if plan.deadline_at is not None:
            wait = min(wait, plan.deadline_at + DEADLINE_GRACE_S - now)
        job = {"id": uuid.uuid4().hex, "rid": REQUEST_ID.get(), "model": plan.model,
               "version": plan.info["version"], "decoder": plan.decoder, "tagger": plan.tagger,
               "budget": plan.budget, "checked": True, "deadline_at": plan.deadline_at,
               "expires_at": now + wait,
               "limits": {"max_tokens_per_sentence": s.max_tokens_per_sentence,
                          "max_sentences": s.max_sentences},
               "items": [{"kind": it.kind, **it.payload} for it in items]}
        try:
            if wait <= 0:
                raise ServiceError("timeout", "the deadline passed before the job was sent")
            reply = await self.dispatcher.submit(job, wait)
            if not reply.get("ok"):
                raise from_reply_error(reply.get("error", {}))
        except ServiceError as exc:
            # the worker saw `expires_at` pass a moment before the gateway's own wait
            # ran out: the same event, so the same answer
            if exc.code in ("timeout", "expired") and wait < s.request_timeout_s:
                raise self._deadline_exceeded(plan) from None
            raise
        # workers that predate versioned replies answer without one: the planned version
        return reply["results"], str(reply.get("version") or plan.info["version"])


    def _deadline_exceeded(self, plan: Plan) -> ServiceError:
        """504: the trees were not done by the deadline (the request's, else the cap)."""
        limit, ms = plan.deadline_limit
        return ServiceError("deadline_exceeded", f"the trees were not done {DEADLINE_GRACE_S:g}"
                            f" s after the deadline ({limit}={ms:g}); send fewer or shorter"
                            " sentences, or allow more time", limit=limit, value=ms)


async def client_gone(receive: Callable[[], Awaitable[dict]]) -> None:
    """Return once the client has hung up: ASGI `receive` after the body was read only
    answers `http.disconnect` (when the connection is lost or the answer was sent)."""
    while (await receive())["type"] != "http.disconnect":
        await asyncio.sleep(0.05)          # a server that answers at once: poll gently


def sentence_results(plan: Plan) -> list[dict[str, Any]]:
    """The response's `sentences`: every tree with `cached` and its text."""
    out = []
    for it, (trees, cached) in zip(plan.items, plan.results):
        for tree in trees:
            text = it.text
            if it.kind == "document":
                toks = tree["tokens"]
                text = it.text[toks[0]["start"]:toks[-1]["end"]] if toks else ""
            out.append({**tree, "cached": cached, "text": text})
    return out
