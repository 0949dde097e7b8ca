"""Model directories for the tests of damaged and hostile models: copies of a model
whose parts are links but for the one a test changes, and npz files of zero arrays
that inflate a thousand times (a zip bomb in model form)."""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np


def linked_copy(src: Path, dst: Path, own: str | None = None, **meta) -> Path:
    """dst holding src's model: pipeline.json (byte for byte, or with `meta` over it),
    links to its parts but `own`, copied."""
    dst.mkdir(parents=True)
    if meta:
        config = json.loads((src / "pipeline.json").read_text())
        (dst / "pipeline.json").write_text(json.dumps({**config, **meta}))
    else:
        shutil.copy(src / "pipeline.json", dst / "pipeline.json")
    for part in src.iterdir():
        if part.is_dir():
            if part.name == own:
                shutil.copytree(part, dst / part.name)
            else:
                (dst / part.name).symlink_to(part.resolve())
    return dst


def truncated_graph(src: Path, dst: Path, **meta) -> Path:
    """The issue's broken model: graph/weights.npz cut at 5,000,000 bytes."""
    m = linked_copy(src, dst, own="graph", **meta)
    with open(m / "graph" / "weights.npz", "r+b") as f:
        f.truncate(5_000_000)
    return m


def zeros_npz(path, names=("gaps", "value"), n=64 * 2**20, dtype="<u4",
              compression=zipfile.ZIP_DEFLATED) -> None:
    """An npz of n-element arrays of zeros, written a MiB at a time: a few hundred kB
    that inflate to n x itemsize bytes per array (a zip bomb in model form)."""
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        for name in names:
            info = zipfile.ZipInfo(name + ".npy")
            info.compress_type = compression
            with z.open(info, "w", force_zip64=True) as f:
                np.lib.format.write_array_header_1_0(
                    f, {"descr": dtype, "fortran_order": False, "shape": (n,)})
                chunk = bytes(2**20)
                left = n * np.dtype(dtype).itemsize
                while left:
                    f.write(chunk[:min(left, len(chunk))])
                    left -= min(left, len(chunk))
