"""Brown clusters in the graph parser's arc templates (`encode`'s A_CLASS column)."""
from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.conllu import read_conllu, write_conllu
from models.graph.encode import A_CLASS, A_LEMMA, encode
from models.graph.model import GraphModel
from models.text.wordclasses import WordClasses

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT.parent / "shared" / "data" / "en_ewt"
TAGGER = ROOT / "models" / "pretrained" / "en_ewt" / "frontend" / "tagger"


def _deptree(*args):
    return subprocess.run([sys.executable, "-m", "deptree.cli", *args], capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def table() -> WordClasses:
    return WordClasses.build(
        clusters={"cat": 0b1011, "dog": 0b1011, "Chicago": 0b1101},
        lemmas={p: frozenset() for p in ("noun", "verb", "adj", "adv")},
        irregular={p: frozenset() for p in ("noun", "verb", "adj", "adv")},
        rules={p: [] for p in ("noun", "verb", "adj", "adv")}, source="test table")


def test_without_clusters_the_class_column_is_the_lemma():
    """A model without clusters reads exactly the lemma features it always read."""
    enc = encode(["The", "cats", "ran"], ["the", "cat", "run"], ["DET", "NOUN", "VERB"],
                 ["DT", "NNS", "VBD"])
    assert np.array_equal(enc.attrs[:, A_CLASS], enc.attrs[:, A_LEMMA])


def test_clustered_words_share_a_class_and_others_keep_their_lemma(table):
    forms = ["cat", "dog", "Cat", "sat", "CHICAGO", "Chicago"]
    clusters = table.clusters(forms)
    assert list(clusters) == [0b1011, 0b1011, 0b1011, 0, 0, 0b1101]  # lowercase fallback
    assert [table.cluster(f) for f in forms] == list(clusters)
    enc = encode(forms, None, ["NOUN"] * 6, ["NN"] * 6, clusters)
    cls, lem = enc.attrs[1:, A_CLASS], enc.attrs[1:, A_LEMMA]
    assert cls[0] == cls[1] == cls[2] and cls[0] != lem[0]      # cat, dog, Cat: one class
    assert cls[3] == lem[3] and cls[4] == lem[4]                  # unclustered: the lemma
    assert cls[5] not in (cls[0], lem[5])


def test_clusters_of_an_empty_sentence_and_an_empty_table(table):
    assert table.clusters([]).shape == (0,)
    empty = WordClasses.build({}, {p: frozenset() for p in ("noun", "verb", "adj", "adv")},
                              {p: frozenset() for p in ("noun", "verb", "adj", "adv")},
                              {p: [] for p in ("noun", "verb", "adj", "adv")}, source="none")
    assert list(empty.clusters(["cat", ""])) == [0, 0]


@pytest.mark.skipif(not (DATA / "train.conllu").exists() or not TAGGER.is_dir(),
                    reason="treebank or shipped tagger not found")
def test_a_model_trained_with_clusters_saves_loads_and_parses_with_them(tmp_path):
    """`deptree train-graph --word-classes DIR`: the clusters are saved beside the weights,
    loaded with them, and change the features (the same model without them parses
    with other scores)."""
    write_conllu(itertools.islice(read_conllu(DATA / "train.conllu"), 150),
                 tmp_path / "train.conllu")
    r = _deptree("train-graph", "--data", str(tmp_path / "train.conllu"), "--out",
                 str(tmp_path / "m"), "--order", "2", "--epochs", "1", "--pruner-epochs", "1",
                 "--label-epochs", "1", "--log2-size", "16", "--gold-tags",
                 "--word-classes", str(TAGGER))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m" / "wordclasses.npz").exists()
    model = GraphModel.load(tmp_path / "m")
    assert model.meta["word_classes"] is True
    assert model.meta["train_config"]["word_classes"] == str(TAGGER)
    assert model.word_classes == WordClasses.load(str(TAGGER))
    s = next(iter(read_conllu(DATA / "dev.conllu")))
    w = s.words
    args = ([x.form for x in w], [x.lemma for x in w], [x.upos for x in w], [x.xpos for x in w])
    with_clusters = model.parse(*args, decoder="mst")
    assert len(with_clusters.heads) == len(w)
    model.word_classes = None
    assert model.parse(*args, decoder="mst").score != pytest.approx(with_clusters.score)


def test_missing_cluster_file_is_a_clear_error(tmp_path):
    (tmp_path / "t.conllu").write_text("1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n\n")
    r = _deptree("train-graph", "--data", str(tmp_path / "t.conllu"), "--out", str(tmp_path / "m"),
                 "--word-classes", str(tmp_path / "nowhere"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "nowhere" in r.stderr


def test_a_model_missing_its_cluster_file_is_refused(tmp_path):
    """model.json says clusters, the file is gone: a ModelError naming it."""
    import json

    from models.errors import ModelError

    rng = np.random.default_rng(0)
    m = GraphModel(1, rng.standard_normal(1 << 10).astype(np.float32), ["root", "dep"],
                   np.zeros(16, np.float32))
    m.save(tmp_path)
    meta = json.loads((tmp_path / "model.json").read_text())
    meta["word_classes"] = True
    (tmp_path / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="wordclasses.npz"):
        GraphModel.load(tmp_path)
