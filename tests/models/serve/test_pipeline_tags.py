"""Re-tagging by the parser (`Pipeline.choose_tags`): where the tagger hesitates the
first-order parser may keep the second-best tag; only hesitant words change."""
from __future__ import annotations

import os
from dataclasses import replace
from itertools import islice
from pathlib import Path

import pytest

from models.conllu import read_conllu
from models.serve.pipeline import Pipeline
from models.serve.pipeline_config import TagFlips

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def pipe(model_dirs):
    from models.serve.registry import resolve

    return Pipeline.load(resolve("en_ewt", search_dirs=[Path(d) for d in model_dirs]))


@pytest.fixture(scope="module")
def sentences():
    ewt = os.environ.get("DEPTREE_EWT_DIR", ROOT.parent / "shared" / "data" / "en_ewt")
    path = Path(ewt) / "dev.conllu"
    if not path.exists():
        pytest.skip("en_ewt dev not present")
    return [[w.form for w in s.words] for s in islice(read_conllu(str(path)), 200)]


def test_off_gives_the_taggers_tags(pipe, sentences, monkeypatch):
    monkeypatch.setattr(pipe.tagging, "flips", replace(pipe.tagging.flips, flips=0))
    for forms in sentences[:50]:
        assert pipe.choose_tags(forms, "fast") == pipe.tag(forms, "fast")


def _on(pipe, monkeypatch) -> None:
    """Re-tagging on, as the default config has it: the build's calibration turns it
    off for a model where it does not help on dev (the shipped en_ewt's)."""
    monkeypatch.setattr(pipe.tagging, "flips", replace(pipe.tagging.flips,
                                                       flips=TagFlips().flips))


def test_only_hesitant_words_change(pipe, sentences, monkeypatch):
    _on(pipe, monkeypatch)
    flips, tau = pipe.tagging.flips.flips, pipe.tagging.flips.margin
    changed = 0
    for forms in sentences:
        best, second, margin = pipe.tagger.alternatives(forms)
        up, xp, _ = pipe.choose_tags(forms, "fast")
        base_up, base_xp, _ = pipe.tag(forms, "fast")
        diff = [i for i in range(len(forms)) if (up[i], xp[i]) != (base_up[i], base_xp[i])]
        assert len(diff) <= flips
        for i in diff:
            assert margin[i] < tau and (up[i], xp[i]) == pipe.tagger.classes[second[i]]
        assert pipe.choose_tags(forms, "fast")[:2] == (up, xp)  # deterministic
        changed += bool(diff)
    assert changed > 0


def test_used_by_greedy_not_by_mst(pipe, sentences, monkeypatch):
    _on(pipe, monkeypatch)
    calls = []
    real = pipe.tagging.choose_tags
    monkeypatch.setattr(pipe.tagging, "choose_tags",
                        lambda forms, tagger="fast", deadline=None:
                        calls.append(1) or real(forms, tagger, deadline))
    # the fast tagger's re-tagging (`_on`; the contextual default has its own settings)
    pipe.parse_words(sentences[0], "mst", {}, tagger="fast")
    assert not calls
    pipe.parse_words(sentences[0], "greedy", {}, tagger="fast")
    assert calls
