"""A models directory with one damaged or hostile model (issue 61, defects 2, 4 and 5):
`deptree serve` refuses to start, exit code 2, with one line naming the file or the
directories and what is wrong, and so does `deptree worker`. It used to start, and
every request to every model got 503 `no_workers` ("BadZipFile: File is not a zip
file") for ever while workers failed to load it; a model of zero arrays was inflated
to gigabytes first; a directory that said it was en_ewt served as en_ewt. Real
`deptree serve` and `deptree worker` processes, copies of the shipped en_ewt."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from models.serve.registry import resolve
from tests.conftest import free_port, start_process, stop_process
from tests.models.model_copies import linked_copy, truncated_graph, zeros_npz

START_S = 60        # the check reads headers only: a refusal comes in seconds


def broken(kind: str, src: Path, models: Path) -> tuple[Path, str]:
    """A directory of one good and one bad model; what the refusal must say."""
    if kind == "truncated":
        m = truncated_graph(src, models / "broken", name="broken")
        return m, f"{m / 'graph' / 'weights.npz'} is not a readable npz"
    if kind == "inflating":
        m = linked_copy(src, models / "bomb", own="transition", name="bomb")
        zeros_npz(m / "transition" / "weights.npz", n=128 * 2**20)
        return m, f"{m / 'transition' / 'weights.npz'}: array 'gaps' would inflate"
    if kind == "outside":
        linked_copy(src, models.parent / "elsewhere")
        m = linked_copy(src, models / "outside", name="outside",
                        transition="../../elsewhere/transition")
        return m, "gives the transition part as '../../elsewhere/transition', which is outside"
    m = linked_copy(src, models / "evil", name="en_ewt")              # kind == "same name"
    return m, f"two models are named 'en_ewt' (the name in their pipeline.json): {src} and {m}"


@pytest.mark.parametrize("kind", ["truncated", "inflating", "outside", "same name"])
@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_models_directory_with_a_bad_model_refuses_to_start(model_dirs, tmp_path, kind,
                                                              command):
    src = resolve("en_ewt", search_dirs=[Path(d) for d in model_dirs])
    models = tmp_path / "models"
    models.mkdir()
    bad, message = broken(kind, src, models)
    env = {"DEPTREE_MODEL_DIRS": os.pathsep.join([str(models), *model_dirs]),
           "DEPTREE_MODELS": "*", "DEPTREE_REDIS_URL": "redis://127.0.0.1:1"}
    args = (["serve", "--port", str(free_port()), "--workers", "1"] if command == "serve"
            else ["worker"])
    log = tmp_path / "out.log"
    proc = start_process(args, env, log)
    try:
        code = proc.wait(START_S)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        stop_process(proc)
    out = log.read_text(errors="replace")
    assert code == 2, f"{command} did not refuse to start ({code}):\n{out[-3000:]}"
    assert message in out, out[-3000:]
    assert "Traceback" not in out


ADMIN = "an-admin-key-0123456789"


def test_a_model_damaged_after_start_is_named_and_the_old_workers_serve_on(serve, model_dirs,
                                                                           tmp_path, wait_for):
    """`POST /admin/workers/reload` after graph/weights.npz was cut short: the fresh
    worker cannot load it, and says which file is wrong (it said "BadZipFile: File is
    not a zip file"); the old worker goes on answering."""
    src = resolve("en_ewt", search_dirs=[Path(d) for d in model_dirs])
    models = tmp_path / "models"
    m = linked_copy(src, models / "en_ewt", own="graph")
    srv = serve(workers=1, env={"DEPTREE_MODEL_DIRS": str(models), "DEPTREE_ADMIN_KEY": ADMIN})
    body = {"sentences": [["Still", "served", "."]], "decoder": "mst"}
    with srv.client() as c:
        assert c.post("/parse", json=body).status_code == 200
        with open(m / "graph" / "weights.npz", "r+b") as f:
            f.truncate(5_000_000)
        assert c.post("/admin/workers/reload", headers={"X-Admin-Key": ADMIN}
                      ).status_code == 202
        error = wait_for(lambda: c.get("/ready").json()["workers"].get("error"), 120,
                         "the reload's error")
        assert f"{m / 'graph' / 'weights.npz'} is not a readable npz" in error, error
        r = c.post("/parse", json={**body, "sentences": [["And", "again", "."]]})
        assert r.status_code == 200, r.text
