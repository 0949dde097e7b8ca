"""Warm a worker's models so that it is ready in seconds even when numba must compile.

With a warm numba cache every unit (`models.serve.warmup`: the front-end, then each decoder)
loads from disk in about a second, and the worker warms them all before it reports
ready. On a cold cache (a fresh install, an upgrade, an edit of kernel sources)
compiling them all takes a minute or more of CPU (bench/RESULTS.md, "Cold start"), so:
- a helper process (`python -m worker.warm`) starts at once, before the worker loads its
  models, and warms every unit in `HELPER_ORDER` (the front-end, then `FIRST`);
- the worker warms the front-end and the first of `FIRST` its models have (greedy, the
  README's and the service's default decoder), and is ready; the helper compiles those
  first, and the `models.serve.warmup` locks keep two processes from compiling the same unit:
  the worker waits for the helper, then loads them from the cache, so on a busy machine
  the one compile on the way to the first request gets all the CPU there is (issue 61:
  with the worker compiling `selectional` beside the helper, the README's first curl,
  greedy, waited 90 s on a machine with two busy loops);
- as the helper reports each unit done, the worker loads it from the cache and calls
  `on_change` (the worker then tells the gateway which decoders are warm, and which are
  still `compiling`: the local gateway sends jobs for those to no worker meanwhile, so
  that a job for a warm decoder never queues behind one waiting for a compile);
- a job that reaches a worker for a decoder not warm yet (the Redis backend's, or one
  that came in as the helper finished) waits for the helper (`wait_unit`) while the
  helper runs, within the job's own time (`worker.engine`); the worker compiles a unit
  itself only once the helper has gone (it failed, or there was none), so no compile
  runs on behalf of a job whose client has gone (issue 61).
The helper is a subprocess, not a multiprocessing child: local workers are daemonic
processes, which may not have children of their own. It exits when its units are done,
or when the worker is gone (its report pipe breaks).
"""
from __future__ import annotations

import argparse
import hashlib
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from models.serve.warmup import FRONTEND, load_pipelines, stamp, stamped, units, warm

if TYPE_CHECKING:
    from models.serve.pipeline import Pipeline

logger = logging.getLogger(__name__)

FIRST = ("greedy", "selectional", "mst")   # the worker warms the first its models have
HELPER_ORDER = (FRONTEND, *FIRST, "sampling", "bgi")   # then any other unit


def _ordered(names: Sequence[str], priority: Sequence[str]) -> list[str]:
    return sorted(names, key=lambda u: priority.index(u) if u in priority else len(priority))


