"""Models by name: `en_ewt` -> models/pretrained/en_ewt, or any model directory.

A model directory holds `pipeline.json` (name, language, components) with the
graph parser under `graph/` and, when trained, the text front-end under
`frontend/`. Decoders are listed here so the service can show what exists
without knowing any model internals.
"""
from __future__ import annotations

from pathlib import Path

from .errors import ModelError

PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"


def resolve(name_or_path: str | Path, search_dirs: list[Path] | None = None) -> Path:
    """Directory of a model given its name or path."""
    p = Path(name_or_path)
    if p.is_dir() and ((p / "pipeline.json").exists() or (p / "model.json").exists()):
        return p
    for d in (search_dirs or []) + [PRETRAINED_DIR]:
        cand = Path(d) / str(name_or_path)
        if (cand / "pipeline.json").exists():
            return cand
    known = ", ".join(available_models(search_dirs)) or "none"
    raise ModelError(f"unknown model {str(name_or_path)!r}; available: {known}")


def available_models(search_dirs: list[Path] | None = None) -> list[str]:
    names = set()
    for d in (search_dirs or []) + [PRETRAINED_DIR]:
        if Path(d).is_dir():
            names.update(p.parent.name for p in Path(d).glob("*/pipeline.json"))
    return sorted(names)
