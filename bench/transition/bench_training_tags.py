"""Which training tags suit the transition parser: gold, or k-fold jackknifed ones.

    python bench/transition/bench_training_tags.py TREEBANK --frontend DIR [--folds 10]

trains the transition parser twice as the build's transition stage does (8 epochs, two
bootstrapping rounds, epochs chosen on dev tagged by the front-end), once on the
training file's gold UPOS/XPOS and once on 10-fold jackknifed ones, into
runs/training_tags/TREEBANK-{gold,jackknifed} (kept: a rerun only scores). Each is then
scored on the treebank's dev split (`bench/treebanks/data.split_files`), selectional
branching at beam 1 and 16, with the gold tags and with the tags of the front-end's
linear tagger and lemmatizer (what `tagger: fast` gives a request). Rows merge into
bench/transition/results_training_tags.json. Issue 62 asks which change of the build
cost the parsers their gold-tag accuracy; bench/graph/bench_components.py answers it
for the graph parser.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "treebanks"))
sys.path.insert(0, str(ROOT / "bench" / "graph"))

from data import split_files  # noqa: E402
from dev_data import machine  # noqa: E402

from models.build.children import retagged  # noqa: E402
from models.conllu import read_conllu  # noqa: E402
from models.transition.model import MARGIN_DEFAULT, load  # noqa: E402
from models.transition.train import _encode, evaluate, train  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results_training_tags.json"
BEAMS = (1, 16)


def trained(train_file: Path, dev_tagged, out: Path, folds: int) -> tuple[object, float]:
    """The transition model in out, trained first if it is not there (the build's
    settings, `models/build/children.train_transition`); (model, training seconds)."""
    t0 = time.time()
    if not (out / "model.json").exists():
        train(str(train_file), dev_tagged, str(out), n_rows=None, epochs=8, alpha=0.05,
              prune=0.025, bootstrap_rounds=2, bootstrap_epochs=4, seed=0, jackknife=folds,
              command=f"bench_training_tags.py ({'gold' if folds < 2 else folds} tags)",
              checkpoint_dir=str(out) + "-work")
    return load(str(out)), time.time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("treebank")
    ap.add_argument("--frontend", required=True, metavar="DIR",
                    help="front-end (`deptree train-frontend`) whose tagger tags dev")
    ap.add_argument("--folds", type=int, default=10)
    a = ap.parse_args()
    train_file, dev_file = split_files(a.treebank)
    dev = list(read_conllu(dev_file))
    tagged = retagged(Path(a.frontend), dev)
    views = {"gold": [_encode(s) for s in dev], "front-end": [_encode(s) for s in tagged]}
    rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    for tags, folds in (("gold", 0), ("jackknifed", a.folds)):
        out = ROOT / "runs" / "training_tags" / f"{a.treebank}-{tags}"
        model, seconds = trained(train_file, tagged, out, folds)
        row = {"treebank": a.treebank, "training_tags": tags, "folds": folds,
               "train_seconds": round(seconds, 1) if seconds > 1 else None,
               "frontend": a.frontend, "machine": machine(),
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        for view, attrs in views.items():
            for beam in BEAMS:
                uas, las, _, _ = evaluate(model, dev, attrs, beam=beam, margin=MARGIN_DEFAULT)
                row[f"{view}_b{beam}"] = [round(uas, 2), round(las, 2)]
        print(json.dumps(row))
        rows = [r for r in rows if (r["treebank"], r["training_tags"])
                != (a.treebank, tags)] + [row]
    RESULTS.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
