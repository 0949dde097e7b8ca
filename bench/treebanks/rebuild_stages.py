"""Rerun some stages of a built model with today's code, the others kept as they were built.

    python bench/treebanks/rebuild_stages.py MODEL_DIR --data TRAIN --dev DEV --out OUT \
        --redo graph,calibrate

starts `deptree train`'s build in OUT with the options MODEL_DIR was built with
(pipeline.json's `build.options`; options added since take their defaults), copies in
the parts of every stage not to redo and records those stages as ended, with the
records MODEL_DIR's pipeline.json keeps of them (`build.stages`). The build then
resumes as any interrupted one does: the stages not ended run, with today's code.
pipeline.json's `build.rerun` names the stages rerun and the model they came from.
A model's shipped parts are rebuilt this way when only some of them changed (the
contextual analyser takes most of a whole build's 90 minutes).
"""
from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from dataclasses import fields
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from models.build.run_state import STAGES, BuildOptions, prepare  # noqa: E402
from models.build.stages import build_model  # noqa: E402

PARTS = {"frontend": "frontend", "neural": "neural", "contextual": "contextual",
         "graph": "graph", "transition": "transition"}     # stage -> its directory
NEEDS = {"transition": "jackknife"}       # a stage that reads another's work files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--data", required=True)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--redo", required=True, help="comma-separated stages to rerun")
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    model, out = Path(a.model), Path(a.out)
    redo = {s for s in a.redo.split(",") if s} | {"calibrate"}
    redo |= {NEEDS[s] for s in redo if s in NEEDS}
    if redo - set(STAGES):
        raise SystemExit(f"unknown stages: {', '.join(sorted(redo - set(STAGES)))}")
    meta = json.loads((model / "pipeline.json").read_text())
    recorded = meta["build"]["options"]
    known = {f.name for f in fields(BuildOptions)}
    opts = BuildOptions(**{k: tuple(v) if k == "skip" else v for k, v in recorded.items()
                           if k in known})
    opts.keep_work = False
    run = prepare(Path(a.data), Path(a.dev), out, opts)
    for stage, record in meta["build"]["stages"].items():
        if stage in redo or stage == "split" or run.done(stage):
            continue
        if stage in PARTS:
            shutil.copytree(model / PARTS[stage], out / PARTS[stage], dirs_exist_ok=True)
        run.state.setdefault("done", {})[stage] = record
    run.state["rerun"] = {"stages": sorted(redo), "of": str(model)}
    run.finish("split", 0.0)                 # writes the state with the stages it keeps
    build_model(Path(a.data), Path(a.dev), out, opts)
    source = meta.get("description", "")
    meta = json.loads((out / "pipeline.json").read_text())
    meta["build"]["rerun"] = {"stages": [s for s in STAGES if s in redo],
                              "other_parts_from": f"{model}: {source}",
                              "command": "python bench/treebanks/rebuild_stages.py "
                                         + " ".join(sys.argv[1:])}
    (out / "pipeline.json").write_text(json.dumps(meta, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
