"""Model arrays in npz files: written LZMA-compressed, read within bounds.

`numpy.load` reads these files as it reads `numpy.savez_compressed`'s (the zip
format names each member's compression). On the shipped en_ewt model's sparse weights
(gaps between indices, float16 values), LZMA writes 12-21% less than deflate, which
keeps the model directory under 50 MB, for about 1 s more loading.

A model directory may come from anywhere, so reading one is bounded before any array
is decompressed (`check_npz`): the zip's directory must be whole (a truncated file
names itself instead of failing as "BadZipFile" deep in a loader), each member's npy
header must describe exactly the bytes the member holds (zip's `file_size`, which
also bounds what zipfile will ever inflate), no array may hold Python objects (they
are pickles), and no member may inflate more than `MAX_RATIO` times its compressed
size (the shipped model's arrays inflate at most 7 times; a 2.3 MB file of 400M-element
arrays of zeros, 1,000 times, used to be inflated to 2.7 GB before a loader refused
it). `read_npz` adds the shapes a loader expects, checked on the headers too.
"""
from __future__ import annotations

import io
import lzma
import math
import os
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import array_cache
from .errors import ModelError

MAX_RATIO = 100             # most a member may inflate (the shipped arrays: at most 7)
RATIO_FLOOR = 8 * 2**20     # members up to this size are not held to MAX_RATIO


def save_npz(path: str | Path, **arrays: np.ndarray) -> None:
    """Write `arrays` to `path` (a .npz that `numpy.load` opens), atomically; the
    same arrays always give the same bytes."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_LZMA) as z:
        for name, a in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asanyarray(a), allow_pickle=False)
            # a fixed date: the same arrays give the same bytes (and model version)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_LZMA
            z.writestr(info, buf.getvalue())
    os.replace(tmp, path)


def _header(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[tuple[int, ...], np.dtype,
                                                               int]:
    """(shape, dtype, header bytes) of member `info`, read without its data."""
    with z.open(info) as fp:
        major, _ = np.lib.format.read_magic(fp)
        read = (np.lib.format.read_array_header_1_0 if major == 1
                else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read(fp)
        return tuple(int(d) for d in shape), dtype, fp.tell()


def check_npz(path: str | Path, expect: Mapping[str, tuple[int, ...]] | None = None
              ) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Array name -> (shape, dtype) of the npz at `path`, after the checks above (and
    that each array of `expect` is there with that shape); a `ModelError` naming the
    file, the array and what is wrong with it otherwise. Decompresses headers only."""
    return _inspect(path, expect)[0]


def _inspect(path: str | Path, expect: Mapping[str, tuple[int, ...]] | None
             ) -> tuple[dict[str, tuple[tuple[int, ...], np.dtype]], bool]:
    """`check_npz`'s answer, and whether any member is LZMA-compressed."""
    path = Path(path)
    try:
        z = zipfile.ZipFile(path)
    except FileNotFoundError as exc:
        raise ModelError(f"{path} is missing") from exc
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        size = path.stat().st_size if path.exists() else 0
        raise ModelError(f"{path} is not a readable npz (zip) file ({exc}; {size:,} bytes: "
                         "truncated or damaged?)") from exc
    out: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    with z:
        lzma_members = any(i.compress_type == zipfile.ZIP_LZMA for i in z.infolist())
        for info in z.infolist():
            if not info.filename.endswith(".npy"):
                continue
            name = info.filename[:-4]
            where = f"{path}: array {name!r}"
            if info.file_size > RATIO_FLOOR and \
                    info.file_size > MAX_RATIO * max(1, info.compress_size):
                raise ModelError(f"{where} would inflate from {info.compress_size:,} to "
                                 f"{info.file_size:,} bytes, over {MAX_RATIO} times: "
                                 "refused unread (no model array compresses so well)")
            try:
                shape, dtype, offset = _header(z, info)
            except (ValueError, OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError,
                    zlib.error, NotImplementedError) as exc:
                raise ModelError(f"{where} has no readable npy header: {exc}") from exc
            if dtype.hasobject:
                raise ModelError(f"{where} holds Python objects ({dtype}): refused, "
                                 "a model's arrays are numbers")
            nbytes = math.prod(shape) * dtype.itemsize
            if offset + nbytes != info.file_size:
                raise ModelError(f"{where}: its header says {shape} of {dtype} "
                                 f"({nbytes:,} bytes), but the file holds "
                                 f"{info.file_size - offset:,} bytes of data")
            out[name] = (shape, dtype)
    for name, shape in (expect or {}).items():
        if name not in out:
            raise ModelError(f"{path} has no array {name!r}")
        if tuple(out[name][0]) != tuple(shape):
            raise ModelError(f"{path}: array {name!r} has shape {out[name][0]}, expected "
                             f"{tuple(shape)}")
    return out, lzma_members


def read_npz(path: str | Path, expect: Mapping[str, tuple[int, ...]] | None = None
             ) -> dict[str, np.ndarray]:
    """Every array of the npz at `path`, once `check_npz(path, expect)` passed; data
    that turns out damaged (a CRC or decompression error) is a `ModelError` naming
    the file and the array too. An LZMA file's arrays come from the decompressed copy
    `array_cache` keeps of it, when it has one (checked against the same headers)."""
    shapes, lzma_members = _inspect(path, expect)
    key = array_cache.file_key(path) if lzma_members else None
    if key is not None:
        got = array_cache.load(key, list(shapes))
        if got is not None:
            if all(got[n].shape == s and got[n].dtype == d for n, (s, d) in shapes.items()):
                return got
            array_cache.drop(key)             # not this file's arrays: written anew below
    out = {}
    with np.load(path, allow_pickle=False) as z:
        for name in z.files:
            try:
                out[name] = z[name]
            except (ValueError, OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError,
                    zlib.error) as exc:
                raise ModelError(f"{path}: array {name!r} is damaged: {exc}") from exc
    if key is not None:
        array_cache.store(key, out)
    return out
