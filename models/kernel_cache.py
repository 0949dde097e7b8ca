"""Drop numba's on-disk kernels when the package's sources change.

numba keys a cached kernel by the file that defines it, but the kernels inline
functions and freeze constants from other files (`graph/features.py` templates,
`graph/encode.py` column numbers): after an edit or an upgrade in place, a kernel
whose own file did not change would run its old code. So `models` stamps the
sources kernels can depend on with one digest; when the digest differs from the
one the caches were built with, the package's `*.nbi` / `*.nbc` files are removed
and numba compiles afresh. Caches under NUMBA_CACHE_DIR (the Docker image builds
its own) are left alone.
"""
from __future__ import annotations

import fcntl
import hashlib
import logging
import re
from pathlib import Path

logger = logging.getLogger(__name__)

STAMP = "numba-sources.stamp"


# modules without kernels whose constants kernels freeze when they compile
CONSTANT_SOURCES = ("graph/encode.py",)
_IMPORTS_NUMBA = re.compile(rb"^\s*(from numba\b|import numba\b)", re.M)


def kernel_sources(root: Path) -> list[Path]:
    """The .py files under root that import numba, and CONSTANT_SOURCES: what a
    cached kernel can depend on. (Editing other files recompiles nothing.)"""
    out = [p for p in root.rglob("*.py") if _IMPORTS_NUMBA.search(p.read_bytes())]
    out += [root / c for c in CONSTANT_SOURCES if (root / c).exists()]
    return sorted(set(out))


def source_digest(root: Path) -> str:
    """Digest of the kernel sources under root (paths and contents)."""
    h = hashlib.blake2b(digest_size=16)
    for path in kernel_sources(root):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def invalidate_stale_kernels(root: Path) -> int:
    """Remove root's cached numba kernels if they were built from other sources
    (or from sources of unknown digest); return how many files were removed.
    Never raises on a read-only or otherwise unwritable tree: then it does nothing."""
    try:
        cache = root / "__pycache__"
        cache.mkdir(exist_ok=True)
        digest = source_digest(root)
        with open(cache / STAMP, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)        # workers starting together: one cleans
            fh.seek(0)
            if fh.read().strip() == digest:
                return 0
            removed = 0
            for pattern in ("*.nbi", "*.nbc"):
                for f in root.rglob(pattern):
                    if f.parent.name == "__pycache__":
                        f.unlink(missing_ok=True)
                        removed += 1
            fh.seek(0)
            fh.truncate()
            fh.write(digest + "\n")
        if removed:
            logger.info("sources changed: removed %d stale numba cache files", removed)
        return removed
    except OSError as exc:
        logger.debug("numba cache check skipped: %s", exc)
        return 0
