"""End to end on real data: train a tiny model, parse with it from the CLI, evaluate."""
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.conllu import read_conllu, write_conllu
from models.graph.model import GraphModel
from models.tree import is_valid_tree

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "en_ewt"
pytestmark = pytest.mark.skipif(not (DATA / "train.conllu").exists(),
                                reason=f"treebank not found at {DATA}")


def _deptree(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "deptree.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    write_conllu(itertools.islice(read_conllu(DATA / "train.conllu"), 250), d / "train.conllu")
    write_conllu(itertools.islice(read_conllu(DATA / "dev.conllu"), 40), d / "dev.conllu")
    r = _deptree("train-graph", "--data", str(d / "train.conllu"), "--dev", str(d / "dev.conllu"),
                 "--out", str(d / "model"), "--order", "3", "--epochs", "2",
                 "--pruner-epochs", "2", "--label-epochs", "2", "--log2-size", "18")
    assert r.returncode == 0, r.stderr
    return d


def test_tiny_model_files(tiny):
    model = GraphModel.load(tiny / "model")
    assert model.order == 3
    assert "root" in model.labels
    assert model.pruner is not None
    assert (tiny / "model" / "checkpoints" / "checkpoint-order3.npz").exists()


@pytest.mark.parametrize("decoder", ["greedy", "mst"])
def test_tiny_model_parses_and_evaluates(tiny, decoder):
    budget = ["--restarts", "10", "--converge", "3"] if decoder == "greedy" else []
    r = _deptree("parse", "--model", str(tiny / "model"), "--decoder", decoder, "--gold-tags",
                 *budget, "--file", str(tiny / "dev.conllu"))
    assert r.returncode == 0, r.stderr
    (tiny / f"pred-{decoder}.conllu").write_text(r.stdout)
    for sent in read_conllu(tiny / f"pred-{decoder}.conllu"):
        heads = sent.heads()
        assert is_valid_tree(heads)
        assert all(w.deprel not in ("", "_") for w in sent.words)
        assert sum(w.deprel == "root" for w in sent.words) == 1
    ev = _deptree("evaluate", "--json", str(tiny / "dev.conllu"),
                  str(tiny / f"pred-{decoder}.conllu"))
    assert ev.returncode == 0, ev.stderr
    uas = json.loads(ev.stdout)["UAS"]["f1"]
    assert uas > 0.5  # a model trained on 250 sentences is far from random (~0.1)


def test_parse_is_deterministic(tiny):
    args = ("parse", "--model", str(tiny / "model"), "--gold-tags", "--seed", "3",
            "--file", str(tiny / "dev.conllu"))
    assert _deptree(*args).stdout == _deptree(*args).stdout


def test_training_resumes_from_checkpoint(tiny, tmp_path):
    """A rerun into the same directory picks up the finished epochs instead of redoing them."""
    r = _deptree("-v", "train-graph", "--data", str(tiny / "train.conllu"),
                 "--out", str(tiny / "model"),
                 "--order", "3", "--epochs", "2", "--pruner-epochs", "2", "--label-epochs", "2",
                 "--log2-size", "18")
    assert r.returncode == 0, r.stderr
    assert "resuming checkpoint-order3.npz after epoch 1" in r.stderr


def test_cycle_in_gold_training_data_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("# sent_id = 1\n1\ta\ta\tX\tX\t_\t2\tdep\t_\t_\n"
                   "2\tb\tb\tX\tX\t_\t1\tdep\t_\t_\n\n")
    r = _deptree("train-graph", "--data", str(bad), "--out", str(tmp_path / "m"), "--order", "1")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert "bad.conllu:" in r.stderr and "cycle" in r.stderr.lower()


def test_malformed_parse_input_is_a_clear_error(tiny):
    r = _deptree("parse", "--model", str(tiny / "model"), "--gold-tags",
                 stdin="1\tword\tword\tNOUN\tNN\t_\tx\tdep\t_\t_\n\n")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert ":1:" in r.stderr and "HEAD" in r.stderr


def test_mst_score_is_finite_on_the_shipped_model():
    """Regression: mst over all arcs of the pruner could pick an arc the full model had
    pruned, and its score was -inf (a 500 from /parse: JSON has no infinity)."""
    import math

    from models.graph.encode import encode
    from models.serve.pipeline import Pipeline

    graph = Pipeline.load("en_ewt").graph
    sents = list(itertools.islice(read_conllu(DATA / "dev.conllu"), 120))
    for s in sents:
        w = s.words
        enc = encode([x.form for x in w], [x.lemma for x in w], [x.upos for x in w],
                     [x.xpos for x in w])
        res = graph.decode(enc, "mst", {})
        assert math.isfinite(res.score), s.text
        assert is_valid_tree(res.heads)


def test_relabel_keeps_the_arcs_and_retrains_the_labeler(tiny, tmp_path):
    """`train --relabel-from`: arc and pruner weights copied bit for bit (same trees),
    a new labeler, and the record of how it was trained."""
    out = tmp_path / "relabelled"
    r = _deptree("train-graph", "--data", str(tiny / "train.conllu"), "--out", str(out),
                 "--relabel-from", str(tiny / "model"), "--label-epochs", "3")
    assert r.returncode == 0, r.stderr
    before = np.load(tiny / "model" / "weights.npz")
    after = np.load(out / "weights.npz")
    for name in ("main_idx", "main_val", "pruner_idx", "pruner_val"):
        assert np.array_equal(before[name], after[name]), name
    old, new = GraphModel.load(tiny / "model"), GraphModel.load(out)
    assert new.labels == old.labels
    assert not np.array_equal(old.label_weights, new.label_weights)
    meta = new.meta["labeler_training"]
    assert meta["label_epochs"] == 3 and meta["command"].startswith("deptree train")
    for s in itertools.islice(read_conllu(tiny / "dev.conllu"), 10):
        w = s.words
        parsed = [m.parse([x.form for x in w], [x.upos for x in w], [x.xpos for x in w],
                          [x.lemma for x in w], "mst") for m in (old, new)]
        assert parsed[0].heads == parsed[1].heads


def test_a_labeler_of_older_features_is_refused_with_the_fix(tiny, tmp_path):
    import json
    import shutil

    from models.errors import ModelError

    old = tmp_path / "old"
    shutil.copytree(tiny / "model", old, ignore=shutil.ignore_patterns("checkpoints"))
    meta = json.loads((old / "model.json").read_text())
    del meta["label_feature_set"]                    # as written before label-v2
    (old / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="relabel-from"):
        GraphModel.load(old)
    assert GraphModel.load(old, labeler=False).order == 3   # the arcs still load
    r = _deptree("parse", "--model", str(old), "--gold-tags", "--file",
                 str(tiny / "dev.conllu"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and "relabel-from" in r.stderr


def test_relabel_refuses_relations_the_model_does_not_know(tiny, tmp_path):
    data = tmp_path / "odd.conllu"
    data.write_text("# sent_id = 1\n1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n"
                    "2\t!\t!\tPUNCT\t.\t_\t1\tnot_a_relation\t_\t_\n\n")
    r = _deptree("train-graph", "--data", str(data), "--out", str(tmp_path / "m"),
                 "--relabel-from", str(tiny / "model"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "not_a_relation" in r.stderr
