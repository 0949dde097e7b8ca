"""Tokenizing hostile text: runs of characters without a space (issue 20, defect 2).

For each text shape and size, the CPU seconds `Tokenizer.tokenize_sentence` takes on
the whole text and with the document cap of the service (`limit` = 256 x 250), and
the time per token relative to plain running text of the same size timed in the same
run (each the fastest of three). Linear scanning keeps the ratio flat as the
size grows; it grew with the size while e-mail and domain patterns rescanned a run
at every position (16 kB of "a.b" took 5 s of CPU, 4 kB 0.3 s).

With `--baseline REV` the tokenizer of git revision REV (e.g. 9852b49, before issue
20) is timed on the same texts in the same process, at sizes up to
`--baseline-max-chars` (it is quadratic on runs: larger ones take minutes), once each.

Usage (from the repository root):
    python bench/text/bench_tokenizer_runs.py [--model models/pretrained/en_ewt/frontend]
        [--sizes 8000 32000 128000] [--baseline 9852b49 --baseline-max-chars 16000]
Prints one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import types

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

from models.text.tokenizer import Tokenizer

PLAIN = ("The cat sat on the mat, and Dr. Smith e-mailed john.doe@example.com at 5:30 "
         "about www.example.com/a?b=c. ")
RUNS = {"plain text": PLAIN, "issue 20 run": "a.b,c;d:e!f?g(h)i", "a.b run": "a.b",
        "ab- run": "ab-", "a@b. run": "a@b."}
DOCUMENT_CAP = 256 * 250


def timed(fn, *args, repeat: int = 3) -> tuple[float, int]:
    """CPU seconds of the fastest of `repeat` runs (CPU time, not wall time: on a
    shared machine a starved process waits, it does not compute), and the tokens."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        n = len(fn(*args))
        best = min(best, time.process_time() - t0)
    return best, n


def baseline_tokenizer(rev: str, model: str):
    """The Tokenizer class of models/text/tokenizer.py at git revision `rev`, loaded."""
    src = subprocess.check_output(["git", "show", f"{rev}:models/text/tokenizer.py"], cwd=ROOT)
    mod = types.ModuleType(f"tokenizer_{rev}")
    exec(compile(src, f"{rev}:models/text/tokenizer.py", "exec"), mod.__dict__)
    return mod.Tokenizer.load(os.path.join(model, "tokenizer"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "models/pretrained/en_ewt/frontend"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[8000, 32000, 128000])
    ap.add_argument("--baseline", metavar="REV", help="also time this git revision's tokenizer")
    ap.add_argument("--baseline-max-chars", type=int, default=16000)
    args = ap.parse_args()
    tok = Tokenizer.load(os.path.join(args.model, "tokenizer"))
    old = baseline_tokenizer(args.baseline, args.model) if args.baseline else None
    out = {"sizes": args.sizes, "baseline": args.baseline, "results": []}
    for size in args.sizes:
        base = None
        for name, unit in RUNS.items():
            text = (unit * (size // len(unit) + 1))[:size]
            whole, n = timed(tok.tokenize_sentence, text)
            capped, n_capped = timed(tok.tokenize_sentence, text, DOCUMENT_CAP)
            per_token = whole / max(1, n)
            base = per_token if base is None else base
            row = {"text": name, "chars": size, "tokens": n, "seconds": round(whole, 4),
                   "seconds_capped": round(capped, 4), "tokens_capped": n_capped,
                   "per_token_vs_plain": round(per_token / base, 2)}
            if old is not None and size <= args.baseline_max_chars:
                then, n_then = timed(old.tokenize_sentence, text, repeat=1)
                row["baseline_tokens"] = n_then
                row["baseline_seconds"] = round(then, 4)
                row["baseline_vs_now"] = round(then / max(whole, 1e-9), 1)
            out["results"].append(row)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
