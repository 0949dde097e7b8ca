"""models.npz: LZMA npz files that numpy.load reads, byte for byte repeatable."""
import zipfile

import numpy as np

from models.npz import save_npz


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
