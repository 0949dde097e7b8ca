"""deptree's parsers, front-end and model files (no HTTP, Redis or service code)."""
from pathlib import Path

from models.kernel_cache import invalidate_stale_kernels

invalidate_stale_kernels(Path(__file__).resolve().parent)
