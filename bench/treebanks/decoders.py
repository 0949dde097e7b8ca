"""Every decoder of a model with each tagger, on a treebank's dev file from gold tokens:
UAS / LAS / UPOS (`models.build.evaluate`, the CoNLL 2018 metrics) and speed, the trade-off
a request chooses.

    OMP_NUM_THREADS=1 python bench/treebanks/decoders.py en_ewt --model models/pretrained/en_ewt

Each row parses dev once with the decoder's default budget and each tagger the model
has, most accurate first: `contextual` (the analyser that reads the pretrained encoder,
and its scores), `accurate` (the analyser without it) and `fast` (the linear tagger, no
neural scores), in jobs of 16 sentences as `speed.py` does. Tokens/s is process CPU
time of that pass (after a warm-up on 40 sentences), given with its ratio to mst with
the fast tagger, timed in the same command. Writes bench/results/treebanks/decoders_<name>.json, or
`--out`.
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import time
from pathlib import Path

from data import ROOT, WORK, split_files, write_result

sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--model")
    ap.add_argument("--out", help="result file (default bench/results/treebanks/"
                                  "decoders_<treebank>.json)")
    a = ap.parse_args()
    from models.build.evaluate import score_files
    from models.conllu import read_conllu, write_conllu
    from models.serve.pipeline import Pipeline

    _, dev = split_files(a.treebank)
    model = Path(a.model) if a.model else WORK / a.treebank / "deptree"
    pipe = Pipeline.load(model)
    gold = list(read_conllu(dev))
    n_tok = sum(len(s.words) for s in gold)

    def run(decoder: str, tagger: str, sents: list) -> float:
        """Parse copies of sents in place; CPU seconds."""
        t0 = time.process_time()
        for k in range(0, len(sents), 16):
            chunk = sents[k:k + 16]
            pipe.analyze_ahead([[w.form for w in s.words] for s in chunk], tagger, {})
            for s in chunk:
                pipe.parse_conllu(s, decoder, {}, tagger=tagger)
        return time.process_time() - t0

    rows = {}
    taggers = pipe.taggers[::-1]            # the most accurate (`auto`'s) first
    for decoder in pipe.decoders():
        for tagger in taggers:
            run(decoder, tagger, copy.deepcopy(gold[:40]))            # warm-up
            pred = copy.deepcopy(gold)
            seconds = run(decoder, tagger, pred)
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "pred.conllu"
                write_conllu(pred, out)
                s = score_files(str(dev), str(out))
            rows[f"{decoder}, {tagger}"] = {
                **{k: round(100 * s[k]["f1"], 2) for k in ("UAS", "LAS", "UPOS")},
                "tokens_per_s": round(n_tok / seconds), "cpu_seconds": round(seconds, 2)}
            sys.stderr.write(f"{decoder}, {tagger}: {rows[f'{decoder}, {tagger}']}\n")
    base = rows["mst, fast"]["cpu_seconds"]
    for r in rows.values():
        r["time_vs_mst_fast"] = round(r["cpu_seconds"] / base, 2)
    res = {"treebank": a.treebank, "model": str(model), "tokens": n_tok,
           "threads": os.environ.get("OMP_NUM_THREADS"), "rows": rows}
    write_result(res, f"decoders_{a.treebank}.json", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
