"""numba caches are dropped when any source of the package changes (not only the
file that defines a kernel: kernels inline templates and constants from others)."""
from __future__ import annotations

from pathlib import Path

from models.kernel_cache import STAMP, invalidate_stale_kernels


def _tree(root: Path) -> list[Path]:
    (root / "graph" / "__pycache__").mkdir(parents=True)
    (root / "features.py").write_text("from numba import njit\nA = 1\n")
    (root / "graph" / "scoring.py").write_text("import numba\nfrom features import A\n")
    (root / "graph" / "encode.py").write_text("A_WORD = 0\n")   # constants, no kernel
    (root / "cli.py").write_text("print('no kernels here')\n")
    caches = [root / "graph" / "__pycache__" / "scoring.arc_scores-10.py311.nbi",
              root / "graph" / "__pycache__" / "scoring.arc_scores-10.py311.1.nbc"]
    for c in caches:
        c.write_bytes(b"kernel")
    return caches


def test_caches_of_unknown_sources_are_dropped_then_kept(tmp_path):
    caches = _tree(tmp_path)
    assert invalidate_stale_kernels(tmp_path) == 2          # no stamp yet: unknown origin
    assert not any(c.exists() for c in caches)
    assert (tmp_path / "__pycache__" / STAMP).exists()
    for c in caches:
        c.write_bytes(b"kernel")                            # numba compiles afresh
    assert invalidate_stale_kernels(tmp_path) == 0          # same sources: kept
    assert all(c.exists() for c in caches)


def test_an_edit_in_another_file_drops_the_kernels(tmp_path):
    caches = _tree(tmp_path)
    invalidate_stale_kernels(tmp_path)
    for c in caches:
        c.write_bytes(b"kernel")
    # not the kernel's file
    (tmp_path / "features.py").write_text("from numba import njit\nA = 2\n")
    assert invalidate_stale_kernels(tmp_path) == 2
    assert not any(c.exists() for c in caches)
    for c in caches:
        c.write_bytes(b"kernel")
    (tmp_path / "graph" / "encode.py").write_text("A_WORD = 1\n")   # frozen constants
    assert invalidate_stale_kernels(tmp_path) == 2


def test_an_edit_outside_the_kernel_sources_keeps_them(tmp_path):
    caches = _tree(tmp_path)
    invalidate_stale_kernels(tmp_path)
    for c in caches:
        c.write_bytes(b"kernel")
    (tmp_path / "cli.py").write_text("print('still no kernels')\n")
    assert invalidate_stale_kernels(tmp_path) == 0
    assert all(c.exists() for c in caches)


def test_an_unwritable_tree_is_left_alone(tmp_path, monkeypatch):
    """A read-only install: the stamp cannot be opened, nothing is removed, no error."""
    import models.kernel_cache as kc

    caches = _tree(tmp_path)

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(kc, "open", read_only, raising=False)
    assert invalidate_stale_kernels(tmp_path) == 0
    assert all(c.exists() for c in caches)


# ---- with numba itself -------------------------------------------------------------
PACKAGE_INIT = """from pathlib import Path
from models.kernel_cache import invalidate_stale_kernels
invalidate_stale_kernels(Path(__file__).resolve().parent)
"""
CALLEE = """from numba import njit
K = {k}
@njit("int64(int64)", cache=True)       # compiled on import, called (not inlined) below
def scale(x):
    return x * K
"""
CALLER = """from numba import njit
from .callee import scale
@njit(cache=True)
def run(x):
    return scale(x) + 1
"""


def _run_kernel(root: Path) -> int:
    import subprocess
    import sys

    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_CACHE_DIR"}
    out = subprocess.run([sys.executable, "-c", "import pkg.caller as c; print(c.run(10))"],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300,
                         check=True)
    return int(out.stdout)


def test_a_cached_kernel_calling_an_edited_kernel_of_another_file_is_recompiled(tmp_path):
    """numba keys `run`'s cache by caller.py alone, and its cached code holds `scale`
    from callee.py: without the digest over every kernel source, the edit of callee.py
    would leave `run` computing with K = 2 (issue 19: kernels call explicit-signature
    kernels of other files, e.g. labeler -> features.fhash)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(PACKAGE_INIT)
    (pkg / "callee.py").write_text(CALLEE.format(k=2))
    (pkg / "caller.py").write_text(CALLER)
    assert _run_kernel(tmp_path) == 21
    assert list((pkg / "__pycache__").glob("caller.run-*.nbc"))     # cached beside it
    assert _run_kernel(tmp_path) == 21                              # from the cache
    (pkg / "callee.py").write_text(CALLEE.format(k=30))
    assert _run_kernel(tmp_path) == 301
