"""deptree and UDPipe 1.4 from raw text: each treebank's dev file as running text,
tokenized, split, tagged and parsed by each, scored the CoNLL 2018 way.

    python bench/treebanks/raw_text.py hu_szeged --model runs/treebanks/hu_szeged/deptree-v10
    python bench/treebanks/raw_text.py tr_imst --model runs/tr --segmentation-only

The text is the dev file's `# text` lines: a sentence follows the previous one after
a space, a paragraph after a blank line. Paragraphs end at `# newpar` and `# newdoc`,
and after every PER (10) sentences where the file marks no paragraphs (hu_szeged,
nl_lassysmall, tr_imst have none; en_ewt has them). deptree parses it with its
default request (`deptree parse --model DIR --input text`), UDPipe with the model
`run_udpipe.py` trained with its tokenizer (runs/treebanks/<name>/udpipe.model; its
input format `tokenizer`, which also starts a paragraph at a blank line). Both are
scored against dev by `models.build.evaluate.score_files`. With `--segmentation-only`
UDPipe is its tokenizer alone (`run_udpipe.py --tokenizer-only`, udpipe_tokenizer.model,
minutes to train where its tagger and parser take an hour) and only its Tokens,
Sentences and Words are reported.

Without the UDPipe model, deptree alone. Writes runs/treebanks/<name>/dev_raw.txt,
raw_{deptree,udpipe}_dev.conllu and bench/results/treebanks/raw_<name>.json.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from data import ROOT, WORK, split_files, write_result

sys.path.insert(0, str(ROOT))
PER = 10
METRICS = ("Tokens", "Sentences", "Words", "UPOS", "Lemmas", "UAS", "LAS", "CLAS", "MLAS")


def running_text(dev: Path, per: int = PER) -> str:
    """Dev's `# text` lines as paragraphs of running text (see the module's docstring)."""
    from models.text._conllu import read_conllu

    sentences = read_conllu(str(dev))
    marked = any(s.newpar for s in sentences)
    paragraphs: list[list[str]] = []
    for s in sentences:
        if s.text is None:
            raise SystemExit(f"{dev}: a sentence has no `# text` line")
        if (not paragraphs or s.newdoc or s.newpar
                or (not marked and len(paragraphs[-1]) >= per)):
            paragraphs.append([])
        paragraphs[-1].append(s.text)
    return "\n\n".join(" ".join(p) for p in paragraphs) + "\n"


def run_deptree(model: str, text: Path, out: Path) -> float:
    from run_deptree import deptree

    return deptree("parse", "--model", model, "--input", "text", stdin=text,
                   stdout=out)["seconds"]


def run_udpipe(model_path: Path, text: Path, out: Path, segmentation_only: bool) -> float:
    from ufal.udpipe import Model, Pipeline, ProcessingError

    model = Model.load(str(model_path))
    if model is None:
        raise SystemExit(f"cannot load {model_path}: train it with run_udpipe.py first")
    rest = "none" if segmentation_only else Pipeline.DEFAULT
    pipe = Pipeline(model, "tokenizer", rest, rest, "conllu")
    err = ProcessingError()
    t0 = time.time()
    pred = pipe.process(text.read_text(encoding="utf-8"), err)
    if err.occurred():
        raise RuntimeError(err.message)
    out.write_text(pred, encoding="utf-8")
    return time.time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("treebank")
    ap.add_argument("--model", required=True, help="deptree model directory")
    ap.add_argument("--per", type=int, default=PER,
                    help="sentences a paragraph where the file marks none")
    ap.add_argument("--out", help="result file (default bench/results/treebanks/raw_<name>.json)")
    ap.add_argument("--segmentation-only", action="store_true",
                    help="UDPipe's tokenizer alone (udpipe_tokenizer.model)")
    args = ap.parse_args()
    from models.build.evaluate import score_files

    _, dev = split_files(args.treebank)
    work = WORK / args.treebank
    work.mkdir(parents=True, exist_ok=True)
    text = work / "dev_raw.txt"
    text.write_text(running_text(dev, args.per), encoding="utf-8")
    res = {"treebank": args.treebank, "dev": str(dev), "text": str(text),
           "sentences_per_paragraph": args.per, "deptree_model": args.model}
    only = args.segmentation_only
    udpipe_model = work / ("udpipe_tokenizer.model" if only else "udpipe.model")
    res["udpipe_model"] = str(udpipe_model)
    runs = [("deptree", lambda o: run_deptree(args.model, text, o))]
    if udpipe_model.exists():
        runs.append(("udpipe", lambda o: run_udpipe(udpipe_model, text, o, only)))
    else:       # en_ewt: UDPipe's tokenizer would train for hours on it
        res["udpipe"] = f"not run: no {udpipe_model}"
    for name, run in runs:
        pred = work / f"raw_{name}_dev.conllu"     # the last run's, for a look at errors
        seconds = run(pred)
        s = score_files(dev, pred)
        metrics = METRICS[:3] if only and name == "udpipe" else METRICS
        res[name] = {"seconds": round(seconds, 1), "prediction": str(pred),
                     "scores": {k: round(100 * s[k]["f1"], 2) for k in metrics}}
    write_result(res, f"raw_{args.treebank}.json", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
