"""GET / (the tree viewer page) and GET /static/{name} (its script and style sheet).

The viewer is three plain files in `app/static/` (no build step, nothing fetched at
run time); the page itself calls GET /models and POST /parse like any client.
Only the files listed in `ASSETS` are served, so no path from the URL ever
reaches the file system.
"""
from __future__ import annotations

import logging
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from ...errors import ServiceError

logger = logging.getLogger(__name__)

router = APIRouter(tags=["ui"])

STATIC = Path(__file__).resolve().parents[2] / "static"
ASSETS = {"index.html": "text/html; charset=utf-8",
          "viewer.js": "text/javascript; charset=utf-8",
          "viewer.css": "text/css; charset=utf-8"}
NO_CACHE = {"Cache-Control": "no-cache"}


def _asset(name: str) -> FileResponse:
    if name not in ASSETS or not (STATIC / name).is_file():
        raise ServiceError("not_found", f"no static file {name!r}", status=404)
    return FileResponse(STATIC / name, media_type=ASSETS[name], headers=NO_CACHE)


@router.get("/", include_in_schema=False)
async def index() -> FileResponse:
    """The tree viewer: type sentences, pick model, decoders and budget, see the trees."""
    return _asset("index.html")


@router.get("/static/{name}", include_in_schema=False)
async def static(name: str) -> FileResponse:
    return _asset(name)
