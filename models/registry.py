"""Models by name: `en_ewt` -> models/pretrained/en_ewt, or any model directory.

A model directory holds `pipeline.json` (name, language, the parts it has: see
`pipeline_config.py`). Names are looked up in the given directories of models, then
among the shipped ones; `ALL` stands for every model found there, so a service can
serve a whole directory of models.
"""
from __future__ import annotations

from pathlib import Path

from .errors import ModelError

PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"
ALL = "*"


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


def expand(names: list[str], search_dirs: list[Path] | None = None) -> list[str]:
    """names with `ALL` replaced by every model found (directories first)."""
    out: list[str] = []
    for name in names:
        found = available_models(search_dirs) if name == ALL else [name]
        out += [n for n in found if n not in out]
    if not out:
        raise ModelError("no model to serve: none found in "
                         + ", ".join(str(d) for d in (search_dirs or []) + [PRETRAINED_DIR]))
    return out
