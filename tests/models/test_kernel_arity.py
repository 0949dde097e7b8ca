"""No numba kernel takes more than MAX_ARGS arguments (issue 63, item 3), read from the
source by `ast`: arrays that travel together go packed, as pynndescent packs a tree's
arrays in one named tuple.

Every kernel is there (2026-12-04). OVER, the list of kernels allowed more, with their
count, is empty and stays so: the test fails when a kernel outside it goes over
MAX_ARGS, when one inside it takes more than it did, and when one inside it no longer
needs its entry.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_ARGS = 12

# "module path:function" -> arguments today: none. The graph model's nine scoring arrays
# travel as `scoring.Scoring`, bgi's state as `bgi_state.Parts/Tree/Beam`, the
# transition classifier's actions as `system.Moves` (2026-12-04); a kernel that needs
# more than MAX_ARGS again gets its arrays packed, not an entry here
OVER: dict[str, int] = {}


def _is_kernel(fn: ast.FunctionDef) -> bool:
    """Decorated by numba's njit or jit (bare, called, or as numba.njit)."""
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("njit", "jit"):
            return True
    return False


def kernel_arities() -> dict[str, int]:
    """"path:function" -> number of arguments of every numba kernel of the package."""
    out = {}
    for pkg in ("models", "worker", "app", "deptree"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and _is_kernel(node):
                    a = node.args
                    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) \
                        + bool(a.vararg) + bool(a.kwarg)
                    out[f"{path.relative_to(ROOT).as_posix()}:{node.name}"] = n
    return out


def test_the_arity_count_sees_the_kernels():
    found = kernel_arities()
    assert len(found) > 100                     # 134 on 2026-12-03
    assert found["models/graph/scoring.py:arc_scores"] == 5


def test_no_kernel_takes_more_arguments_than_it_may():
    found = kernel_arities()
    new = {k: n for k, n in found.items() if n > MAX_ARGS and k not in OVER}
    grown = {k: (OVER[k], n) for k, n in found.items() if k in OVER and n > OVER[k]}
    assert not new, f"kernels over {MAX_ARGS} arguments (pack their arrays): {new}"
    assert not grown, f"listed kernels that took more arguments (was, now): {grown}"


def test_the_list_of_kernels_still_over_holds_only_those():
    found = kernel_arities()
    stale = {k: found.get(k) for k in OVER if found.get(k, 0) <= MAX_ARGS}
    assert not stale, f"no longer over {MAX_ARGS} (or gone): drop them from OVER: {stale}"
