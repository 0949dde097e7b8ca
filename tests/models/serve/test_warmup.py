"""Warm-up units: stamps that only hold for the sources they were made with, and locks
that let one process at a time warm a unit (issue 19)."""
from __future__ import annotations

import threading
import time

import pytest

import models.serve.warmup as warmup


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    warmup._stamp_text.cache_clear()
    yield tmp_path
    warmup._stamp_text.cache_clear()


def test_a_stamp_holds_until_a_kernel_source_changes(state, monkeypatch):
    assert not warmup.stamped("greedy")
    warmup.stamp("greedy")
    assert warmup.stamped("greedy") and not warmup.stamped("bgi")
    assert (state / "deptree-warm-greedy.stamp").exists()
    monkeypatch.setattr(warmup, "source_digest", lambda root: "an edited source")
    warmup._stamp_text.cache_clear()
    assert not warmup.stamped("greedy")


def test_a_unit_lock_admits_one_holder_at_a_time(state):
    order = []
    held = threading.Event()

    def first() -> None:
        with warmup.unit_lock("mst"):
            order.append("a in")
            held.set()
            time.sleep(0.3)
            order.append("a out")

    a = threading.Thread(target=first)
    a.start()
    held.wait(30)
    with warmup.unit_lock("mst"):   # flock on another open file: waits as another process does
        order.append("b in")
    a.join()
    assert order == ["a in", "a out", "b in"]


def test_state_goes_beside_the_numba_cache(state):
    assert warmup.state_dir() == state
