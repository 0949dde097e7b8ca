"""Issue 62's table: the graph parser alone with and without its extra components.

    python bench/graph/bench_components.py TREEBANK --variant third|global|tensor|full [--rank 50]
        [--epochs 8] [--jackknife] [--word-classes DIR] [--pipeline MODEL]

trains the variant (third order alone; + global features; + the tensor; both) with
`deptree train-graph` (order 3, gold training tags unless --jackknife) into
runs/components/TREEBANK-VARIANT, then scores the graph parser alone on the
treebank's dev split (`bench/treebanks/data.split_files`: nl_lassysmall's fixed
slice) with its gold tags: greedy at its default budget, punctuation in. It records
the training's wall time, the model's size on disk and the decode speed, and merges
the row into bench/graph/results_components.json. With --pipeline (en_ewt), the row
also has the default request's figures and the graph parser alone with the pipeline's
fast tagger's tags, the shipped pipeline's graph model swapped for the one trained
here (train it as the build does: --jackknife, --epochs 6 and the front-end's
--word-classes). --out DIR with a --label scores a model as it is (one from git
history, the shipped one).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parents[1] / "bench" / "treebanks"))

from data import split_files  # noqa: E402
from dev_data import encoded, machine, parse_dev, run, warm  # noqa: E402

from models.conllu import read_conllu  # noqa: E402
from models.graph.model import GraphModel  # noqa: E402

RESULTS = HERE / "results_components.json"


def default_request(name: str, model: GraphModel, dev: Path) -> dict:
    """UAS/LAS of the default request (gold tokens, the model's own tags, every part of
    the pipeline as shipped but its graph model) on dev, punctuation in."""
    from models.serve.pipeline import Pipeline

    pipe = Pipeline.load(name)
    pipe.c.graph = model
    report, seconds = parse_dev(pipe, list(read_conllu(dev)), "greedy", {}, False, "auto")
    fast, fast_seconds = parse_dev(pipe, list(read_conllu(dev)), "greedy", {}, False, "fast")
    return {"default_request_uas": round(100.0 * report.uas, 2),
            "default_request_las": round(100.0 * report.las, 2),
            "default_request_tokens_per_cpu_s": round(report.words / seconds),
            "fast_tags_uas": round(100.0 * fast.uas, 2),
            "fast_tags_las": round(100.0 * fast.las, 2),
            "fast_tags_tokens_per_cpu_s": round(fast.words / fast_seconds)}


def own_tags(model: GraphModel, dev: Path, frontend: Path) -> dict:
    """UAS/LAS of the graph parser alone (greedy, its default budget) on dev with the UPOS,
    XPOS and lemmas of a front-end's linear tagger and lemmatizer, as a model built with
    that front-end tags a request."""
    from models.build.children import retagged

    uas, las, *_ = run(model, encoded(retagged(frontend, list(read_conllu(dev))), model),
                       "greedy", {})
    return {"own_tags_uas": round(uas, 2), "own_tags_las": round(las, 2),
            "frontend": str(frontend)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("treebank")
    ap.add_argument("--variant", choices=("third", "global", "tensor", "full"), required=True)
    ap.add_argument("--rank", type=int, default=50)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--jackknife", action="store_true", help="the build's jackknifed tags")
    ap.add_argument("--word-classes", default=None, metavar="DIR",
                    help="train-graph's --word-classes (e.g. a front-end tagger's directory)")
    ap.add_argument("--pipeline", default=None, metavar="MODEL",
                    help="also score the default request (own tags, the analyser's arc "
                         "scores) of this shipped model with only its graph model swapped")
    ap.add_argument("--frontend", default=None, metavar="DIR",
                    help="also score the graph parser alone on dev tagged by the linear "
                         "tagger and lemmatizer of this front-end (`deptree train-frontend`)")
    ap.add_argument("--out", default=None, help="model directory (default runs/components/...);"
                    " one with a model.json is scored as it is, not trained")
    ap.add_argument("--label", default="", help="names the row of a model scored as it is "
                    "(e.g. one from git history), kept apart from the trained variants'")
    a = ap.parse_args()
    train, dev = split_files(a.treebank)
    name = f"{a.treebank}-{a.variant}" + ("-jk" if a.jackknife else "") + (
        f"-e{a.epochs}" if a.epochs != 8 else "") + ("-wc" if a.word_classes else "")
    out = Path(a.out or HERE.parents[1] / "runs" / "components" / name)
    cmd = [sys.executable, "-m", "deptree.cli", "train-graph", "--data", str(train),
           "--dev", str(dev), "--out", str(out), "--order", "3", "--epochs", str(a.epochs)]
    if not a.jackknife:
        cmd.append("--gold-tags")
    if a.variant in ("tensor", "full"):
        cmd += ["--tensor-rank", str(a.rank)]
    if a.variant in ("global", "full"):
        cmd.append("--global-features")
    if a.word_classes:
        cmd += ["--word-classes", a.word_classes]
    t0 = time.time()
    if not (out / "model.json").exists():
        subprocess.run(cmd, check=True)
    train_s = time.time() - t0
    model = GraphModel.load(out)
    data = encoded(list(read_conllu(dev)), model)
    warm(model, data)
    uas, las, uas_np, tok_s, _, _ = run(model, data, "greedy", {})
    row = {"treebank": a.treebank, "variant": a.variant, "label": a.label,
           "rank": a.rank if a.variant in ("tensor", "full") else 0,
           "training_tags": "jackknifed" if a.jackknife else "gold",
           "epochs": a.epochs, "word_classes": bool(a.word_classes),
           "dev_uas": round(uas, 2), "dev_las": round(las, 2),
           "dev_uas_nopunct": round(uas_np, 2), "tokens_per_s": round(tok_s),
           "train_seconds": round(train_s, 1) if train_s > 1 else
           json.loads((out / "model.json").read_text()).get("train_seconds"),
           "model_mb": round(sum(f.stat().st_size for f in out.iterdir() if f.is_file())
                             / 2**20, 2),
           "command": f"scored as it is: {out}" if a.label else " ".join(["deptree"] + cmd[3:]),
           "machine": machine(),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if a.frontend:
        row.update(own_tags(model, dev, Path(a.frontend)))
    if a.pipeline:
        row.update(default_request(a.pipeline, model, dev))
    key = ("treebank", "variant", "training_tags", "rank", "epochs", "word_classes",
           "label")
    rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    rows = [r for r in rows if tuple(r.get(k) for k in key) != tuple(row[k] for k in key)]
    rows.append(row)
    RESULTS.write_text(json.dumps(rows, indent=1) + "\n")
    print(json.dumps(row, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
