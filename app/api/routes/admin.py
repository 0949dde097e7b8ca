"""Admin actions: flush the result cache, reload the workers' models.

Every route needs the admin key (`require_admin_key`, header X-Admin-Key), a
different secret from the API key; with none configured the routes answer 403.
"""
from __future__ import annotations

import logging

from fastapi import APIRouter

from ...cache import REDIS_DOWN
from ...errors import ServiceError
from ...schemas import ErrorResponse
from ..deps import CacheDep, DispatcherDep

logger = logging.getLogger(__name__)

# 401 wrong key, 403 no admin key configured, 501 not on this backend, 503 Redis down
router = APIRouter(prefix="/admin", tags=["admin"],
                   responses={c: {"model": ErrorResponse} for c in (401, 403, 501, 503)})


@router.post("/cache/flush", summary="Drop every cached parse result")
async def flush_cache(cache: CacheDep) -> dict:
    """Only the cache's own keys are removed (Redis: SCAN + UNLINK by prefix)."""
    try:
        n = await cache.flush()
    except REDIS_DOWN as exc:
        raise ServiceError("cache_unavailable", f"the Redis cache is down: {type(exc).__name__}"
                           ) from None
    logger.warning("admin: cache flushed (%d entries, %s)", n, cache.backend)
    return {"flushed": n, "backend": cache.backend}


@router.post("/workers/reload", status_code=202,
             summary="Start fresh workers that load the model files again")
async def reload_workers(dispatcher: DispatcherDep) -> dict:
    """Each worker keeps serving until its replacement is warm (local backend);
    watch /ready or /models for the new versions."""
    n = dispatcher.reload()
    logger.warning("admin: reloading %d worker(s)", n)
    return {"reloading": n}
