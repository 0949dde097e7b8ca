"""GET /health (liveness), GET /ready (readiness) and GET /metrics (Prometheus)."""
from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from ... import metrics
from ...cache import RedisCache
from ...errors import ServiceError
from ..deps import CacheDep, DispatcherDep, SettingsDep

logger = logging.getLogger(__name__)

router = APIRouter(tags=["health"])


@router.get("/health", summary="Liveness: the gateway answers")
async def health() -> dict:
    return {"status": "ok"}


@router.get("/ready", summary="Readiness: models warm, workers up, cache state")
async def ready(dispatcher: DispatcherDep, cache: CacheDep, settings: SettingsDep) -> Response:
    """200 when at least one worker is up with its models loaded and warm. Each model
    lists its `decoders` and those `warm` on every worker: on a fresh install (a cold
    numba cache) a worker is ready once mst and selectional are compiled, and the
    others follow within a minute; a request for one still compiling waits for it.
    The cache is reported (`up`, `down`, `disabled`); a Redis outage makes the status
    `degraded` but keeps 200 (requests are served uncached) unless
    `ready_requires_cache` is set."""
    if isinstance(cache, RedisCache):
        await cache.ping()
    metrics.CACHE_UP.set(1 if cache.up else 0)
    st = dispatcher.status()
    cat = dispatcher.catalogue()
    workers_ok = st["workers_up"] > 0 and bool(cat)
    cache_st = cache.status()
    ok = workers_ok and (cache.up or not settings.ready_requires_cache)
    status = "ready" if ok and cache.up else ("degraded" if ok else "not_ready")
    body = {"ready": ok, "status": status,
            "models": {n: {"version": i.get("version"), "decoders": sorted(i.get("decoders", {})),
                           "warm": i.get("warm", [])}
                       for n, i in cat.items()},
            "workers": st, "cache": cache_st}
    return JSONResponse(body, status_code=200 if ok else 503)


@router.get("/metrics", summary="Prometheus metrics", include_in_schema=True,
            response_class=PlainTextResponse)      # documents the text exposition format
async def prometheus(dispatcher: DispatcherDep, settings: SettingsDep) -> Response:
    """404 when `metrics_port` is set: the metrics are then served there only."""
    if settings.metrics_port:
        raise ServiceError("not_found", "metrics are served on a separate port")
    dispatcher.status()          # refreshes the worker gauges
    data, ctype = metrics.render()
    return Response(data, media_type=ctype)
