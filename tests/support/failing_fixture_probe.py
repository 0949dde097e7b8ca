"""Run by tests/test_conftest_cleanup.py in a pytest of its own (the name keeps it out of
the suite): the session `server` fixture of tests/conftest.py fails its setup here,
because the model it is given cannot load (the workers report it, the gateway runs on),
and the fixture must still stop what it started."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory) -> list[str]:
    """An en_ewt whose graph parser is missing: `deptree serve` starts, no worker can."""
    broken = tmp_path_factory.mktemp("broken")
    (broken / "en_ewt" / "graph").mkdir(parents=True)
    (broken / "en_ewt" / "pipeline.json").write_text('{"name": "en_ewt", "graph": "graph"}')
    return [str(broken)]


def test_needs_the_session_server(server):
    raise AssertionError("the server fixture was expected to fail its setup")
