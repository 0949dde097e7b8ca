"""A budget is checked once on its way from the request to the kernel (issue 63).

A `sitecustomize` on the served processes' path (gateway and spawned workers alike)
records, per process, every `Field.check` of `restarts` and the `restarts` the greedy
kernel's loop (`greedy_search`) is called with. A request's value is one no warm-up
uses, so its lines can be told apart from the workers' own warm-up parses.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ASKED = 7          # no warm-up or default uses 7 restarts

SITECUSTOMIZE = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, os.environ["DEPTREE_TEST_ROOT"])
    _LOG = os.environ["DEPTREE_TEST_CHECK_LOG"]

    def _note(what, value):
        with open(_LOG, "a") as fh:
            fh.write(f"{os.getpid()} {what} {value!r}\\n")

    import models.decoders as _decoders
    _check = _decoders.Field.check

    def check(self, v, cap=None):
        if self.name == "restarts":
            _note("check", v)
        return _check(self, v, cap)

    _decoders.Field.check = check

    import models.graph.decode_greedy as _kernel
    _search = _kernel.greedy_search

    def greedy_search(*args, **kwargs):
        _note("kernel", kwargs.get("restarts"))
        return _search(*args, **kwargs)

    _kernel.greedy_search = greedy_search
""")

SENTENCE = ["The", "cat", "sat", "on", "the", "mat", "."]


def _records(log: Path) -> list[tuple[int, str, str]]:
    out = []
    for line in log.read_text().splitlines():
        pid, what, value = line.split(" ", 2)
        out.append((int(pid), what, value))
    return out


def _hook(tmp_path: Path) -> tuple[dict[str, str], Path]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "checks.log"
    log.touch()
    root = Path(__file__).resolve().parents[2]
    return {"PYTHONPATH": str(site), "DEPTREE_TEST_ROOT": str(root),
            "DEPTREE_TEST_CHECK_LOG": str(log)}, log


def test_restarts_is_checked_once_from_http_to_the_kernel(serve, tmp_path):
    env, log = _hook(tmp_path)
    srv = serve(workers=1, env=env)
    with srv.client() as c:
        r = c.post("/parse", json={"sentences": [SENTENCE], "decoder": "greedy",
                                   "restarts": ASKED, "seed": 11})
        assert r.status_code == 200, r.text
        assert len(r.json()["sentences"][0]["tokens"]) == len(SENTENCE)
        refused = c.post("/parse", json={"sentences": [SENTENCE], "decoder": "greedy",
                                         "restarts": -ASKED})
        assert refused.status_code == 422 and "restarts" in refused.text
    recs = _records(log)
    checks = [(pid, v) for pid, what, v in recs if what == "check" and v == repr(ASKED)]
    kernel = [(pid, v) for pid, what, v in recs if what == "kernel" and v == repr(ASKED)]
    assert len(checks) == 1, recs        # the gateway's, and no other layer's
    assert kernel, recs                  # the value reached the kernel as asked
    (gateway_pid, _), (worker_pid, _) = checks[0], kernel[0]
    assert gateway_pid == srv.proc.pid != worker_pid
    # the refused budget was checked once too, and no worker saw it
    assert [v for _, what, v in recs if what == "check" and v == repr(-ASKED)] == [repr(-ASKED)]
    assert not [v for _, what, v in recs if what == "kernel" and v == repr(-ASKED)]


def test_a_library_call_is_checked_once_too(model_dirs, tmp_path):
    """Without a gateway (`deptree.load(...).parse`) the worker's engine checks, once."""
    env, log = _hook(tmp_path)
    script = ("import deptree, json, os\n"
              "dirs = json.loads(os.environ['DIRS'])\n"
              "with deptree.load('en_ewt', model_dirs=dirs) as nlp:\n"
              f"    (s,) = nlp.parse(tokens=[{SENTENCE!r}], decoder='greedy', restarts={ASKED})\n"
              f"    assert len(s.words) == {len(SENTENCE)}\n")
    full = {**os.environ, **env, "DIRS": json.dumps(list(model_dirs))}
    subprocess.run([sys.executable, "-c", script], env=full, check=True, timeout=900)
    recs = _records(log)
    assert [v for _, what, v in recs if what == "check" and v == repr(ASKED)] == [repr(ASKED)]
    assert [v for _, what, v in recs if what == "kernel" and v == repr(ASKED)], recs
