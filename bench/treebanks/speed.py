"""Speed of the default request on a treebank's dev file, end to end from gold tokens
(tagging included), on one core, beside baselines timed in the same command.

    OMP_NUM_THREADS=1 python bench/treebanks/speed.py tr_imst [--model DIR] [--rounds 2] [--out F]
        [--selectional]

Rows: deptree's default request (`auto` tagger, greedy), the same with the fast
tagger and no neural scores, (for a model with a contextual analyser, which `auto`
then is) the accurate tagger's request, (for a model of several analysers) the default request
with the first analyser alone (`analysers` 1), mst with the fast tagger, and UDPipe 1.4's tagger and
parser (runs/treebanks/<name>/udpipe.model, when there); with `--selectional`, also
`selectional` with the `auto` tagger (its moves weighed by the analyser) and with the
fast tagger and no neural scores. Each is timed `rounds`
times, alternating, after a warm-up; the best round counts (the machine is shared).
Tokens/s is process CPU time, so other jobs' load does not count against a row.
Writes bench/results/treebanks/speed_<name>.json, or `--out`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from data import ROOT, WORK, split_files, write_result

sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--model")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", help="result file (default bench/results/treebanks/"
                                  "speed_<treebank>.json)")
    ap.add_argument("--selectional", action="store_true",
                    help="also time selectional, with and without the analyser")
    a = ap.parse_args()
    from models.conllu import read_conllu
    from models.serve.pipeline import Pipeline

    _, dev = split_files(a.treebank)
    model = Path(a.model) if a.model else WORK / a.treebank / "deptree"
    pipe = Pipeline.load(model)
    sents = [[w.form for w in s.words] for s in read_conllu(dev)]
    n_tok = sum(map(len, sents))

    def deptree(decoder: str, tagger: str, budget: dict):
        def run(sentences):
            for k in range(0, len(sentences), 16):           # a worker's job: 16 sentences
                chunk = sentences[k:k + 16]
                pipe.analyze_ahead(chunk, tagger, budget)
                for forms in chunk:
                    pipe.parse_words(forms, decoder, budget, tagger=tagger)
        return run

    rows = {"deptree default (auto tagger, greedy)": deptree("greedy", "auto", {}),
            "deptree fast tagger, greedy, no neural": deptree("greedy", "fast", {"neural": 0}),
            "deptree fast tagger, mst, no neural": deptree("mst", "fast", {"neural": 0})}
    if a.selectional:
        rows["deptree selectional (auto tagger)"] = deptree("selectional", "auto", {})
        rows["deptree selectional, fast tagger, no neural"] = deptree("selectional", "fast",
                                                                      {"neural": 0})
    if "contextual" in pipe.taggers:       # auto is the contextual tagger: accurate too
        rows["deptree accurate tagger, greedy"] = deptree("greedy", "accurate", {})
    if pipe.analysers > 1:                 # an ensemble: its first analyser alone too
        rows["deptree default, analysers 1"] = deptree("greedy", "auto", {"analysers": 1})
    udmodel = WORK / a.treebank / "udpipe.model"
    if udmodel.exists():
        from ufal.udpipe import Model, ProcessingError
        from ufal.udpipe import Pipeline as UDPipeline

        ud = Model.load(str(udmodel))
        texts = {len(sents): dev.read_text(encoding="utf-8")}
        texts[40] = "\n\n".join(texts[len(sents)].split("\n\n")[:40]) + "\n\n"

        def udpipe(sentences):
            UDPipeline(ud, "conllu", UDPipeline.DEFAULT, UDPipeline.DEFAULT, "conllu"
                       ).process(texts[len(sentences)], ProcessingError())
        rows["UDPipe 1.4 tagger + parser"] = udpipe
    for run in rows.values():                              # warm-up: compiles, caches
        run(sents[:40])
    best = {k: float("inf") for k in rows}
    for _ in range(a.rounds):
        for k, run in rows.items():
            t0 = time.process_time()
            run(sents)
            best[k] = min(best[k], time.process_time() - t0)
    base = best["deptree fast tagger, mst, no neural"]
    res = {"treebank": a.treebank, "model": str(model), "tokens": n_tok,
           "threads": os.environ.get("OMP_NUM_THREADS"),
           "rows": {k: {"tokens_per_s": round(n_tok / v), "cpu_seconds": round(v, 2),
                        "time_vs_mst_fast": round(v / base, 2)} for k, v in best.items()}}
    write_result(res, f"speed_{a.treebank}.json", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
