"""Model arrays kept decompressed on local disk, so that a model loads without LZMA.

The graph and transition weights are LZMA-compressed npz files (`npz.save_npz`: 12-21%
smaller than deflate, which keeps the shipped model under 50 MB). Decompressing them is
most of a model's loading: 1.4 of `Pipeline.load("en_ewt")`'s 3.9 s on a quiet core, 5.4
of 14 s beside a busy test suite, and every worker of every start and reload paid it
again. `read_npz` now keeps each such file's arrays as plain `.npy` files under
`cache_dir()`, keyed by the digest of the compressed file's bytes: a copy of a model
shares its entry, a changed file has another, and an entry is never stale.

An entry is written to a temporary directory and renamed into place whole (two workers
loading at once: one rename wins, the other's copy is dropped), and read only when
complete; anything unreadable is a miss, never an error: the arrays then come from the
model file, which stays the truth. The cache holds at most MAX_BYTES, the entries used
longest ago leaving first. `DEPTREE_ARRAY_CACHE` names another directory, or `off`.
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

ENV = "DEPTREE_ARRAY_CACHE"
MAX_BYTES = 512 * 2**20      # about 4 versions of the shipped model's two LZMA files
DONE = "complete"            # written last: an entry without it is not read


def cache_dir() -> Path | None:
    """Where entries live: $DEPTREE_ARRAY_CACHE (None for "off" or ""), else
    $XDG_CACHE_HOME/deptree/arrays, else ~/.cache/deptree/arrays."""
    named = os.environ.get(ENV)
    if named is not None:
        return None if named.strip().lower() in ("", "off", "0", "none") else Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "deptree" / "arrays"


def file_key(path: str | Path) -> str:
    """The entry's name: blake2b/20 of the file's bytes and size."""
    h = hashlib.blake2b(digest_size=20)
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
            size += len(chunk)
    return f"{h.hexdigest()}-{size}"


def load(key: str, names: list[str]) -> dict[str, np.ndarray] | None:
    """The arrays `names` of entry `key`, or None when it is absent or unreadable."""
    root = cache_dir()
    if root is None:
        return None
    entry = root / key
    try:
        if not (entry / DONE).is_file():
            if entry.exists():        # writers fill temporary copies, never this: broken
                drop(key)
            return None
        out = {n: np.load(entry / f"{n}.npy", allow_pickle=False) for n in names}
    except (OSError, ValueError, EOFError) as exc:
        logger.debug("array cache entry %s unreadable (%s): reading the model file", entry, exc)
        drop(key)
        return None
    try:
        os.utime(entry / DONE)                    # used now: the last to be evicted
    except OSError:                               # a read-only cache still serves
        pass
    return out


def drop(key: str) -> None:
    """Remove entry `key` (damaged, or not what the model file holds), if any."""
    root = cache_dir()
    if root is not None:
        shutil.rmtree(root / key, ignore_errors=True)


def store(key: str, arrays: dict[str, np.ndarray]) -> None:
    """Keep `arrays` as entry `key`, whole or not at all; never raises."""
    root = cache_dir()
    if root is None or any("/" in n or n.startswith(".") for n in arrays):
        return
    tmp = None
    try:
        root.mkdir(parents=True, exist_ok=True)
        if (root / key / DONE).is_file():
            return
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=root))
        for name, a in arrays.items():
            np.save(tmp / f"{name}.npy", a, allow_pickle=False)
        (tmp / DONE).write_text(key)
        os.rename(tmp, root / key)                # fails if another writer won: fine
        tmp = None
        _evict(root, keep=key)
    except OSError as exc:
        logger.debug("array cache not written under %s: %s", root, exc)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _evict(root: Path, keep: str) -> None:
    """Remove the entries used longest ago until the cache holds MAX_BYTES at most."""
    entries = []
    for e in root.iterdir():
        done = e / DONE
        if e.name.startswith("."):                # a writer's copy: gone after an hour
            if time.time() - e.stat().st_mtime > 3600:
                shutil.rmtree(e, ignore_errors=True)
            continue
        if not done.is_file():
            continue
        size = sum(f.stat().st_size for f in e.iterdir())
        entries.append((done.stat().st_mtime, e, size))
    total = sum(s for _, _, s in entries)
    for _, e, size in sorted(entries, key=lambda t: t[0]):
        if total <= MAX_BYTES:
            break
        if e.name != keep:
            shutil.rmtree(e, ignore_errors=True)
            total -= size
