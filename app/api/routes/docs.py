"""GET /docs (Swagger UI), with its script and style sheet served from here.

FastAPI's own page loads Swagger UI from a CDN, so on a machine without internet /docs
is a blank page. This page is FastAPI's own HTML (the "self-hosting JavaScript and CSS
for docs" recipe) pointed at the copies the `fastapi-offline` package installs; only
the files listed in `ASSETS` are served, so no path from the URL reaches the file
system, and the page fetches nothing from outside. There is no /redoc: ReDoc's page
loads its logo from its vendor's CDN whatever it is told.
"""
from __future__ import annotations

import importlib.resources
import logging
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import FileResponse, HTMLResponse

from ...errors import ServiceError

logger = logging.getLogger(__name__)

router = APIRouter(tags=["docs"])

STATIC = Path(str(importlib.resources.files("fastapi_offline") / "static"))
ASSETS = {"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
          "swagger-ui.css": "text/css; charset=utf-8",
          "favicon.png": "image/png"}
PREFIX = "/docs-static"
OAUTH2_REDIRECT = "/docs/oauth2-redirect"


def _url(request: Request, name: str) -> str:
    return f"{request.scope.get('root_path', '')}{PREFIX}/{name}"


@router.get("/docs", include_in_schema=False)
async def swagger_ui(request: Request) -> HTMLResponse:
    app = request.app
    return get_swagger_ui_html(
        openapi_url=request.scope.get("root_path", "") + app.openapi_url,
        title=f"{app.title} - Swagger UI", oauth2_redirect_url=OAUTH2_REDIRECT,
        swagger_js_url=_url(request, "swagger-ui-bundle.js"),
        swagger_css_url=_url(request, "swagger-ui.css"),
        swagger_favicon_url=_url(request, "favicon.png"),
        swagger_ui_parameters=app.swagger_ui_parameters)


@router.get(OAUTH2_REDIRECT, include_in_schema=False)
async def swagger_ui_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


@router.get(PREFIX + "/{name}", include_in_schema=False)
async def asset(name: str) -> FileResponse:
    if name not in ASSETS or not (STATIC / name).is_file():
        raise ServiceError("not_found", f"no documentation file {name!r}", status=404)
    return FileResponse(STATIC / name, media_type=ASSETS[name],
                        headers={"Cache-Control": "public, max-age=86400"})
