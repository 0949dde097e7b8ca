"""A job that reaches its worker after `expires_at` is answered like one the gateway
stopped waiting for: 504 `deadline_exceeded`, never the worker's own `expired` code.

The race is real (CI, a request for a decoder still compiling): the worker sees the
job's time pass a moment before the gateway's wait runs out, and its `expired` reply
arrives first. Here the queue holds each job until just past its `expires_at`, then a
real Engine on the real model runs it, so the reply always wins the race.
"""
from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from app.cache import NullCache
from app.core.config import Settings
from app.dispatch.base import Dispatcher
from app.errors import ServiceError
from app.service import Item, ParseService
from worker.config import WorkerConfig
from worker.engine import Engine


class LateQueue(Dispatcher):
    """Hands each job to `engine` only once its `expires_at` has passed."""

    backend = "late"

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def submit(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        await asyncio.sleep(max(0.0, job["expires_at"] - time.time()) + 0.01)
        return self.engine.run(job)

    def catalogue(self) -> dict[str, dict[str, Any]]:
        return self.engine.catalogue()

    def status(self) -> dict[str, Any]:
        return {"backend": self.backend, "workers_up": 1, "workers": [], "queue_depth": 0}


@pytest.fixture(scope="module")
def engine(model_dirs):
    e = Engine(WorkerConfig(models=["en_ewt"], model_dirs=model_dirs))
    e.load()            # nothing decodes here: no warm-up
    return e


def test_a_late_job_is_a_deadline_exceeded(engine):
    reply = engine.run({"id": "t", "model": "en_ewt", "decoder": "mst", "budget": {},
                        "deadline_at": None, "expires_at": time.time() - 1,
                        "items": [{"kind": "tokens", "forms": ["Dogs", "bark"]}]})
    assert not reply["ok"] and reply["error"]["code"] == "expired"   # what the worker says
    service = ParseService(Settings(redis_url=None), LateQueue(engine), NullCache())
    plan = service.plan(None, "mst", {"deadline_ms": 50},
                        [Item("tokens", {"forms": ["Dogs", "bark"]})])
    with pytest.raises(ServiceError) as err:
        asyncio.run(service.run(plan))
    assert err.value.code == "deadline_exceeded", err.value.message
    assert err.value.limit == "deadline_ms" and err.value.value == 50
