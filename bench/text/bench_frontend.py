"""Benchmark the text front-end on a UD treebank's dev set (default: en_ewt).

Measures
- token F1 from each raw `# text` (gold word spans, multiword tokens split);
- sentence F1 on running text: each document's texts concatenated, sentences
  joined by a space and paragraphs by a blank line (`--par-sep` changes it);
- UPOS / XPOS accuracy with gold tokens, lemma and FEATS (whole string)
  accuracy with predicted and with gold tags;
- tagger speed: tokens per second, warm (after one full pass), one core,
  `tag()` called sentence by sentence;
- the same for the accurate tagger (the linear tagger plus the neural analyser,
  `models/neural/tagger.py`) when the model beside the front-end has an analyser
  (`../neural/`, weight from `../pipeline.json`), and its speed relative to the fast
  tagger's, timed in alternation.

Usage (from the repository root):
    NUMBA_NUM_THREADS=1 python bench/text/bench_frontend.py \
        [--model models/pretrained/en_ewt/frontend] [--dev ../shared/data/en_ewt/dev.conllu]
Prints one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

from models.neural.network import NeuralAnalyser
from models.neural.tagger import AnalyserTagger
from models.text._conllu import read_conllu
from models.text.feats import FeatsGuesser
from models.text.lemmatizer import Lemmatizer
from models.text.scoring import accuracy
from models.text.tagger import Tagger
from models.text.tokenizer import Tokenizer
from models.text.train import evaluate_tagger, evaluate_tokenizer


def tagger_speed(tagger: Tagger, sentences: list[list[str]], repeats: int = 3) -> float:
    for forms in sentences:  # warm: compile kernels, fill the word-type cache
        tagger.tag(forms)
    n = sum(len(s) for s in sentences)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for forms in sentences:
            tagger.tag(forms)
        best = min(best, time.perf_counter() - t0)
    return n / best


def speed_ratio(tagger: Tagger, baseline: Tagger, sentences: list[list[str]],
                rounds: int = 3) -> dict:
    """Both taggers timed in alternation (process time, warm): tokens/s of each round
    and the ratio of the sums, so that the machine's load weighs on both alike."""
    for t in (tagger, baseline):
        for forms in sentences:
            t.tag(forms)
    n = sum(len(s) for s in sentences)
    runs: dict[str, list[float]] = {"tagger": [], "baseline": []}
    for _ in range(rounds):
        for name, t in (("tagger", tagger), ("baseline", baseline)):
            t0 = time.process_time()
            for forms in sentences:
                t.tag(forms)
            runs[name].append(round(n / (time.process_time() - t0)))
    return {**runs, "ratio": round(sum(runs["tagger"]) / sum(runs["baseline"]), 3)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=os.path.join(ROOT, "models/pretrained/en_ewt/frontend"))
    p.add_argument("--dev", default=os.path.join(ROOT, "../shared/data/en_ewt/dev.conllu"))
    p.add_argument("--baseline-tagger", help="another tagger directory: speeds of both, "
                   "alternated in this process, and their ratio")
    args = p.parse_args(argv)
    dev = read_conllu(args.dev)
    tokenizer = Tokenizer.load(os.path.join(args.model, "tokenizer"))
    tagger = Tagger.load(os.path.join(args.model, "tagger"))
    lemmatizer = Lemmatizer.load(os.path.join(args.model, "lemmatizer"), tagger.word_classes)
    feats = FeatsGuesser.load(os.path.join(args.model, "feats"))
    t0 = time.perf_counter()
    tok = evaluate_tokenizer(tokenizer, dev, "\n\n")
    tok_seconds = time.perf_counter() - t0
    tok_flat = evaluate_tokenizer(tokenizer, dev, " ")
    tags = evaluate_tagger(tagger, lemmatizer, dev, feats)
    forms = [[w.form for w in s.words] for s in dev]
    gold_lemma = [lemmatizer.lemmatize(f, [w.upos for w in s.words], [w.xpos for w in s.words])
                  for f, s in zip(forms, dev)]
    lemma_gold_tags = accuracy([[w.lemma for w in s.words] for s in dev], gold_lemma)
    gold_feats = [feats.predict(f, [w.upos for w in s.words], [w.xpos for w in s.words])
                  for f, s in zip(forms, dev)]
    feats_gold_tags = accuracy([[w.feats for w in s.words] for s in dev], gold_feats)
    result = {
        "dev": os.path.relpath(args.dev, ROOT), "model": os.path.relpath(args.model, ROOT),
        "sentences": len(dev), "words": sum(len(f) for f in forms),
        "token_f1": round(100 * tok["token_f1"], 2),
        "sentence_f1_paragraphs_blank_line": round(100 * tok["sentence_f1"], 2),
        "sentence_f1_paragraphs_space": round(100 * tok_flat["sentence_f1"], 2),
        "upos": round(100 * tags["upos"], 2), "xpos": round(100 * tags["xpos"], 2),
        "lemma_predicted_tags": round(100 * tags["lemma"], 2),
        "lemma_gold_tags": round(100 * lemma_gold_tags, 2),
        "feats_predicted_tags": round(100 * tags["feats"], 2),
        "feats_gold_tags": round(100 * feats_gold_tags, 2),
        "tagger_tokens_per_s": round(tagger_speed(tagger, forms)),
        "tokenizer_eval_seconds": round(tok_seconds, 2),
    }
    model_dir = os.path.dirname(os.path.abspath(args.model))
    neural_dir = os.path.join(model_dir, "neural")
    if os.path.isdir(neural_dir):
        with open(os.path.join(model_dir, "pipeline.json"), encoding="utf-8") as f:
            weight = json.load(f).get("tag_weight", 1.0)
        accurate = AnalyserTagger(tagger, NeuralAnalyser.load(neural_dir), weight)
        acc = evaluate_tagger(accurate, lemmatizer, dev, feats)
        result["accurate"] = {
            "weight": accurate.weight,
            **{k: round(100 * acc[k], 2) for k in ("upos", "xpos", "lemma", "feats")},
            "tokens_per_s": round(tagger_speed(accurate, forms)),
            "speed_vs_fast": speed_ratio(accurate, tagger, forms)}
    if args.baseline_tagger:
        result["baseline_tagger"] = os.path.relpath(args.baseline_tagger, ROOT)
        result["speed_vs_baseline"] = speed_ratio(tagger, Tagger.load(args.baseline_tagger),
                                                  forms)
    sys.stdout.write(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
