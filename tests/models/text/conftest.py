"""Fixtures for the text front-end tests: a tiny EWT excerpt and the shipped model."""
from __future__ import annotations

import os

import pytest

from models.text._conllu import read_conllu

HERE = os.path.dirname(__file__)
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SHIPPED = os.path.join(ROOT, "models", "pretrained", "en_ewt", "frontend")


@pytest.fixture(scope="session")
def tiny():
    return read_conllu(os.path.join(HERE, "data", "tiny.conllu"))


@pytest.fixture(scope="session")
def tiny_tuples(tiny):
    return [[(w.form, w.upos, w.xpos, w.lemma, w.feats) for w in s.words] for s in tiny]


@pytest.fixture(scope="session")
def shipped_dir():
    if not os.path.exists(os.path.join(SHIPPED, "tagger", "tagger.json")):
        pytest.skip("no shipped front-end model under models/pretrained/en_ewt/frontend")
    return SHIPPED
