"""Selectional branching on a small model trained here (300 EWT sentences), the model
file round trip and the serving API (`load`, `decode`, budget validation)."""
import json
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from models.conllu import read_conllu
from models.errors import ModelError
from models.graph.decoders import BudgetError
from models.transition import model as tm
from models.transition.train import _encode, evaluate, train
from models.tree import is_valid_tree, root_children


@pytest.fixture(scope="module")
def ewt(data_dir):
    path = data_dir / "en_ewt" / "train.conllu"
    if not path.exists():
        pytest.skip("en_ewt not present")
    return path


@pytest.fixture(scope="module")
def small(ewt, tmp_path_factory):
    d = tmp_path_factory.mktemp("transition")
    head = list(islice(read_conllu(str(ewt)), 500))
    model = train(head[:300], None, str(d), epochs=2, n_rows=1 << 16, alpha=0.05)
    sents = head[300:]
    return model, d, sents, [_encode(s) for s in sents]


def test_beam_one_is_greedy_and_never_branches(small):
    model, _, _sents, attrs = small
    for a in attrs[:50]:
        heads, _labels, score, stats = model.parse_encoded(a, beam=1, margin=1.0)
        assert stats["branches"] == 0 and stats["best_sequence"] == 0
        assert is_valid_tree(heads) and len(root_children(heads)) == 1
        assert 0.0 < score <= 1.0


def test_branching_never_lowers_the_winning_score(small):
    model, _, _sents, attrs = small
    branched = 0
    for a in attrs[:60]:
        _, _, s1, st1 = model.parse_encoded(a, beam=1)
        heads, labels, s8, st8 = model.parse_encoded(a, beam=8)
        assert s8 >= s1 - 1e-12
        assert st8["branches"] <= 7 and st8["transitions"] >= st1["transitions"]
        assert st8["branches"] == min(7, st8["low_confidence"])
        assert is_valid_tree(heads) and len(root_children(heads)) == 1
        assert labels[root_children(heads)[0]] == model.root_label
        branched += st8["branches"] > 0
    assert branched > 10


def test_margin_zero_branches_only_on_ties(small):
    model, _, _, attrs = small
    assert all(model.parse_encoded(a, beam=8, margin=0.0)[3]["branches"] == 0
               for a in attrs[:20])


def test_selectional_is_more_accurate_than_greedy_on_held_out(small):
    model, _, sents, attrs = small
    u1 = evaluate(model, sents, attrs, beam=1)[0]
    u8 = evaluate(model, sents, attrs, beam=8)[0]
    assert u1 > 60.0 and u8 >= u1 - 0.5


def test_save_load_round_trip_parses_alike(small):
    model, d, _, attrs = small
    header = json.loads((d / "model.json").read_text())
    assert header["format"] == "deptree-transition" and header["version"] == 1
    assert header["templates"] == list(model.templates) and "root" in header["labels"]
    loaded = tm.load(d)
    for a in attrs[:30]:
        x, y = model.parse_encoded(a, beam=4), loaded.parse_encoded(a, beam=4)
        assert np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1])


def test_decode_api_and_budget(small):
    model, _, sents, _ = small
    s = sents[0]
    w = s.words
    args = ([x.form for x in w], [x.lemma for x in w], [x.upos for x in w], [x.xpos for x in w])
    heads, deprels, _score, stats = tm.decode(model, *args, {"beam": 16, "margin": 0.5})
    assert len(heads) == len(deprels) == len(w) and is_valid_tree([-1] + heads)
    assert stats["beam"] == 16 and stats["margin"] == 0.5 and "transitions" in stats
    assert deprels[heads.index(0)] == "root"
    assert tm.decode(model, *args, None)[3]["beam"] == tm.SPEC.defaults()["beam"]
    for bad in ({"beam": 0}, {"beam": 1025}, {"beam": 2.0}, {"beam": True}, {"margin": -0.1},
                {"margin": 1.5}, {"margin": "x"}):
        with pytest.raises(BudgetError):
            tm.decode(model, *args, bad)


def test_load_errors(tmp_path):
    with pytest.raises(ModelError):
        tm.load(tmp_path)
    (tmp_path / "model.json").write_text(json.dumps({"format": "other", "version": 1}))
    with pytest.raises(ModelError):
        tm.load(tmp_path)


def test_without_pass_moves(data_dir):
    path = data_dir / "nl_lassysmall" / "train.conllu"
    if not path.exists():
        pytest.skip("nl_lassysmall not present")
    sents = list(islice(read_conllu(str(path)), 160))
    model = train(sents[:120], None, None, epochs=1, n_rows=1 << 14, alpha=0.05, passes=False)
    assert not set(model.atype.tolist()) & {4, 5, 6}   # LEFT_PASS, RIGHT_PASS, NO_PASS
    for s in sents[120:]:
        heads, _, _, _stats = model.parse_encoded(_encode(s), beam=4)
        assert is_valid_tree(heads) and len(root_children(heads)) == 1


