"""The FastAPI application: routers, error handlers, middleware and the lifespan.

The lifespan starts the dispatcher (and with it the workers) and the cache
client, and stops them; nothing is started at import. `create_app(settings)`
lets tests and `deptree serve` pass their own settings; `app` is for
`uvicorn app.main:app`.
"""
from __future__ import annotations

import logging
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from . import metrics
from .api.routes import health, models, parse, process, ui
from .cache import make_cache
from .core.config import Settings, get_settings
from .dispatch import make_dispatcher
from .errors import install_handlers
from .api.deps import require_api_key
from .middleware import BodyLimitMiddleware, MetricsMiddleware, RequestIdMiddleware
from .service import ParseService

logger = logging.getLogger(__name__)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        cache = make_cache(settings)
        await cache.start()
        dispatcher = make_dispatcher(settings)
        await dispatcher.start()
        app.state.service = ParseService(settings, dispatcher, cache)
        logger.info("deptree gateway: backend %s, %d worker(s), cache %s", settings.backend,
                    settings.workers, cache.backend)
        try:
            yield
        finally:
            app.state.service = None
            await dispatcher.stop()
            await cache.stop()
            metrics.mark_process_dead()

    app = FastAPI(title="deptree", version="0.1.0", lifespan=lifespan,
                  description="Dependency parsing with a per-request decoder and budget.")
    app.dependency_overrides[get_settings] = lambda: settings
    install_handlers(app)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware)
    app.add_middleware(RequestIdMiddleware)
    for r in (parse.router, process.router):
        app.include_router(r, dependencies=[Depends(require_api_key)])
    for r in (models.router, health.router, ui.router):
        app.include_router(r)
    return app


def __getattr__(name: str):
    if name == "app":          # `uvicorn app.main:app`, built on first use only
        return create_app()
    raise AttributeError(name)
