"""The FastAPI application: routers, error handlers, middleware and the lifespan.

The lifespan starts the dispatcher (and with it the workers) and the cache
client, and stops them; nothing is started at import. `create_app(settings)`
lets tests and `deptree serve` pass their own settings; `app` is for
`uvicorn app.main:app`.
"""
from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from . import metrics
from .api.deps import require_admin_key, require_api_key
from .api.routes import admin, docs, health, models, parse, process, udpipe, ui
from .cache import make_cache
from .core.config import Settings, get_settings
from .dispatch import make_dispatcher
from .errors import install_handlers
from .middleware import (
    BodyLimitMiddleware,
    ConcurrencyLimitMiddleware,
    InternalErrorMiddleware,
    MetricsMiddleware,
    RequestIdMiddleware,
)
from .service import ParseService

logger = logging.getLogger(__name__)


async def _status(dispatcher) -> None:
    dispatcher.status()


class PathOnlyAccessLog(logging.Filter):
    """uvicorn's access log line with the path alone, not its query string: GET /process
    takes `data` (the user's text) from the query, and a log is no place for it."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        # uvicorn's access record: (client, method, path with query, http version, status)
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            record.args = (args[0], args[1], args[2].split("?", 1)[0], *args[3:])
        return True


def _quiet_access_log() -> None:
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, PathOnlyAccessLog) for f in access.filters):
        access.addFilter(PathOnlyAccessLog())


def create_app(settings: Settings | None = None, primary: bool = True) -> FastAPI:
    """The app; `primary` False for the second and later gateway processes of one
    `deptree serve --gateways N`: they start no metrics server (the first one's merges
    every process's samples)."""
    settings = settings or get_settings()
    _quiet_access_log()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        cache = make_cache(settings)
        await cache.start()
        dispatcher = make_dispatcher(settings)
        await dispatcher.start()
        app.state.service = ParseService(settings, dispatcher, cache)
        metrics_server = None
        if settings.metrics_port and primary:
            loop = asyncio.get_running_loop()

            def refresh() -> None:       # from the metrics thread: read status on the loop
                asyncio.run_coroutine_threadsafe(_status(dispatcher), loop).result(2)

            metrics_server = metrics.start_metrics_server(
                settings.metrics_host or settings.host, settings.metrics_port, refresh)
            logger.info("metrics on %s:%d", settings.metrics_host or settings.host,
                        settings.metrics_port)
        logger.info("deptree gateway: backend %s, %d worker(s), cache %s", settings.backend,
                    settings.workers, cache.backend)
        try:
            yield
        finally:
            if metrics_server is not None:
                metrics_server.shutdown()
            app.state.service = None
            await dispatcher.stop()
            await cache.stop()
            metrics.mark_process_dead()

    # docs_url None: FastAPI's page loads Swagger UI from a CDN; app.api.routes.docs serves
    # the same page with installed copies (no internet needed). redoc_url None: see there
    app = FastAPI(title="deptree", version="0.1.0", lifespan=lifespan, docs_url=None,
                  redoc_url=None,
                  description="Dependency parsing with a per-request decoder and budget.")
    app.dependency_overrides[get_settings] = lambda: settings
    install_handlers(app)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(InternalErrorMiddleware)        # outside the body limit's 413
    app.add_middleware(MetricsMiddleware)
    app.add_middleware(ConcurrencyLimitMiddleware, limit=settings.max_connections)
    app.add_middleware(RequestIdMiddleware)            # outermost: every answer has an id
    for r in (parse.router, process.router, udpipe.process_router):
        app.include_router(r, dependencies=[Depends(require_api_key)])
    app.include_router(admin.router, dependencies=[Depends(require_admin_key)])
    for r in (models.router, udpipe.router, health.router, ui.router, docs.router):
        app.include_router(r)
    return app


def __getattr__(name: str):
    if name == "app":          # `uvicorn app.main:app`, built on first use only
        return create_app()
    raise AttributeError(name)
