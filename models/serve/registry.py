"""Models by name: `en_ewt` -> models/pretrained/en_ewt, or any model directory.

A model directory holds `pipeline.json` (name, language, the parts it has: see
`pipeline_config.py`). Names are looked up in the given directories of models, then
among the shipped ones, then among the installed model packages (`deptree package`:
entry points of ENTRY_POINTS); `ALL` stands for every model found there, so a service
can serve a whole directory of models. Models are served by the name in their
pipeline.json, so two directories that give the same name are refused
(`directories`) rather than one silently taking the other's place.

`check` looks at a model directory without loading it (the gateway, which imports no
parser kernel, checks every model before it starts, and `load_components` before it
loads): pipeline.json, each part it lists (inside the directory), and every npz file
of the parts (`npz.check_npz`: the zip is whole, each array's header agrees with its
size), so that a damaged model stops a start with a message that names the file.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from ..errors import ModelError
from ..npz import check_npz
from .pipeline_config import PARTS, PipelineConfig

logger = logging.getLogger(__name__)

PRETRAINED_DIR = Path(__file__).resolve().parents[1] / "pretrained"
ALL = "*"
ENTRY_POINTS = "deptree.models"   # installed model packages (`deptree package`) register here


def installed_models() -> dict[str, Path]:
    """Models installed as packages (`models/build/package.py`): name -> directory, from the
    entry points of ENTRY_POINTS; one that cannot be loaded is left out, logged."""
    from importlib.metadata import entry_points

    out: dict[str, Path] = {}
    for ep in entry_points(group=ENTRY_POINTS):
        try:
            out.setdefault(ep.name, Path(ep.load()()))
        except Exception as exc:        # a broken package must not stop the others
            logger.warning("ignoring the installed model %s (%s): %s", ep.name, ep.value, exc)
    return out


def resolve(name_or_path: str | Path, search_dirs: list[Path] | None = None) -> Path:
    """Directory of a model given its name or path."""
    p = Path(name_or_path)
    if p.is_dir() and ((p / "pipeline.json").exists() or (p / "model.json").exists()):
        return p
    for d in (search_dirs or []) + [PRETRAINED_DIR]:
        cand = Path(d) / str(name_or_path)
        if (cand / "pipeline.json").exists():
            return cand
    installed = installed_models().get(str(name_or_path))
    if installed is not None and (installed / "pipeline.json").exists():
        return installed
    known = ", ".join(available_models(search_dirs)) or "none"
    raise ModelError(f"unknown model {str(name_or_path)!r}; available: {known}")


def available_models(search_dirs: list[Path] | None = None) -> list[str]:
    names = set()
    for d in (search_dirs or []) + [PRETRAINED_DIR]:
        if Path(d).is_dir():
            names.update(p.parent.name for p in Path(d).glob("*/pipeline.json"))
    return sorted(names | set(installed_models()))


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


def directories(names: list[str], search_dirs: list[Path] | None = None) -> list[Path]:
    """The directory of each model of `expand(names)`, in that order; a `ModelError`
    naming both when two directories give their models the same name (pipeline.json's
    `name`, which the service serves them by)."""
    out, by_name = [], {}
    for name in expand(names, search_dirs):
        d = resolve(name, search_dirs)
        own = PipelineConfig.read(d).name
        other = by_name.setdefault(own, d)
        if other.resolve() != d.resolve():
            raise ModelError(f"two models are named {own!r} (the name in their "
                             f"pipeline.json): {other} and {d}; rename one or serve one")
        out.append(d)
    return out


def check(directory: Path) -> PipelineConfig:
    """The settings of the model in `directory` once its files pass the checks above
    (a `ModelError` naming the file and what is wrong with it otherwise); reads
    pipeline.json, the parts' listings and the npz headers, no weights."""
    directory = Path(directory)
    cfg = PipelineConfig.read(directory)
    for name in PARTS:
        part = directory if name == "graph" and cfg.graph is None else cfg.part(directory,
                                                                                name)
        if part is not None:
            for f in sorted(part.rglob("*.npz")):
                check_npz(f)
            if name == "graph":
                _shared_files_inside(directory, part)
    return cfg


def _shared_files_inside(directory: Path, graph: Path) -> None:
    """The graph part may read the word clusters of another part (its model.json's
    `word_classes`, e.g. "../frontend/tagger"): they must be in the model directory."""
    try:
        where = json.loads((graph / "model.json").read_text()).get("word_classes")
    except (OSError, ValueError, AttributeError):
        return                  # the graph loader says what is wrong with it
    if isinstance(where, str) and where:
        rel = os.path.normpath(graph.relative_to(directory) / where)
        if os.path.isabs(where) or rel == ".." or rel.startswith(".." + os.sep):
            raise ModelError(f"{graph / 'model.json'} reads its word clusters from "
                             f"{where!r}, which is outside the model directory {directory}")
