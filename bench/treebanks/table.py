"""The cross-language table of bench/RESULTS.md from the results of run_udpipe.py,
run_deptree.py and speed.py (bench/results/treebanks/*.json).

    python bench/treebanks/table.py [--tag v3 --tag v2]

Prints markdown: per treebank, UAS / LAS / UPOS of UDPipe 1.4 and deptree (dev, gold
tokens, own tags, the CoNLL 2018 scorer's F1), the margins, training wall time and
peak RSS; then order 1 against order 3; then speed.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from data import RESULTS, ROOT, TREEBANKS


def _load(name: str) -> dict | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def _score(gold, pred) -> dict:
    sys.path.insert(0, str(ROOT))
    from models.build.evaluate import score_files

    s = score_files(gold, pred)
    return {k: round(100 * s[k]["f1"], 2) for k in ("UPOS", "UAS", "LAS")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tag", action="append", default=[],
                    help="run tag(s) of run_deptree.py, the first found counts (repeatable)")
    a = ap.parse_args()
    names = ["deptree" + (f"-{t}" if t else "") for t in (a.tag or [""])]
    out = ["| treebank | UDPipe 1.4 UAS / LAS / UPOS | deptree UAS / LAS / UPOS | margin UAS / LAS"
           " | UDPipe train time, peak RSS | deptree train time, peak RSS |",
           "|---|---|---|---|---|---|"]
    orders = ["| treebank | default request, order 1 -> 3 (UAS / LAS) | graph parser alone "
              "(fast tagger, no neural), order 1 -> 3 |", "|---|---|---|"]
    for tb in TREEBANKS:
        ud = _load(f"udpipe_{tb}.json")
        dt = next((r for r in (_load(f"{n}_{tb}.json") for n in names) if r), None)
        u = None
        if ud:                       # its scores as recorded, else its prediction scored now
            u = ud.get("scores") or (_score(ud["dev"], ud["prediction"])
                                     if Path(ud["prediction"]).exists() else None)
        d = dt["default"] if dt else None
        cells = [f"{u['UAS']:.2f} / {u['LAS']:.2f} / {u['UPOS']:.2f}" if u else
                 "(prediction gone)" if ud else "(not run)",
                 f"{d['UAS']:.2f} / {d['LAS']:.2f} / {d['UPOS']:.2f}" if d else "(not run)",
                 f"**{d['UAS'] - u['UAS']:+.2f} / {d['LAS'] - u['LAS']:+.2f}**" if u and d
                 else "",
                 f"{ud['train_seconds'] / 60:.0f} min, {ud['peak_rss_mb']} MB" if ud else "",
                 f"{dt['train']['seconds'] / 60:.0f} min, {dt['train']['peak_rss_mb']} MB"
                 if dt and "train" in dt and isinstance(dt["train"], dict) else ""]
        out.append(f"| {tb} | " + " | ".join(cells) + " |")
        if dt and "order1_default" in dt:
            o1, o3 = dt["order1_default"], d
            g1, g3 = dt["order1_graph_alone"], dt["graph_alone"]
            orders.append(f"| {tb} | {o1['UAS']:.2f} / {o1['LAS']:.2f} -> {o3['UAS']:.2f} / "
                          f"{o3['LAS']:.2f} | {g1['UAS']:.2f} / {g1['LAS']:.2f} -> "
                          f"{g3['UAS']:.2f} / {g3['LAS']:.2f} |")
    sys.stdout.write("\n".join(out + [""] + orders) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