class Warmer:
    """Which units of a worker's pipelines are warm, and the work to warm the rest.
    `begin()` before the pipelines are loaded, `start(pipes)` after."""

    def __init__(self, directories: Sequence[str],
                 on_change: Callable[[], None] | None = None) -> None:
        self.directories = [str(d) for d in directories]
        self.on_change = on_change
        self.pipes: list[Pipeline] = []
        self.units: list[str] = []
        self.warm: set[str] = set()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._changed = threading.Condition()      # notified as units become warm
        self._helper: subprocess.Popen | None = None
        self._follower: threading.Thread | None = None
        # stamped once every unit of these models was warm in one worker
        key = hashlib.sha256("\0".join(sorted(self.directories)).encode()).hexdigest()[:12]
        self._all = f"models-{key}"

    def begin(self) -> None:
        """Start the helper unless these models were all warm before (their stamp)."""
        if stamped(self._all):
            return
        cmd = [sys.executable, "-m", "worker.warm",
               "--log-level", str(logging.getLogger().getEffectiveLevel()), *self.directories]
        try:
            self._helper = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                            stdin=subprocess.DEVNULL, text=True)
        except OSError as exc:
            logger.warning("cannot start the warm-up helper (%s): warming in the worker", exc)
            return
        logger.info("numba's cache may be cold (a fresh install, an upgrade or edited "
                    "kernel sources): a helper process (pid %d) warms the decoders while "
                    "this worker warms its first one", self._helper.pid)

    def start(self, pipes: Sequence[Pipeline]) -> None:
        """Warm the front-end and the first decoder now (everything, without a helper);
        then load what the helper reports, in a thread."""
        self.pipes = list(pipes)
        for pipe in self.pipes:
            self.units += [u for u in units(pipe) if u not in self.units]
        first = [u for u in FIRST if u in self.units][:1]
        for unit in [u for u in (FRONTEND,) if u in self.units] + first:
            self.ensure(unit)      # the front-end first: a decoder's unit parses with it
        if self._helper is None:
            for unit in self.units:
                self.ensure(unit)
            stamp(self._all)
            return
        self._follower = threading.Thread(target=self._follow_and_tell, name="warm-follower",
                                          daemon=True)
        self._follower.start()

    def ensure(self, unit: str) -> None:
        """Make `unit` warm in this process (idempotent, thread-safe; nothing before
        `start`)."""
        if unit in self.warm or not self.pipes:
            return
        with self._guard:
            lock = self._locks.setdefault(unit, threading.Lock())
        with lock:
            if unit not in self.warm:
                warm(self.pipes, unit)
                with self._changed:
                    self.warm.add(unit)
                    self._changed.notify_all()

    def following(self) -> bool:
        """Whether the helper is still warming units for this worker (then a unit not
        warm yet is on its way: wait for it rather than compile it here)."""
        return self._follower is not None and self._follower.is_alive()

    def wait_unit(self, unit: str, timeout: float) -> bool:
        """Whether `unit` is warm here, waiting up to `timeout` s while the helper runs;
        once it has gone, a unit still cold is compiled here (`ensure`) at once."""
        if unit in self.warm or unit not in self.units:
            return True
        if self.following():
            with self._changed:
                self._changed.wait_for(lambda: unit in self.warm or not self.following(),
                                       timeout)
            if unit in self.warm or self.following():
                return unit in self.warm
        self.ensure(unit)
        return True

    def warm_decoders(self, pipe: Pipeline) -> list[str]:
        return [d for d in pipe.decoders() if d in self.warm]

    def compiling(self, pipe: Pipeline) -> list[str]:
        """`pipe`'s decoders the helper has still to warm (none once it has gone)."""
        if not self.following():
            return []
        return [d for d in pipe.decoders() if d not in self.warm]

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every unit is warm here; whether it is."""
        if self._follower is not None:
            self._follower.join(timeout)
        return all(u in self.warm for u in self.units)

    def stop(self) -> None:
        """Stop the helper, if it still runs."""
        if self._helper is not None and self._helper.poll() is None:
            self._helper.terminate()

    def _follow(self) -> None:
        """Load each unit the helper reports; at its end, any it did not (it failed)."""
        helper = self._helper
        for line in helper.stdout:
            self._ensure_and_tell(line.strip())
        code = helper.wait()
        if code:
            logger.warning("the warm-up helper exited with %s; warming the rest here", code)
        for unit in self.units:
            self._ensure_and_tell(unit)
        if all(u in self.warm for u in self.units):
            stamp(self._all)
            logger.info("every decoder is warm")

    def _follow_and_tell(self) -> None:
        """`_follow`, then wake whoever waits and tell the gateway that nothing is
        compiling any more (also after a failure: jobs then say why)."""
        try:
            self._follow()
        finally:
            threading.Thread(target=self._tell_when_gone, name="warm-done", daemon=True).start()

    def _tell_when_gone(self) -> None:
        self._follower.join()         # then following() is False
        with self._changed:
            self._changed.notify_all()
        if self.on_change is not None:
            self.on_change()

    def _ensure_and_tell(self, unit: str) -> None:
        if unit in self.warm or unit not in self.units:
            return
        try:
            self.ensure(unit)
        except Exception:  # a decoder that cannot run: its jobs will say why
            logger.exception("cannot warm %s", unit)
            return
        if self.on_change is not None:
            self.on_change()


def main(argv: list[str] | None = None) -> int:
    """The helper process: warm every unit of the models in HELPER_ORDER, printing each
    name when it is done."""
    from .logsafe import configure_logging

    p = argparse.ArgumentParser(prog="python -m worker.warm", description=__doc__.splitlines()[0])
    p.add_argument("--log-level", type=int, default=logging.INFO)
    p.add_argument("directories", nargs="+", help="model directories")
    args = p.parse_args(argv)
    configure_logging(args.log_level)
    parent = os.getppid()
    pipes = load_pipelines(args.directories)
    todo: list[str] = []
    for pipe in pipes:
        todo += [u for u in units(pipe) if u not in todo]
    for unit in _ordered(todo, HELPER_ORDER):
        if os.getppid() != parent:
            return 0                    # the worker is gone
        warm(pipes, unit)
        try:
            sys.stdout.write(unit + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
