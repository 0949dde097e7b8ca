"""deptree's parsers, front-end and model files (no HTTP, Redis or service code).

Layers: `serve/` (a loaded model, what workers hold), `build/` (a model from a
treebank: `deptree train`, evaluation, packaging); the parsers and analysers they
share (`graph/`, `transition/`, `neural/`, `contextual/`, `text/`); and at this root
only leaf modules every layer uses (CoNLL-U, trees, npz and its array cache, decoder specs, errors,
progress, the kernel cache). docs/architecture.md has the map.
"""
from pathlib import Path

from models.kernel_cache import invalidate_stale_kernels

invalidate_stale_kernels(Path(__file__).resolve().parent)
