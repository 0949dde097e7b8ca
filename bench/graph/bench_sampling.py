"""Benchmarks of the sampling decoder on en_ewt dev (gold tokens, gold tags).

  tune         on 300 dev sentences outside the benchmark subset: the confidence
               temperatures (ECE per candidate) and a few sampling budgets
  curve        Zhang et al. (2014) Figure 7: total model score of the subset's trees vs
               tokens/s for Gibbs and random walk (cooling rate varied) and greedy
               (converge varied), on the same axes; PNG beside this file
  accuracy     UAS/LAS and tokens/s at the default sampling budget (both proposals)
               vs the greedy default, in the same run
  calibration  reliability table (confidence bins vs head accuracy) and expected
               calibration error of confidence=true, sampling and greedy

The subset is dev_data.py's (`--limit` random dev sentences, seed 0). Speeds
are tokens per CPU second of this process (time.process_time, fastest of
`--repeat` runs), so that other jobs on a shared machine distort them less;
curve speeds time the decoder alone (scorers built beforehand), accuracy speeds
model.decode + labelling, as dev_data.run does. Figures are printed as
Markdown and written as JSON beside this file. Not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from dev_data import DEV, encoded, load_dev, machine

from models.conllu import read_conllu
from models.decoder_registry import DECODERS
from models.graph import decoders as D
from models.graph.confidence import GREEDY_TAU, expected_calibration_error, optima_confidence
from models.serve.pipeline import Pipeline

HERE = Path(__file__).resolve().parent
GREEDY_K = [1, 2, 5, 10, 20, 50]
COOLING = [0.5, 0.7, 0.8, 0.9, 0.95, 0.98]
BINS = 10


def _key(sent) -> str:
    return "\n".join(sent.comments) + " ".join(w.form for w in sent.words)


def tune_set(path: Path, limit: int, size: int):
    """`size` dev sentences outside the benchmark subset (seed 1)."""
    held = {_key(s) for s in load_dev(path, limit)}
    rest = [s for s in read_conllu(path) if _key(s) not in held]
    idx = sorted(np.random.default_rng(1).choice(len(rest), size=min(size, len(rest)),
                                                 replace=False))
    return [rest[i] for i in idx]


def scorers(model, sents):
    return [(s, model.scorer(enc)) for s, enc in encoded(sents, model)]


REPEAT = 1


def decode_all(data, decoder, budget):
    """(total score, decoder CPU seconds, results) over prepared scorers; the
    fastest of REPEAT runs (seeded runs give the same trees each time)."""
    fn = DECODERS[decoder]
    best = float("inf")
    for _ in range(REPEAT):
        t0 = time.process_time()
        res = [fn(sc, dict(budget)) for _, sc in data]
        best = min(best, time.process_time() - t0)
    return float(sum(r.score for r in res)), best, res


def uas(data, res) -> float:
    ok = sum(int(r.heads[i] == w.head) for (s, _), r in zip(data, res)
             for i, w in enumerate(s.words, 1))
    return 100.0 * ok / sum(len(s.words) for s, _ in data)


def ece_table(conf: np.ndarray, ok: np.ndarray):
    """Reliability rows (lo, hi, count, mean confidence, accuracy) and the ECE."""
    ece, rows = expected_calibration_error(conf, ok, BINS)
    return rows, ece


def correct(data, res) -> np.ndarray:
    """1.0 per word whose decoded head is the gold head, words in order."""
    return np.concatenate([r.heads[1:] == np.array([w.head for w in s.words])
                           for (s, _), r in zip(data, res)]).astype(float)


def confidences(data, res):
    return np.concatenate([r.stats["confidence"] for r in res]), correct(data, res)


def warm(data):
    for dec, b in (("greedy", {}), ("sampling", {}), ("sampling", {"proposal": "random_walk"}),
                   ("sampling", {"confidence": True}), ("greedy", {"confidence": True})):
        decode_all(data[:5], dec, b)


# ---- commands ---------------------------------------------------------------------------

def cmd_tune(args, model) -> dict:
    data = scorers(model, tune_set(args.dev, args.limit, args.tune_size))
    warm(data)
    out = {"sentences": len(data), "tokens": sum(len(s.words) for s, _ in data)}
    g_score, g_sec, g_res = decode_all(data, "greedy", {})
    out["greedy_tau"] = {}
    for tau in (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0):
        conf = np.concatenate([optima_confidence(r.optima[0], r.optima[1], r.heads, tau)
                               for r in g_res])
        _, e = ece_table(conf, correct(data, g_res))
        out["greedy_tau"][tau] = round(e, 4)
        print(f"greedy tau {tau}: ECE {e:.4f}", flush=True)
    out["confidence_temperature"] = {}
    saved = D.CONFIDENCE_TEMPERATURE, D.CONFIDENCE_SWEEPS
    for T in (0.3, 0.4, 0.5, 0.6, 0.75, 1.0):
        D.CONFIDENCE_TEMPERATURE = T
        _, sec, res = decode_all(data, "sampling", {"confidence": True})
        _, e = ece_table(*confidences(data, res))
        out["confidence_temperature"][T] = round(e, 4)
        print(f"sampling confidence T {T}: ECE {e:.4f} ({sec:.1f} s)", flush=True)
    D.CONFIDENCE_TEMPERATURE = saved[0]
    out["confidence_sweeps"] = {}
    for n in (20, 50, 100):
        D.CONFIDENCE_SWEEPS = n
        _, sec, res = decode_all(data, "sampling", {"confidence": True})
        _, e = ece_table(*confidences(data, res))
        out["confidence_sweeps"][n] = {"ece": round(e, 4), "seconds": round(sec, 2)}
        print(f"sampling confidence sweeps {n}: ECE {e:.4f} ({sec:.1f} s)", flush=True)
    D.CONFIDENCE_SWEEPS = saved[1]
    out["budgets"] = []
    for b in ({}, {"chains": 1}, {"chains": 1, "cooling": 0.95, "samples": 100},
              {"chains": 2, "converge": 5}, {"chains": 3, "cooling": 0.8},
              {"temperature": 0.5}, {"proposal": "random_walk"},
              {"proposal": "random_walk", "chains": 4}):
        score, sec, res = decode_all(data, "sampling", b)
        row = {"budget": b, "score_minus_greedy": round(score - g_score, 2),
               "speed_vs_greedy": round(g_sec / sec, 2), "UAS": round(uas(data, res), 2)}
        out["budgets"].append(row)
        print(row, flush=True)
    out["greedy_UAS"] = round(uas(data, g_res), 2)
    return out


def cmd_curve(args, model) -> dict:
    data = scorers(model, load_dev(args.dev, args.limit))
    warm(data)
    tokens = sum(len(s.words) for s, _ in data)
    runs = []
    for K in GREEDY_K:
        runs.append(("greedy", {"converge": K, "restarts": max(100, 10 * K)}, f"K={K}"))
    for prop in ("gibbs", "random_walk"):
        for chains in (1, 2):
            for c in COOLING:
                runs.append(("sampling", {"proposal": prop, "cooling": c, "samples": 1000,
                                          "chains": chains}, f"c={c}"))
    rows, per_sent = [], []
    for dec, b, label in runs:
        score, sec, res = decode_all(data, dec, b)
        per_sent.append([r.score for r in res])
        name = dec if dec == "greedy" else f"{b['proposal']}, {b['chains']} chain(s)"
        rows.append({"decoder": name, "setting": label, "budget": b, "total_score": score,
                     "tokens_per_s": tokens / sec, "UAS": round(uas(data, res), 2)})
        print(f"| {name} | {label} | {score:.1f} | {tokens / sec:.0f} | {rows[-1]['UAS']} |",
              flush=True)
    best = float(np.max(np.array(per_sent), axis=0).sum())
    for r in rows:
        r["gap_to_best"] = round(r["total_score"] - best, 2)
    plot_curve(rows, HERE / "sampling_curve.png")
    return {"sentences": len(data), "tokens": tokens, "best_known_total": best, "rows": rows}


def run(model, data, decoder, budget):
    """(UAS, LAS, tokens per CPU second) of model.decode + labelling, the
    fastest of REPEAT runs (dev_data.run, timed in CPU time)."""
    best = float("inf")
    for _ in range(REPEAT):
        t0 = time.process_time()
        out = [(dec := model.decode(enc, decoder, budget), model.label(enc, dec.heads))
               for _, enc in data]
        best = min(best, time.process_time() - t0)
    tok = ok = lok = 0
    for (sent, _), (dec, labels) in zip(data, out):
        for i, w in enumerate(sent.words, 1):
            tok += 1
            ok += dec.heads[i] == w.head
            lok += dec.heads[i] == w.head and labels[i - 1] == w.deprel
    return 100.0 * ok / tok, 100.0 * lok / tok, tok / best


def cmd_accuracy(args, model) -> dict:
    data = encoded(load_dev(args.dev, args.limit), model)
    prepared = [(s, model.scorer(e)) for s, e in data]
    warm(prepared)
    out = []
    for dec, b in (("greedy", {}), ("sampling", {}), ("sampling", {"proposal": "random_walk"}),
                   ("greedy", {}), ("sampling", {"seed": 1}), ("greedy", {"seed": 1}),
                   ("sampling", {"seed": 2}), ("greedy", {"seed": 2})):
        u, las, tps = run(model, data, dec, b)
        out.append({"decoder": dec, "budget": b, "UAS": round(u, 2), "LAS": round(las, 2),
                    "tokens_per_s": round(tps)})
        print(f"| {dec} | {json.dumps(b)} | {u:.2f} | {las:.2f} | {tps:.0f} |", flush=True)
    return {"rows": out, "defaults": {"sampling": D.decode_sampling.defaults(),
                                      "greedy": D.decode_greedy.defaults()}}


def cmd_calibration(args, model) -> dict:
    data = scorers(model, load_dev(args.dev, args.limit))
    warm(data)
    out = {}
    for dec, b in (("sampling", {}), ("greedy", {})):
        _, sec0, _ = decode_all(data, dec, b)
        _, sec, res = decode_all(data, dec, dict(b, confidence=True))
        conf, ok = confidences(data, res)
        rows, e = ece_table(conf, ok)
        out[dec] = {"ece": round(e, 4), "rows": rows, "words": len(conf),
                    "accuracy": float(ok.mean()), "mean_confidence": float(conf.mean()),
                    "share_at_1": float((conf == 1.0).mean()),
                    "seconds_plain": round(sec0, 2), "seconds_confidence": round(sec, 2)}
        print(f"{dec}: ECE {e:.4f}, {sec / sec0:.2f}x the time without confidence")
        for lo, hi, n, c, a in rows:
            print(f"| {lo:.1f}-{hi:.1f} | {n} | {c:.3f} | {a:.3f} |")
    out["temperatures"] = {"sampling": D.CONFIDENCE_TEMPERATURE,
                           "sampling_sweeps": D.CONFIDENCE_SWEEPS,
                           "greedy_tau": GREEDY_TAU}
    return out


def plot_curve(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.6))
    names = list(dict.fromkeys(r["decoder"] for r in rows))
    for name in names:
        style = "^-k" if name == "greedy" else ("o" if "gibbs" in name else "s") + (
            "-" if "1 chain" in name else "--")
        rs = sorted((r for r in rows if r["decoder"] == name), key=lambda r: r["tokens_per_s"])
        ax.plot([r["tokens_per_s"] for r in rs], [r["gap_to_best"] for r in rs], style,
                label=name.replace("_", " "))
        for r in rs:
            ax.annotate(r["setting"], (r["tokens_per_s"], r["gap_to_best"]), fontsize=7,
                        textcoords="offset points", xytext=(3, 3))
    ax.set_xscale("log")
    ax.set_xlabel("tokens / CPU second (decoder only, one core)")
    ax.set_ylabel("total model score - best known (dev subset)")
    ax.set_title("Score vs speed (cf. Zhang et al. 2014, Fig. 7)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("tune", "curve", "accuracy", "calibration"))
    p.add_argument("--model", default="en_ewt", help="third-order model (name or dir)")
    p.add_argument("--dev", type=Path, default=DEV)
    p.add_argument("--limit", type=int, default=500, help="random subset of dev sentences")
    p.add_argument("--tune-size", type=int, default=300)
    p.add_argument("--repeat", type=int, default=3, help="decoder timings: fastest of N runs")
    args = p.parse_args()
    global REPEAT
    REPEAT = args.repeat
    model = Pipeline.load(args.model).graph
    t0 = time.time()
    res = globals()[f"cmd_{args.what}"](args, model)
    res["machine"] = machine()
    res["load_average"] = os.getloadavg()
    res["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    res["wall_seconds"] = round(time.time() - t0, 1)
    (HERE / f"results_sampling_{args.what}.json").write_text(
        json.dumps(res, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