def test_training_on_jackknifed_tags(ewt):
    sents = list(islice(read_conllu(str(ewt)), 40))
    model = train(sents, None, None, epochs=1, n_rows=1 << 12, jackknife=2)
    assert model.meta["training"]["tags"] == "2-fold jackknifed"
    assert [w.upos for w in sents[0].words] == [w.upos for w in
                                                next(read_conllu(str(ewt))).words]  # untouched


def test_dev_retagged_by_the_shipped_front_end(ewt):
    shipped = Path(__file__).resolve().parents[3] / "models" / "pretrained" / "en_ewt"
    if not (shipped / "frontend").is_dir():
        pytest.skip("no shipped front-end")
    sents = list(islice(read_conllu(str(ewt)), 50))
    model = train(sents[:40], sents[40:], None, epochs=1, n_rows=1 << 12, dev_tagger="en_ewt")
    assert model.meta["training"]["dev_tags"] == "predicted (en_ewt)"
    assert "dev_uas_greedy" in model.meta["training"]


def test_past_deadline_returns_the_one_best_tree(small):
    """A deadline stops the branching, never the one-best sequence: the tree is
    complete and equals greedy's; `deadline_ms` is validated like the graph decoders'."""
    import time

    model, _, sents, attrs = small
    for a in attrs[:20]:
        greedy = model.parse_encoded(a, beam=1)
        heads, _, score, stats = model.parse_encoded(a, beam=8, deadline=time.monotonic() - 1)
        assert is_valid_tree(heads) and (heads == greedy[0]).all() and score == greedy[2]
        assert stats["best_sequence"] == 0
        assert stats["deadline_hit"] == (stats["branches"] > 0)
    s = sents[0]
    forms, upos = [w.form for w in s.words], [w.upos for w in s.words]
    out = tm.decode(model, forms, None, upos, upos, {"beam": 4, "deadline_ms": 1000})
    assert len(out[0]) == len(forms) and out[3]["deadline_hit"] is False
    for bad in (0, -5, "soon", True):
        with pytest.raises(BudgetError):
            tm.decode(model, forms, None, upos, upos, {"deadline_ms": bad})


def _gold_arc_p(sent, sure: float = 1.0) -> np.ndarray:
    """An analyser's P(head | dependent) (head, dependent) that puts `sure` on each gold
    head and spreads the rest evenly over the other words."""
    n = len(sent.words)
    p = np.full((n + 1, n + 1), (1.0 - sure) / max(n - 1, 1))
    p[:, 0] = 0.0
    np.fill_diagonal(p, 0.0)
    for d, w in enumerate(sent.words, 1):
        p[w.head, d] = sure
    return p


def _uas(pairs) -> float:
    right = sum(int(h == w.head) for heads, s in pairs for h, w in zip(heads[1:], s.words))
    return right / sum(len(s.words) for _, s in pairs)


def test_power_zero_or_no_arc_probabilities_is_the_classifier_alone(small):
    model, _, sents, attrs = small
    for s, a in list(zip(sents, attrs))[:40]:
        plain = model.parse_encoded(a, beam=4)
        off = model.parse_encoded(a, beam=4, arc_p=_gold_arc_p(s), power=0.0)
        assert [x.tolist() for x in plain[:2]] == [x.tolist() for x in off[:2]]
        assert plain[2] == off[2]
    with pytest.raises(ValueError, match="arc_p has shape"):
        model.parse_encoded(attrs[0], beam=4, arc_p=np.zeros((2, 2)), power=1.0)


def test_the_analysers_arc_probabilities_steer_the_moves(small):
    """Arc probabilities that know the gold tree lift a weak classifier (300 training
    sentences) close to it, more with a higher power; each parse is still a tree."""
    model, _, sents, attrs = small
    pairs = list(zip(sents, attrs))[:80]
    alone = _uas([(model.parse_encoded(a, beam=4)[0], s) for s, a in pairs])
    soft = [(model.parse_encoded(a, beam=4, arc_p=_gold_arc_p(s, 0.6), power=0.5)[0], s)
            for s, a in pairs]
    hard = [(model.parse_encoded(a, beam=4, arc_p=_gold_arc_p(s), power=4.0)[0], s)
            for s, a in pairs]
    assert all(is_valid_tree(h) and len(root_children(h)) == 1 for h, _ in soft + hard)
    assert alone < _uas(soft) < _uas(hard)
    assert _uas(hard) > 0.99, (alone, _uas(soft), _uas(hard))   # as good as an oracle
