"""Fill docker/wheels/ on the host for an offline image build (docker/wheels/README.md).

pip inside the build container cannot reach PyPI here, so the wheels are fetched on
the host. The versions are resolved for the image's own interpreter (`uv pip compile
--python-version` with the base image's Python): environment markers differ between
the host's Python and the image's (redis wants `async-timeout` below Python 3.11.3,
and Debian bookworm's python3 is 3.11.2). The input is the Dockerfile's REQUIREMENTS
file (the lock file) with pyproject.toml, plus the build backend.
"""
from __future__ import annotations

import logging
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

logger = logging.getLogger(__name__)


def image_python(image: str) -> str:
    """The Python version (X.Y.Z) of `image`'s python3."""
    r = subprocess.run(["docker", "run", "--rm", "--network", "none", image, "python3", "-c",
                        "import platform; print(platform.python_version())"],
                       capture_output=True, text=True, check=True, timeout=120)
    return r.stdout.strip()


def _uv() -> str:
    found = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if not found:
        raise RuntimeError("uv is missing: pip install -e '.[bench]'")
    return found


def fill(root: Path, python_image: str, out: Path, requirements: str) -> list[str]:
    """Wheels of every runtime dependency (and the build backend) for `python_image`
    into `out`, replacing the wheels there; the pinned requirement lines.
    `requirements`: the Dockerfile's REQUIREMENTS, a path under `root`."""
    sources = [root / "pyproject.toml", root / requirements]
    backend = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    t0 = time.monotonic()
    version = image_python(python_image)
    t_python = time.monotonic() - t0
    with tempfile.TemporaryDirectory(prefix="deptree-wheels-") as tmp:
        build_in = Path(tmp) / "build-system.in"
        build_in.write_text("\n".join(backend["build-system"]["requires"]) + "\n")
        pins = Path(tmp) / "pins.txt"
        subprocess.run([_uv(), "pip", "compile", *map(str, sources), str(build_in), "--quiet",
                        "--python-version", version,
                        "--python-platform", f"{platform.machine()}-manylinux_2_28",
                        "--no-header", "--no-annotate", "-o", str(pins)],
                       check=True, timeout=600)
        lines = [x for x in pins.read_text().splitlines() if x and not x.startswith("#")]
        t_compile = time.monotonic() - t0 - t_python
        for old in out.glob("*.whl"):
            old.unlink()
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "-w", str(out), "-r", str(pins)], check=True, timeout=1200)
    logger.info("%d wheels for Python %s (%s) in %s; seconds: %.0f python version, "
                "%.0f uv compile, %.0f pip wheel", len(lines), version, requirements, out,
                t_python, t_compile, time.monotonic() - t0 - t_python - t_compile)
    return lines
