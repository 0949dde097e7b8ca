"""Train UDPipe 1.4 (`pip install ufal.udpipe`, default settings) on a treebank's
train file, with its dev file as heldout data, and parse dev from gold tokens with
its own tags (UPOS, XPOS, lemmas, FEATS re-predicted, then parsed).

    python bench/treebanks/run_udpipe.py tr_imst
    python bench/treebanks/run_udpipe.py en_ewt --no-tokenizer

`--no-tokenizer` trains no tokenizer (UDPipe's option `tokenizer=none`): dev is
parsed from gold tokens, so the tokenizer is never used, and on en_ewt its 100
epochs over the characters would take hours. Tagger and parser keep their defaults.

`--tokenizer-only` trains the tokenizer alone (tagger and parser `none`, minutes
instead of the hour its tagger and parser take) into udpipe_tokenizer.model, for
`raw_text.py`'s comparison of tokens and sentences; it parses nothing.

Writes runs/treebanks/<name>/udpipe.model, udpipe_dev.conllu and
bench/results/treebanks/udpipe_<name>.json (train seconds, peak RSS, dev UPOS / UAS /
LAS by `deptree evaluate`'s scorer); with `--tokenizer-only`, udpipe_tokenizer.model
and udpipe_tokenizer_<name>.json (train seconds).
"""
from __future__ import annotations

import json
import resource
import sys
import time

from data import RESULTS, ROOT, WORK, split_files


def _read(path, fmt):
    from ufal.udpipe import InputFormat, ProcessingError, Sentence

    reader = InputFormat.newInputFormat(fmt)
    reader.setText(path.read_text(encoding="utf-8"))
    err = ProcessingError()
    out = []
    s = Sentence()
    while reader.nextSentence(s, err):
        out.append(s)
        s = Sentence()
    if err.occurred():
        raise RuntimeError(err.message)
    return out


def main(name: str, tokenizer: str = "", only_tokenizer: bool = False) -> int:
    from ufal.udpipe import Model, Pipeline, ProcessingError, Sentences, Trainer

    train_path, dev_path = split_files(name)
    out = WORK / name
    out.mkdir(parents=True, exist_ok=True)
    train, heldout = Sentences(), Sentences()
    for s in _read(train_path, "conllu"):
        train.push_back(s)
    for s in _read(dev_path, "conllu"):
        heldout.push_back(s)
    t0 = time.time()
    err = ProcessingError()
    rest = "none" if only_tokenizer else Trainer.DEFAULT
    model_bytes = Trainer.train("morphodita_parsito", train, heldout,
                                tokenizer or Trainer.DEFAULT, rest, rest, err)
    if err.occurred():
        raise RuntimeError(err.message)
    seconds = time.time() - t0
    model_path = out / ("udpipe_tokenizer.model" if only_tokenizer else "udpipe.model")
    model_path.write_bytes(model_bytes.encode("latin-1") if isinstance(model_bytes, str)
                           else model_bytes)
    if only_tokenizer:
        res = {"treebank": name, "train": str(train_path), "heldout": str(dev_path),
               "model": str(model_path), "train_seconds": round(seconds, 1)}
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"udpipe_tokenizer_{name}.json").write_text(json.dumps(res, indent=1) + "\n")
        sys.stdout.write(json.dumps(res) + "\n")
        return 0
    model = Model.load(str(model_path))
    pipe = Pipeline(model, "conllu", Pipeline.DEFAULT, Pipeline.DEFAULT, "conllu")
    t1 = time.time()
    pred = pipe.process(dev_path.read_text(encoding="utf-8"), err)
    parse_seconds = time.time() - t1
    if err.occurred():
        raise RuntimeError(err.message)
    (out / "udpipe_dev.conllu").write_text(pred, encoding="utf-8")
    sys.path.insert(0, str(ROOT))
    from models.build.evaluate import score_files

    s = score_files(str(dev_path), str(out / "udpipe_dev.conllu"))
    res = {"treebank": name, "train": str(train_path), "dev": str(dev_path),
           "tokenizer": tokenizer or "default", "train_seconds": round(seconds, 1),
           "parse_seconds": round(parse_seconds, 2),
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
           "prediction": str(out / "udpipe_dev.conllu"),
           "scores": {k: round(100 * s[k]["f1"], 2) for k in ("UPOS", "UAS", "LAS")}}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"udpipe_{name}.json").write_text(json.dumps(res, indent=1) + "\n")
    sys.stdout.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "none" if "--no-tokenizer" in sys.argv[2:] else "",
                  "--tokenizer-only" in sys.argv[2:]))
