"""`deptree package`: a trained model directory as a pip-installable wheel.

As spaCy's `spacy package` does, the wheel holds one Python package,
`deptree_model_<name>`, with the model's files under it and a function `path()` that
gives their directory, and it registers the model in the entry point group
`deptree.models` under its name (`pipeline.json`'s `name`). Installed with pip, the
model is found by name like a shipped one (`models.serve.registry.installed_models`):
`deptree serve --models NAME`, `deptree parse --model NAME`, `deptree.load(NAME)`.
The directory is checked first (`registry.check`: every part and npz file whole, every
shared file inside it), so a damaged model is refused here, not on the other machine.
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

from ..errors import ModelError
from ..serve.registry import ENTRY_POINTS, check

WHEEL = """Wheel-Version: 1.0
Generator: deptree package
Root-Is-Purelib: true
Tag: py3-none-any
"""

INIT = '''"""The deptree model {name!r} ({language}), packaged by `deptree package`."""
from pathlib import Path

MODEL = Path(__file__).resolve().parent / "model"


def path() -> Path:
    """The model's directory (what `deptree.models` entry points give)."""
    return MODEL
'''


def distribution(name: str) -> str:
    """The wheel's distribution and package name of model `name`."""
    return "deptree_model_" + re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").lower()


def package(model_dir: Path, out: Path, version: str = "1.0.0") -> Path:
    """Write the wheel of the model in `model_dir` into `out`; its path."""
    from packaging.version import InvalidVersion, Version
    from wheel.wheelfile import WheelFile

    model_dir = Path(model_dir)
    cfg = check(model_dir)
    try:
        version = str(Version(version))
    except InvalidVersion as exc:
        raise ModelError(f"{version!r} is not a package version (PEP 440): {exc}") from None
    dist = distribution(cfg.name)
    out.mkdir(parents=True, exist_ok=True)
    wheel_path = out / f"{dist}-{version}-py3-none-any.whl"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pkg = root / dist
        shutil.copytree(model_dir, pkg / "model",
                        ignore=shutil.ignore_patterns(".build", "__pycache__", "*.pyc"))
        (pkg / "__init__.py").write_text(INIT.format(name=cfg.name, language=cfg.language),
                                         encoding="utf-8")
        info = root / f"{dist}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
            f"Summary: deptree model {cfg.name} ({cfg.language})\nRequires-Dist: deptree\n",
            encoding="utf-8")
        (info / "WHEEL").write_text(WHEEL, encoding="utf-8")
        (info / "entry_points.txt").write_text(f"[{ENTRY_POINTS}]\n{cfg.name} = {dist}:path\n",
                                               encoding="utf-8")
        with WheelFile(wheel_path, "w") as whl:
            whl.write_files(str(root))
    return wheel_path


def add_package(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("package", help="a trained model directory as a pip-installable wheel")
    p.add_argument("model_dir", type=Path, help="the model directory (`deptree train --out`)")
    p.add_argument("--out", type=Path, default=Path("dist"), help="where the wheel goes")
    p.add_argument("--version", default="1.0.0", help="the package's version (PEP 440)")
    p.set_defaults(func=_run_package)


def _run_package(args: argparse.Namespace) -> int:
    path = package(args.model_dir, args.out, args.version)
    name = check(args.model_dir).name
    sys.stdout.write(f"{path}\n  pip install {path}\n  deptree serve --models {name}\n")
    return 0
