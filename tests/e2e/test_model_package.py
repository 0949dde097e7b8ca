"""A model handed to another environment as a package (issue 63, item 8): `deptree
package` builds a wheel of a `deptree train` output; pip installs it into a fresh venv,
where `deptree serve --models NAME` and `deptree.load(NAME)` find it by its entry point,
with no model directory named anywhere."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import httpx
from conftest import ROOT, Server, free_port, stop_process


def fresh_venv(path: Path) -> Path:
    """A new venv without pip that sees this environment's packages (deptree and its
    dependencies, however they were installed: `site.addsitedir` also runs their .pth
    files, an editable install's included); its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    outer = sysconfig.get_paths()["purelib"]
    Path(site.stdout.strip(), "outer.pth").write_text(
        f"import site; site.addsitedir({outer!r})\n", encoding="utf-8")
    return python


def test_a_packaged_model_installs_and_serves_by_name(built_model, tmp_path):
    out = subprocess.run([sys.executable, "-m", "deptree.cli", "package", str(built_model),
                          "--out", str(tmp_path / "dist"), "--version", "1.2.3"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    wheel = tmp_path / "dist" / "deptree_model_tiny-1.2.3-py3-none-any.whl"
    assert wheel.exists(), out.stdout
    names = zipfile.ZipFile(wheel).namelist()
    assert "deptree_model_tiny/model/pipeline.json" in names
    assert "deptree_model_tiny-1.2.3.dist-info/RECORD" in names

    python = fresh_venv(tmp_path / "venv")
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                          "--no-deps", "--no-index", str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEPTREE_")}
    found = subprocess.run([str(python), "-c", "import deptree; p = deptree.load('tiny');"
                            " print(p._pipe.directory); print(p.parse('They left .',"
                            " decoder='mst')[0].heads)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert found.returncode == 0, found.stderr
    directory, heads = found.stdout.split("\n")[:2]
    assert Path(directory).is_relative_to(tmp_path / "venv") and heads.count("0") >= 1

    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "ab") as fh:
        proc = subprocess.Popen([str(python), "-m", "app.serve_cli", "serve", "--port", str(port),
                                 "--workers", "1", "--models", "tiny"], cwd=tmp_path, env=env,
                                stdout=fh, stderr=subprocess.STDOUT)
    srv = Server(proc, f"http://127.0.0.1:{port}", log)
    try:
        srv.wait_ready()
        r = httpx.post(srv.url + "/parse", json={"sentences": [["They", "left", "."]],
                                                 "decoder": "mst"}, timeout=60)
        assert r.status_code == 200 and r.json()["model"] == "tiny", r.text
        assert "tiny" in httpx.get(srv.url + "/models", timeout=10).json()["models"]
    finally:
        stop_process(proc)


def test_a_damaged_model_is_refused_before_it_is_packaged(built_model, tmp_path):
    import shutil

    broken = tmp_path / "tiny"
    shutil.copytree(built_model, broken)
    next(broken.rglob("*.npz")).write_bytes(b"not a zip")
    out = subprocess.run([sys.executable, "-m", "deptree.cli", "package", str(broken),
                          "--out", str(tmp_path / "dist")], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 2 and ".npz" in out.stderr, out.stderr
    assert not (tmp_path / "dist").exists() or not any((tmp_path / "dist").iterdir())
