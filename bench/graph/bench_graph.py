"""Benchmarks of the graph parser on en_ewt dev (gold tokens, gold tags).

  accuracy  UAS/LAS of the first-order model (mst, greedy) and the third-order model (greedy)
  search    how often greedy's default budget reaches the exact MST score (first order) and
            the best tree of a 3000-restart run (third order)
  pruning   recall of first-order pruning on dev and candidate heads per word
  speed     tokens/s and seconds/token of parsing (model loaded, JIT warm) for mst and
            greedy at converge K = 10, 50, 300, with UAS: the accuracy/speed curve (PNG)

Predicted tags and the neural arc scores are `bench_tags.py`'s. Figures are printed as
Markdown and written as JSON beside this file; run one benchmark at a time on a quiet
machine. Not a test.
"""
from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np
from dev_data import DEV, HERE, encoded, graph_model, load_dev, machine, run, warm

from models.graph.decoders import decode_greedy, decode_mst_exact


def cmd_accuracy(args) -> dict:
    out = {}
    for tag, path, decoders in (("first-order", args.o1, ("mst", "greedy")),
                                ("third-order", args.model, ("greedy", "mst"))):
        model = graph_model(path)
        data = encoded(load_dev(args.dev, args.limit), model)
        warm(model, data)
        for dec in decoders:
            uas, las, uas_np, tps, spt, _ = run(model, data, dec, {})
            out[f"{tag} {dec}"] = {"UAS": round(uas, 2), "LAS": round(las, 2),
                                   "UAS_nopunct": round(uas_np, 2), "tokens_per_s": round(tps)}
            print(f"| {tag} | {dec} | {uas:.2f} | {las:.2f} | {uas_np:.2f} | {tps:.0f} |",
                  flush=True)
    return out


def cmd_search(args) -> dict:
    out = {}
    m1 = graph_model(args.o1)
    data = encoded(load_dev(args.dev, None), m1)
    warm(m1, data)
    hit = 0
    for _, enc in data:
        sc = m1.scorer(enc)
        g = decode_greedy(sc, {})
        e = decode_mst_exact(sc, {})
        hit += g.score >= e.score - 1e-6
    out["first_order_greedy_reaches_mst"] = round(100.0 * hit / len(data), 2)
    print(f"first-order: greedy (default budget) reaches the MST score on {hit}/{len(data)} "
          f"sentences = {100.0 * hit / len(data):.2f}%", flush=True)
    m3 = graph_model(args.model)
    data = encoded(load_dev(args.dev, args.limit), m3)
    hit = 0
    for _, enc in data:
        sc = m3.scorer(enc)
        g = decode_greedy(sc, {})
        big = decode_greedy(sc, {"restarts": 3000, "converge": 3000, "seed": 1})
        hit += g.score >= big.score - 1e-6
    out["third_order_default_finds_3000_best"] = round(100.0 * hit / len(data), 2)
    out["third_order_sentences"] = len(data)
    print(f"third-order: default budget finds the best tree of a 3000-restart run on "
          f"{hit}/{len(data)} sentences = {100.0 * hit / len(data):.2f}%", flush=True)
    return out


def cmd_pruning(args) -> dict:
    """Recall of the first-order pruning on dev and candidate heads per word."""
    from models.graph.prune import pruning_recall

    model = graph_model(args.model)
    kept = total = cands = 0
    for sent, enc in encoded(load_dev(args.dev, args.limit), model):
        allowed = model.allowed_arcs(enc)
        k, t = pruning_recall(allowed, sent.heads())
        kept += k
        total += t
        cands += int(allowed[:, 1:].sum())
    out = {"recall": round(100.0 * kept / total, 2), "heads_per_word": round(cands / total, 2),
           "threshold": model.prune_threshold, "max_heads": model.prune_max_heads,
           "temperature": model.prune_temperature}
    print(f"pruning recall {out['recall']:.2f}% of gold arcs kept, {out['heads_per_word']:.2f} "
          f"candidate heads per word (threshold {model.prune_threshold} x best, at most "
          f"{model.prune_max_heads})", flush=True)
    return out


