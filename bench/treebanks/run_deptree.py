"""Train deptree on a treebank's train file with the one command and score its dev file.

    python bench/treebanks/run_deptree.py tr_imst [--tag NAME] [more `deptree train` flags]

1. `deptree train --data TRAIN --dev DEV --out runs/treebanks/<name>/deptree[-NAME]
   --keep-work ...`, under /usr/bin/time -v (wall time, peak RSS);
2. greedy on dev from gold tokens with the model's own tags, the accurate tagger
   (and the contextual one, the default request, where the model has the encoder):
   `deptree parse --model DIR < dev.conllu`, scored by `models.build.evaluate.score_files`
   (the CoNLL 2018 metrics);
3. order 1 against order 3: the same model with its graph parser retrained at
   order 1 on the same gold tags, recalibrated, parsed the same way; and each
   graph parser alone (`neural` 0, fast tagger).

Writes bench/results/treebanks/deptree_<name>[-NAME].json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from data import RESULTS, ROOT, WORK, split_files, write_result

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
       "MKL_NUM_THREADS": "1"}


def deptree(*args: str, stdin: Path | None = None, stdout: Path | None = None,
            timed: bool = False) -> dict:
    cmd = ([sys.executable, "-m", "deptree.cli", *args] if not timed else
           ["/usr/bin/time", "-v", sys.executable, "-m", "deptree.cli", *args])
    t0 = time.time()
    log = WORK / "logs" / f"{args[0]}-{int(t0)}.log"   # progress bars, readable while it runs
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(stdin or os.devnull, "rb") as fin, open(stdout or os.devnull, "wb") as fout, \
            open(log, "wb") as ferr:
        proc = subprocess.run(cmd, stdin=fin, stdout=fout, stderr=ferr, cwd=ROOT, env=ENV)
    err = log.read_text(encoding="utf-8", errors="replace")
    if proc.returncode:
        sys.stderr.write(err[-4000:])
        raise SystemExit(f"failed: {' '.join(cmd)}")
    out = {"seconds": round(time.time() - t0, 1)}
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    if m:
        out["peak_rss_mb"] = round(int(m.group(1)) / 1024)
    return out


def score(gold: Path, pred: Path) -> dict:
    from models.build.evaluate import score_files

    s = score_files(gold, pred)
    return {k: round(100 * s[k]["f1"], 2) for k in ("UPOS", "XPOS", "UFeats", "Lemmas", "UAS",
                                                   "LAS", "CLAS", "MLAS")}


def parse_dev(model: Path, dev: Path, out: Path, *flags: str) -> dict:
    run = deptree("parse", "--model", str(model), *flags, stdin=dev, stdout=out)
    n = sum(1 for line in dev.read_text(encoding="utf-8").splitlines()
            if line and line.split("\t")[0].isdigit())
    return {**score(dev, out), "tokens_per_s": round(n / run["seconds"])}


def order1_variant(model: Path, dev: Path) -> Path:
    """The model with its graph parser retrained at order 1 on the same (gold) training
    tags."""
    from models.build import BuildOptions
    from models.build.calibrate import calibrate
    from models.build.run_state import Run
    from models.build.stages import _write_pipeline
    from models.graph.train import TrainConfig, train

    state = json.loads((model / ".build" / "state.json").read_text())
    o1 = model.parent / (model.name + "-order1")
    if o1.exists():
        shutil.rmtree(o1)
    shutil.copytree(model, o1, ignore=shutil.ignore_patterns(".build", "graph"))
    opts = state["key"]["options"]
    options = BuildOptions(**{**opts, "skip": tuple(opts["skip"])})
    tags = model / ".build" / "train.conllu"
    train(str(tags), str(o1 / "graph"), str(dev),
          TrainConfig(order=1, jackknife=0, word_classes=opts["word_classes"]),
          command="bench/treebanks/run_deptree.py (order 1)", checkpoint_dir=o1 / "ck")
    shutil.rmtree(o1 / "ck", ignore_errors=True)
    run = Run(o1, tags, dev, True, options, state)
    _write_pipeline(run, {})
    _write_pipeline(run, calibrate(o1, dev))
    return o1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--tag", default="")
    ap.add_argument("--skip-train", action="store_true", help="score an existing model")
    ap.add_argument("--no-order1", action="store_true")
    a, extra = ap.parse_known_args()                # the rest: more `deptree train` flags
    train, dev = split_files(a.treebank)
    name = "deptree" + (f"-{a.tag}" if a.tag else "")
    model = WORK / a.treebank / name
    res = {"treebank": a.treebank, "train": str(train), "dev": str(dev), "model": str(model)}
    earlier = RESULTS / f"{name}_{a.treebank}.json"
    if a.skip_train and earlier.exists():         # keep the record of the training run
        res.update({k: v for k, v in json.loads(earlier.read_text()).items()
                    if k in ("command", "train")})
    if not a.skip_train:
        cmd = ["train", "--data", str(train), "--dev", str(dev), "--out", str(model),
               "--keep-work", "--language", a.treebank.split("_")[0], *extra]
        res["command"] = "deptree " + " ".join(cmd)
        res["train"] = deptree(*cmd, timed=True)
    out = WORK / a.treebank
    res["default"] = parse_dev(model, dev, out / f"{name}_dev.conllu", "--tagger", "accurate")
    if json.loads((model / "pipeline.json").read_text()).get("contextual"):
        # the default request of a model with the encoder: the contextual tagger
        res["contextual"] = parse_dev(model, dev, out / f"{name}_ctx_dev.conllu",
                                      "--tagger", "contextual")
    res["graph_alone"] = parse_dev(model, dev, out / f"{name}_graph_dev.conllu",
                                   "--tagger", "fast", "--neural", "0")
    res["calibration"] = {k: v for k, v in json.loads(
        (model / "pipeline.json").read_text()).items()
        if k in ("tag_weight", "arc_weight", "label_mix")}
    if not a.no_order1:
        o1 = order1_variant(model, dev)
        res["order1_default"] = parse_dev(o1, dev, out / f"{name}_o1_dev.conllu",
                                          "--tagger", "accurate")
        res["order1_graph_alone"] = parse_dev(o1, dev, out / f"{name}_o1_graph_dev.conllu",
                                              "--tagger", "fast", "--neural", "0")
    write_result(res, f"{name}_{a.treebank}.json")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
