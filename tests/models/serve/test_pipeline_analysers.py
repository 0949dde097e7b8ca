"""A request's `analysers`: the first k analysers of a model's ensemble, the same
answers as a model of those analysers alone with the same calibrated settings."""
from __future__ import annotations

import shutil

import pytest

from models.decoders import BudgetError
from models.serve.pipeline import Pipeline

SENTENCES = [["The", "forces", "killed", "him", "near", "the", "border", "."],
             ["They", "left", "early", "on", "Monday", "."]]


@pytest.fixture(scope="module")
def pipes(built_model, tmp_path_factory):
    """The tiny model (two analysers) and a copy of it without its second analyser."""
    alone = tmp_path_factory.mktemp("alone") / "tiny"
    shutil.copytree(built_model, alone)
    shutil.rmtree(alone / "neural" / "member-2")
    return Pipeline.load(built_model), Pipeline.load(alone)


def _parse(pipe, budget, decoder="greedy", tagger="accurate"):
    out = []
    for forms in SENTENCES:
        t = pipe.parse_words(forms, decoder, dict(budget), tagger=tagger)
        out.append(([x.head for x in t.tokens], [x.deprel for x in t.tokens],
                    [x.upos for x in t.tokens], [x.feats for x in t.tokens], t.stats))
    return out


def test_the_first_analyser_alone_answers_as_a_model_of_it_alone(pipes):
    both, alone = pipes
    assert (both.analysers, alone.analysers) == (2, 1)
    for decoder in ("greedy", "mst", "selectional"):
        one = _parse(both, {"analysers": 1, "seed": 3} if decoder == "greedy" else
                     {"analysers": 1}, decoder)
        ref = _parse(alone, {"seed": 3} if decoder == "greedy" else {}, decoder)
        assert [r[:4] for r in one] == [r[:4] for r in ref], decoder
        assert all(r[4]["analysers"] == 1 for r in one if r[4].get("tagger") == "accurate")
    full = _parse(both, {})
    assert all(r[4]["analysers"] == 2 for r in full)
    assert [r[:4] for r in _parse(both, {"analysers": 2})] == [r[:4] for r in full]


def test_analysers_is_a_budget_field_of_every_decoder_of_an_ensemble(pipes):
    both, alone = pipes
    for name, d in both.decoders().items():
        assert "analysers" in d["fields"], name
        p = d["params"]["analysers"]
        assert (p["lo"], p["hi"], p["default"], p["nullable"]) == (1, 2, None, True)
    assert all("analysers" not in d["fields"] for d in alone.decoders().values())
    forms = SENTENCES[1]
    for bad in (0, 3, 1.0, "1", True):
        with pytest.raises(BudgetError, match=r"analysers must be an integer in \[1, 2\]"):
            both.parse_words(forms, "greedy", {"analysers": bad})
    with pytest.raises(BudgetError, match="does not average several") as err:
        alone.parse_words(forms, "greedy", {"analysers": 1})
    assert err.value.code == "field_not_applicable"
    # the fast tagger with no neural scores: the field is accepted, and nothing is analysed
    fast = both.parse_words(forms, "greedy", {"analysers": 1, "neural": 0}, tagger="fast")
    assert "analysers" not in fast.stats


def test_analyze_ahead_runs_only_the_chosen_analysers(pipes):
    both, _ = pipes
    first, second = both.analyser.members
    forms = [["A", "new", "sentence", "nobody", "analysed", "."]]
    both.analyze_ahead(forms, "accurate", {"analysers": 1})
    assert tuple(forms[0]) in first._recent and tuple(forms[0]) not in second._recent
    both.analyze_ahead(forms, "accurate", {})
    assert tuple(forms[0]) in second._recent
