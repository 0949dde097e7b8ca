import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
DATA = Path(os.environ.get("DEPTREE_DATA_DIR", ROOT.parent / "shared" / "data"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def data_dir():
    return DATA