def cmd_speed(args) -> dict:
    model = graph_model(args.model)
    data = encoded(load_dev(args.dev, args.limit), model)
    warm(model, data)
    rows = []
    defaults = decode_greedy.defaults()
    uas, las, _, tps, spt, _ = run(model, data, "mst", {})
    rows.append({"decoder": "mst", "K": None, "UAS": round(uas, 2), "LAS": round(las, 2),
                 "tokens_per_s": round(tps), "seconds_per_token": spt})
    print(f"| mst | - | {uas:.2f} | {las:.2f} | {tps:.0f} | {spt * 1e6:.0f} |", flush=True)
    for K in args.converge:
        budget = {"converge": K, "restarts": max(defaults["restarts"], 10 * K)}
        uas, las, _, tps, spt, res = run(model, data, "greedy", budget)
        used = float(np.mean([r.stats["restarts_used"] for r in res]))
        rows.append({"decoder": "greedy", "K": K, "UAS": round(uas, 2), "LAS": round(las, 2),
                     "tokens_per_s": round(tps), "seconds_per_token": spt,
                     "mean_restarts": round(used, 1)})
        print(f"| greedy | {K} | {uas:.2f} | {las:.2f} | {tps:.0f} | {spt * 1e6:.0f} | "
              f"{used:.1f} |", flush=True)
    budget = defaults
    uas, las, _, tps, spt, res = run(model, data, "greedy", {})
    rows.append({"decoder": "greedy (default)", "K": budget["converge"], "UAS": round(uas, 2),
                 "LAS": round(las, 2), "tokens_per_s": round(tps), "seconds_per_token": spt})
    print(f"| greedy default | {budget['converge']} | {uas:.2f} | {las:.2f} | {tps:.0f} | "
          f"{spt * 1e6:.0f} |", flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MB", flush=True)
    plot_speed(rows, HERE / "speed_curve.png")
    return {"rows": rows, "peak_rss_mb": round(rss)}


def plot_speed(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    g = sorted((r for r in rows if r["decoder"].startswith("greedy")), key=lambda r: r["K"])
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r["tokens_per_s"] for r in g], [r["UAS"] for r in g], "o-", label="greedy (3rd order)")
    for r in g:
        ax.annotate(f"K={r['K']}", (r["tokens_per_s"], r["UAS"]), textcoords="offset points",
                    xytext=(4, 4), fontsize=8)
    m = [r for r in rows if r["decoder"] == "mst"]
    ax.plot([r["tokens_per_s"] for r in m], [r["UAS"] for r in m], "s",
            label="mst (first-order model)")
    ax.set_xscale("log")
    ax.set_xlabel("tokens / second (one core)")
    ax.set_ylabel("UAS, en_ewt dev (gold tags)")
    ax.set_title("Accuracy vs speed (cf. Zhang et al. 2014, Fig. 6)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def replot() -> None:
    """Redraw the PNG from the last speed results (no parsing)."""
    rows = json.loads((HERE / "results_speed.json").read_text())["rows"]
    plot_speed(rows, HERE / "speed_curve.png")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("accuracy", "search", "speed", "pruning", "replot"))
    p.add_argument("--model", default="en_ewt", help="third-order model (name or dir)")
    p.add_argument("--o1", default="runs/en_ewt_o1", help="first-order model dir")
    p.add_argument("--dev", type=Path, default=DEV)
    p.add_argument("--limit", type=int, default=None, help="random subset of dev sentences")
    p.add_argument("--converge", type=int, nargs="+", default=[10, 50, 300])
    args = p.parse_args()
    if args.what == "replot":
        replot()
        return
    t0 = time.time()
    res = {"accuracy": cmd_accuracy, "search": cmd_search, "speed": cmd_speed,
           "pruning": cmd_pruning}[args.what](args)
    res["machine"] = machine()
    res["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    res["wall_seconds"] = round(time.time() - t0, 1)
    (HERE / f"results_{args.what}.json").write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
