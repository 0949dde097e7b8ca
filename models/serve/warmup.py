"""Warm a pipeline's numba kernels one unit at a time: the front-end, then each decoder.

A unit is warm in a process once the kernels it runs are compiled there: loaded from
numba's on-disk cache, or compiled and written to it. `warm` runs one short sentence
through the unit. Processes that start together (a gateway's workers and their helper
processes, `worker/warm.py`) warm each unit under a file lock named for it: the first
compiles it, the others wait, then load it from the cache instead of compiling it side
by side. `load_pipelines` does the same for what compiles when the pipeline is imported
and loaded (the graph kernels with explicit signatures, `graph/features.py`; the
transition parser's weight compaction).

A unit warmed here is stamped with the kernel-source digest (`kernel_cache`), numba's
version and the CPU (`stamped`), so that a later start can tell without compiling
whether anything is left to compile. Stamps are hints: a stale one only means that a
unit compiles where it is warmed, which `compile_log` reports.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib.metadata
import logging
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .. import compile_log
from ..kernel_cache import source_digest

if TYPE_CHECKING:
    from .pipeline import Pipeline

logger = logging.getLogger(__name__)

FRONTEND = "frontend"   # tokenizer and fast tagger (the accurate tagger is numpy)
LOAD = "load"           # importing and loading pipelines
WORDS = ("The", "quick", "brown", "fox", "jumped", "over", "the", "lazy", "dog", ".")
ROOT = Path(__file__).resolve().parents[1]   # models/: the kernel sources
WARM_TAGGERS = ("fast", "accurate")   # the taggers whose parses a decoder's unit warms


def units(pipe: Pipeline) -> list[str]:
    """A pipeline's units in registry order: the front-end (if any), then its decoders."""
    front = [FRONTEND] if pipe.tokenizer is not None or pipe.tagger is not None else []
    return front + list(pipe.decoders())


def warm_unit(pipe: Pipeline, unit: str) -> None:
    """Run one short sentence through `unit` of `pipe` (compiling what it needs).

    Decoders parse tagged words, then (where the model tags) untagged words with the
    fast and the accurate tagger: the accurate tagger's parse takes the analyser's
    relations mixed with the graph labeler's, and some decoders re-tag with the parser
    (`tag_flips`), so a decoder is warm only once those paths are compiled too (issue
    61: a `selectional` request, warm by /ready, compiled the labeler's kernels
    itself). The front-end's kernels are the FRONTEND unit's: warm it first."""
    words = list(WORDS)
    if unit == FRONTEND:
        if pipe.tokenizer is not None:
            pipe.tokenize(" ".join(words))
        if pipe.tagger is not None:
            pipe.tag(words)
        return
    pipe.parse_words(words, unit, {}, upos=["X"] * len(words), xpos=["X"] * len(words),
                     lemmas=words)
    for tagger in WARM_TAGGERS:
        if tagger in pipe.taggers:
            pipe.parse_words(words, unit, {}, tagger=tagger)


def warm(pipes: Iterable[Pipeline], unit: str) -> None:
    """Warm `unit` of every pipeline that has it, under the unit's lock; stamp it."""
    pipes = [p for p in pipes if unit in units(p)]
    if not pipes:
        return
    with unit_lock(unit):
        n0, s0 = compile_log.totals()
        t0 = time.perf_counter()
        for pipe in pipes:
            warm_unit(pipe, unit)
        n, s = compile_log.totals()
        stamp(unit)
    if n > n0:
        logger.info("%s warm in %.1f s (%d kernels compiled in %.1f s)", unit,
                    time.perf_counter() - t0, n - n0, s - s0)
    else:
        logger.debug("%s warm in %.2f s (from the cache)", unit, time.perf_counter() - t0)


def load_pipelines(directories: Iterable[str | Path]) -> list[Pipeline]:
    """Pipeline.load of each directory, under the LOAD lock: the kernels that compile
    on import and on load compile once across processes starting together."""
    with unit_lock(LOAD):
        from .pipeline import Pipeline

        return [Pipeline.load(d) for d in directories]


# ---- locks and stamps --------------------------------------------------------------
def state_dir() -> Path:
    """Where the locks and stamps live: beside the numba cache of this package
    (NUMBA_CACHE_DIR when set), else in the temporary directory."""
    own = os.environ.get("NUMBA_CACHE_DIR")
    for d in ([Path(own)] if own else []) + [ROOT / "__pycache__",
                                               Path(tempfile.gettempdir()) / "deptree-warm"]:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(d, os.W_OK):
            return d
    return Path(tempfile.gettempdir())


@contextlib.contextmanager
def unit_lock(unit: str) -> Iterator[None]:
    """An exclusive lock on `unit` across processes (none where no file can be made)."""
    try:
        fh = open(state_dir() / f"deptree-warm-{unit}.lock", "a+")
    except OSError as exc:
        logger.debug("no warm-up lock for %s: %s", unit, exc)
        yield
        return
    with fh:
        t0 = time.monotonic()
        fcntl.flock(fh, fcntl.LOCK_EX)
        if time.monotonic() - t0 > 1.0:
            logger.debug("waited %.1f s for another process warming %s", time.monotonic() - t0,
                         unit)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@functools.lru_cache(maxsize=1)
def _stamp_text() -> str:
    import llvmlite.binding as llvm

    return (f"{source_digest(ROOT)} numba {importlib.metadata.version('numba')} python "
            f"{sys.version_info[:2]} {platform.machine()} {llvm.get_host_cpu_name()}\n")


def stamp(unit: str) -> None:
    """Record that `unit` is in the cache for these sources, numba and CPU."""
    try:
        (state_dir() / f"deptree-warm-{unit}.stamp").write_text(_stamp_text())
    except OSError as exc:
        logger.debug("cannot stamp %s: %s", unit, exc)


def stamped(unit: str) -> bool:
    """Whether `unit` was warmed here for the current sources, numba and CPU."""
    try:
        return (state_dir() / f"deptree-warm-{unit}.stamp").read_text() == _stamp_text()
    except OSError:
        return False
