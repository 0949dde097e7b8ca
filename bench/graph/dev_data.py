"""What the graph benchmarks share: en_ewt dev (a seeded random subset), the machine
they ran on, the graph model's encodings of gold-tagged sentences, a timed parse of
them (UAS, LAS, tokens/s) and a pipeline's parse of dev scored by `models.build.evaluate`."""
from __future__ import annotations

import copy
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

from models.build.evaluate import evaluate_sentences
from models.conllu import read_conllu
from models.graph.model import GraphModel
from models.serve.registry import resolve

HERE = Path(__file__).resolve().parent
SHIPPED_GRAPH = "models/pretrained/en_ewt/graph"
DEV = HERE.parents[1].parent / "shared" / "data" / "en_ewt" / "dev.conllu"


def machine() -> str:
    cpu = "unknown cpu"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return f"{platform.machine()}, {cpu}, {subprocess.getoutput('nproc')} cores"


def graph_model(name_or_path: str) -> GraphModel:
    """The graph model of a model (name or directory), or of a graph model's own
    directory: only the parser, none of the front-end."""
    d = resolve(name_or_path)
    return GraphModel.load(d / "graph" if (d / "graph").is_dir() else d)


def load_dev(path: Path, limit: int | None):
    sents = list(read_conllu(path))
    if limit:
        rng = np.random.default_rng(0)
        idx = sorted(rng.choice(len(sents), size=min(limit, len(sents)), replace=False))
        sents = [sents[i] for i in idx]
    return sents


def encoded(sents, model):
    """(sentence, the model's encoding of its gold tokens, tags and lemmas)."""
    out = []
    for s in sents:
        w = s.words
        out.append((s, model.encode([x.form for x in w], [x.lemma for x in w],
                                    [x.upos for x in w], [x.xpos for x in w])))
    return out


def run(model, data, decoder, budget):
    """Parse every sentence; return (uas, las, uas_nopunct, tokens/s, results)."""
    tok = correct = lcorrect = 0
    np_tok = np_correct = 0
    results = []
    t0 = time.perf_counter()
    for sent, enc in data:
        dec = model.decode(enc, decoder, budget)
        labels = model.label(enc, dec.heads)
        results.append(dec)
        for i, w in enumerate(sent.words, 1):
            ok = dec.heads[i] == w.head
            tok += 1
            correct += ok
            lcorrect += ok and labels[i - 1] == w.deprel
            if w.upos != "PUNCT":
                np_tok += 1
                np_correct += ok
    secs = time.perf_counter() - t0
    return (100.0 * correct / tok, 100.0 * lcorrect / tok, 100.0 * np_correct / np_tok,
            tok / secs, secs / tok, results)


def warm(model, data):
    for _, enc in data[:5]:
        model.decode(enc, "greedy", {"restarts": 3, "converge": 2})
        model.decode(enc, "mst", {})


def parse_dev(pipe, sents, decoder: str, budget: dict, gold_tags: bool, tagger: str):
    """(models.build.evaluate report, process seconds) of the pipeline's parses of copies of
    `sents`: with their gold tags, or tagged by `tagger` as the pipeline does."""
    preds = []
    t0 = time.process_time()
    for sent in sents:
        pred = copy.deepcopy(sent)
        if gold_tags:      # the tagger still chooses the view (its parts), as a request's
            w = pred.words
            tree = pipe.parse_words([x.form for x in w], decoder, budget, tagger=tagger,
                                    upos=[x.upos for x in w], xpos=[x.xpos for x in w],
                                    lemmas=[x.lemma for x in w])
            pred.set_tree([-1] + [t.head for t in tree.tokens],
                          [""] + [t.deprel for t in tree.tokens])
        else:
            pipe.parse_conllu(pred, decoder, budget, tagger=tagger)
        preds.append(pred)
    seconds = time.process_time() - t0
    return evaluate_sentences(sents, preds, validate=False), seconds
