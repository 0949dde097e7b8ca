"""models.npz: LZMA npz files that numpy.load reads, byte for byte repeatable, and read
back within bounds."""
import io
import shutil
import time
import zipfile

import numpy as np
import pytest

from models.errors import ModelError
from models.npz import check_npz, read_npz, save_npz
from tests.models.model_copies import zeros_npz


def test_numpy_loads_what_save_npz_writes(tmp_path):
    gaps = np.arange(1000, dtype=np.uint32) % 7
    value = np.linspace(-1, 1, 1000).astype(np.float16)
    save_npz(tmp_path / "w.npz", gaps=gaps, value=value)
    with np.load(tmp_path / "w.npz", allow_pickle=False) as z:
        assert sorted(z.files) == ["gaps", "value"]
        assert z["gaps"].dtype == np.uint32 and np.array_equal(z["gaps"], gaps)
        assert z["value"].dtype == np.float16 and np.array_equal(z["value"], value)
    with zipfile.ZipFile(tmp_path / "w.npz") as z:
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_LZMA}
    assert not (tmp_path / "w.npz.tmp").exists()


def test_the_same_arrays_give_the_same_bytes(tmp_path):
    a = np.random.default_rng(0).integers(0, 50, 5000).astype(np.uint32)
    save_npz(tmp_path / "a.npz", a=a)
    save_npz(tmp_path / "b.npz", a=a.copy())
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


# ---- issue 61, defects 2 and 4: npz files of a model directory are read within bounds ----
def test_a_truncated_npz_names_the_file_and_says_what_is_wrong(tmp_path):
    path = tmp_path / "weights.npz"
    save_npz(path, a=np.random.default_rng(0).normal(size=200_000))
    with open(path, "r+b") as f:
        f.truncate(500_000)
    with pytest.raises(ModelError, match=r"weights\.npz is not a readable npz .*truncated"):
        check_npz(path)


def test_an_array_that_inflates_a_thousand_times_is_refused_unread(tmp_path):
    path = tmp_path / "weights.npz"
    zeros_npz(path)
    assert path.stat().st_size < 2**20
    t0 = time.process_time()
    with pytest.raises(ModelError, match="'gaps' would inflate from .* over 100 times"):
        read_npz(path)
    assert time.process_time() - t0 < 1.0            # headers only: nothing inflated


def test_a_header_that_disagrees_with_its_member_is_refused(tmp_path):
    path = tmp_path / "w.npz"
    with zipfile.ZipFile(path, "w") as z:
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            buf, {"descr": "<f8", "fortran_order": False, "shape": (10**9,)})
        z.writestr("big.npy", buf.getvalue() + bytes(80))
    with pytest.raises(ModelError, match=r"'big': its header says \(1000000000,\) of float64"
                                         r" \(8,000,000,000 bytes\), but the file holds 80"):
        read_npz(path)


def test_object_arrays_are_refused(tmp_path):
    path = tmp_path / "w.npz"
    np.savez(path, o=np.array([{"a": 1}, None], dtype=object))
    with pytest.raises(ModelError, match="'o' holds Python objects"):
        read_npz(path)


def test_the_shapes_a_loader_expects(tmp_path):
    path = tmp_path / "w.npz"
    save_npz(path, gaps=np.zeros(10, np.uint32), value=np.zeros(10, np.float16))
    assert read_npz(path, {"gaps": (10,)})["value"].shape == (10,)
    with pytest.raises(ModelError, match=r"'gaps' has shape \(10,\), expected \(5,\)"):
        read_npz(path, {"gaps": (5,)})
    with pytest.raises(ModelError, match="has no array 'other'"):
        check_npz(path, {"other": (1,)})


def test_damaged_data_names_the_file_and_the_array(tmp_path):
    path = tmp_path / "w.npz"
    save_npz(path, a=np.random.default_rng(1).normal(size=100_000))
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match=r"w\.npz: array 'a' is damaged"):
        read_npz(path)


# ---- the decompressed copies of LZMA files (models/array_cache.py) ----
@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("DEPTREE_ARRAY_CACHE", str(root))
    return root


