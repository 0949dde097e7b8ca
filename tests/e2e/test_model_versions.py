"""Trees are cached under the model version that made them (issue 20, defect 4). Jobs
carried no version and the gateway keys the cache by the catalogue, which is whatever
worker published last; during a reload or a rolling upgrade an old-model tree was
cached under the new version's key and served as the new model's for `cache_ttl_s`.
Now a job names the version it was planned for, the worker answers with its own, and
the gateway caches under (and reports) the version that answered. Real `deptree
worker` processes of two versions of one model, a real gateway and Redis cache."""
from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from models.serve.registry import resolve


def model_copy(src: Path, root: Path, version: str) -> str:
    """A directory holding en_ewt/ whose pipeline.json says `version`; the parts are
    links to `src`'s, so the two copies differ in their version only."""
    meta = json.loads((src / "pipeline.json").read_text())
    meta["version"] = version
    dst = root / version / "en_ewt"
    dst.mkdir(parents=True)
    (dst / "pipeline.json").write_text(json.dumps(meta))
    for part in src.iterdir():
        if part.name != "pipeline.json":
            (dst / part.name).symlink_to(part.resolve())
    return str(root / version)


def published_version(r) -> str | None:
    raw = r.hget("deptree:models", "en_ewt")
    return json.loads(raw)["version"] if raw else None




def test_trees_are_cached_under_the_version_that_answered(serve, redis_server, stream_worker,
                                                          model_dirs, tmp_path, wait_for):
    src = resolve("en_ewt", search_dirs=[Path(d) for d in model_dirs])
    old_dir = model_copy(src, tmp_path / "models", "old")
    new_dir = model_copy(src, tmp_path / "models", "new")
    rs = redis_server()
    r = rs.client()
    env = {"DEPTREE_REDIS_URL": rs.url, "DEPTREE_CLAIM_IDLE_MS": "1000"}

    old = stream_worker({**env, "DEPTREE_MODEL_DIRS": old_dir})
    wait_for(lambda: (published_version(r) or "").startswith("old+"), 180, "old published")
    # a worker of the new version starts (publishing its version) and stops again, as in
    # a rolling upgrade that is under way: the catalogue says "new", only "old" serves
    new = stream_worker({**env, "DEPTREE_MODEL_DIRS": new_dir})
    new_version = wait_for(lambda: (v := published_version(r) or "").startswith("new+") and v,
                           180, "new published")
    new.send_signal(signal.SIGTERM)
    assert new.wait(30) == 0
    assert r.scard("deptree:workers") == 1
    srv = serve(workers=0, args=["--backend", "redis"], env=env)

    body = {"sentences": [["A", "rolling", "upgrade", "is", "under", "way", "."]],
            "decoder": "mst"}
    with srv.client() as c:
        assert c.get("/models").json()["models"]["en_ewt"]["version"] == new_version
        first = c.post("/parse", json=body).json()
        assert first["version"].startswith("old+"), first["version"]  # who made the tree
        assert first["sentences"][0]["cached"] is False

        # the new version takes over: the old tree must not come back as the new one's
        new = stream_worker({**env, "DEPTREE_MODEL_DIRS": new_dir})
        wait_for(lambda: r.scard("deptree:workers") == 2, 180, "the new worker up")
        old.send_signal(signal.SIGTERM)
        assert old.wait(30) == 0
        wait_for(lambda: len(c.get("/ready").json()["workers"]["workers"]) == 1, 10,
                 "the gateway sees the old worker gone")
        again = c.post("/parse", json=body).json()
        assert again["sentences"][0]["cached"] is False, "an old-model tree served as new"
        assert again["version"] == new_version
        third = c.post("/parse", json=body).json()
        assert third["sentences"][0]["cached"] is True and third["version"] == new_version


# ---- issue 61, defect 3: the version names every file that can change an answer ---------
ADMIN = "an-admin-key-0123456789"


def negate_transition_weights(model: Path) -> None:
    """Rewrite model/transition/weights.npz with every weight negated: the same shape
    and model.json, other answers."""
    import numpy as np

    from models.npz import save_npz

    path = model / "transition" / "weights.npz"
    with np.load(path) as z:
        arrays = {name: z[name] for name in z.files}
    arrays["value"] = -arrays["value"]
    save_npz(path, **arrays)


def serving(c) -> set[int]:
    """The pids of the workers that take jobs."""
    return {w["pid"] for w in c.get("/ready").json()["workers"]["workers"]
            if w["state"] in ("idle", "busy")}


def test_changed_transition_weights_are_a_new_version_after_reload(serve, model_dirs,
                                                                   tmp_path, wait_for):
    """Only transition/model.json was hashed: after new weights and a reload the answer
    kept the old version and came from the cache (`cached: true`, the old heads)."""
    src = resolve("en_ewt", search_dirs=[Path(d) for d in model_dirs])
    model = tmp_path / "models" / "en_ewt"
    shutil.copytree(src, model)
    if not (model / "transition" / "weights.npz").exists():
        pytest.skip("this en_ewt has no transition parser")
    srv = serve(workers=1, env={"DEPTREE_MODEL_DIRS": str(tmp_path / "models"),
                                "DEPTREE_ADMIN_KEY": ADMIN})
    body = {"sentences": [["The", "new", "weights", "change", "the", "answer", "."]],
            "decoder": "selectional"}
    with srv.client() as c:
        first = c.post("/parse", json=body).json()
        assert first["sentences"][0]["cached"] is False
        negate_transition_weights(model)
        pids = serving(c)
        r = c.post("/admin/workers/reload", headers={"X-Admin-Key": ADMIN})
        assert r.status_code == 202, r.text
        wait_for(lambda: (now := serving(c)) and not now & pids, 180, "the old worker replaced")
        assert c.get("/models").json()["models"]["en_ewt"]["version"] != first["version"]
        again = c.post("/parse", json=body).json()
        assert again["version"] != first["version"]
        assert again["sentences"][0]["cached"] is False, "the old model's tree served as new"
