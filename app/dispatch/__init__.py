"""Dispatch backends behind one interface (`base.Dispatcher`): local and redis."""
from __future__ import annotations

import logging

from worker.config import WorkerConfig

from ..core.config import Settings
from .base import Dispatcher

logger = logging.getLogger(__name__)


def worker_config(s: Settings) -> WorkerConfig:
    return WorkerConfig(models=list(s.models), model_dirs=[str(d) for d in s.model_dirs],
                        max_requests=s.max_requests_per_worker, max_rss_mb=s.max_worker_rss_mb)


def make_dispatcher(s: Settings) -> Dispatcher:
    level = logging.getLogger().getEffectiveLevel()
    if s.backend == "redis":
        if not s.redis_url:
            raise ValueError("the redis backend needs a Redis URL (DEPTREE_REDIS_URL or"
                             " --redis-url)")
        from .redis_stream import RedisDispatcher

        return RedisDispatcher(s.redis_url, s.stream, s.workers, worker_config(s),
                               s.claim_idle_ms, s.max_deliveries, level)
    from .local import LocalDispatcher

    return LocalDispatcher(max(1, s.workers), worker_config(s), level)