def test_an_lzma_file_is_read_once_then_from_its_decompressed_copy(tmp_path, cache,
                                                                   monkeypatch):
    a = np.random.default_rng(0).integers(0, 50, 5000).astype(np.uint32)
    b = np.linspace(-1, 1, 300).astype(np.float16).reshape(3, 100)
    save_npz(tmp_path / "w.npz", a=a, b=b)
    first = read_npz(tmp_path / "w.npz")
    (entry,) = [e for e in cache.iterdir() if not e.name.startswith(".")]
    assert sorted(f.name for f in entry.iterdir()) == ["a.npy", "b.npy", "complete"]

    def no_zip(*args, **kw):
        raise AssertionError("decompressed the model file again")
    monkeypatch.setattr(np, "load", _only_npy(np.load, no_zip))
    again = read_npz(tmp_path / "w.npz")
    for name, want in (("a", a), ("b", b)):
        assert again[name].dtype == want.dtype and np.array_equal(again[name], want)
        assert np.array_equal(first[name], want)


def _only_npy(load, refuse):
    """np.load that refuses .npz files (the model file) and loads the rest."""
    def guarded(path, *args, **kw):
        return refuse() if str(path).endswith(".npz") else load(path, *args, **kw)
    return guarded


def test_a_changed_file_is_read_anew_and_a_copy_shares_the_entry(tmp_path, cache):
    save_npz(tmp_path / "w.npz", a=np.arange(10))
    read_npz(tmp_path / "w.npz")
    save_npz(tmp_path / "w.npz", a=np.arange(10) * 2)
    assert np.array_equal(read_npz(tmp_path / "w.npz")["a"], np.arange(10) * 2)
    (tmp_path / "copy.npz").write_bytes((tmp_path / "w.npz").read_bytes())
    assert np.array_equal(read_npz(tmp_path / "copy.npz")["a"], np.arange(10) * 2)
    assert len([e for e in cache.iterdir() if not e.name.startswith(".")]) == 2


def test_a_damaged_or_unwritable_cache_is_a_miss_never_an_error(tmp_path, cache):
    save_npz(tmp_path / "w.npz", a=np.arange(1000))
    read_npz(tmp_path / "w.npz")
    (entry,) = list(cache.iterdir())
    (entry / "a.npy").write_bytes(b"\x93NUMPY garbage")            # damaged
    assert np.array_equal(read_npz(tmp_path / "w.npz")["a"], np.arange(1000))
    (entry / "a.npy").unlink()                                     # incomplete
    assert np.array_equal(read_npz(tmp_path / "w.npz")["a"], np.arange(1000))
    assert (entry / "a.npy").is_file()                             # written anew
    np.save(entry / "a.npy", np.arange(7))                         # other shape
    assert np.array_equal(read_npz(tmp_path / "w.npz")["a"], np.arange(1000))
    assert np.load(entry / "a.npy").shape == (1000,)               # written anew
    (entry / "complete").unlink()                                  # never completed
    assert np.array_equal(read_npz(tmp_path / "w.npz")["a"], np.arange(1000))
    assert (entry / "complete").is_file()                          # written anew
    shutil.rmtree(cache)
    cache.write_text("a file where the cache's directory should be")   # unwritable
    assert np.array_equal(read_npz(tmp_path / "w.npz")["a"], np.arange(1000))


def test_deflate_files_and_a_cache_turned_off_are_read_as_before(tmp_path, cache,
                                                                 monkeypatch):
    np.savez_compressed(tmp_path / "d.npz", a=np.arange(10))
    assert np.array_equal(read_npz(tmp_path / "d.npz")["a"], np.arange(10))
    assert not cache.exists()
    monkeypatch.setenv("DEPTREE_ARRAY_CACHE", "off")
    save_npz(tmp_path / "w.npz", a=np.arange(10))
    assert np.array_equal(read_npz(tmp_path / "w.npz")["a"], np.arange(10))
    assert not cache.exists()


def test_the_cache_keeps_to_its_size_the_oldest_used_leaving_first(tmp_path, cache,
                                                                   monkeypatch):
    import os

    from models import array_cache

    monkeypatch.setattr(array_cache, "MAX_BYTES", 2_500_000)
    for k in range(3):                                    # about 0.8 MB each
        save_npz(tmp_path / f"w{k}.npz", a=np.full(100_000, k, np.int64))
        read_npz(tmp_path / f"w{k}.npz")
        entry = cache / array_cache.file_key(tmp_path / f"w{k}.npz")
        os.utime(entry / array_cache.DONE, (1000 + k, 1000 + k))
    read_npz(tmp_path / "w0.npz")                         # used now: w1 is the oldest
    save_npz(tmp_path / "w3.npz", a=np.full(100_000, 3, np.int64))
    read_npz(tmp_path / "w3.npz")
    left = {e.name for e in cache.iterdir()}
    keys = [array_cache.file_key(tmp_path / f"w{k}.npz") for k in range(4)]
    assert left == {keys[0], keys[2], keys[3]}
