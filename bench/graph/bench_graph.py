"""Benchmarks of the graph parser on en_ewt dev (gold tokens, gold tags).

  accuracy  UAS/LAS of the first-order model (mst, greedy) and the third-order model (greedy)
  search    how often greedy's default budget reaches the exact MST score (first order) and
            the best tree of a 3000-restart run (third order)
  pruning   recall of first-order pruning on dev and candidate heads per word
  tags      UAS/LAS with gold vs predicted tags (jackknifed vs gold-tag training)
  retag     UAS/LAS and tokens/s of every decoder with predicted tags, with and without
            re-tagging by the parser (Pipeline.choose_tags)
  neural    UAS/LAS and tokens/s of every graph decoder with gold vs predicted tags
            (`--tagger`, default accurate), over weights of the neural arc scores
            (budget `neural`): the tag gap with the tag-free arc model, and its curve (PNG)
  arccost   tokens/s of the neural arc scorer and of the accurate tagger alone (numpy,
            one sentence per call), timed in alternation, and their ratio
  speed     tokens/s and seconds/token of parsing (model loaded, JIT warm) for mst and
            greedy at converge K = 10, 50, 300, with UAS: the accuracy/speed curve (PNG)

Figures are printed as Markdown and written as JSON beside this file; run one
benchmark at a time on a quiet machine. Not a test.
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import time
from pathlib import Path

import numpy as np

from models.conllu import read_conllu
from models.graph.decoders import GREEDY_DEFAULTS
from models.pipeline import Pipeline

HERE = Path(__file__).resolve().parent
SHIPPED_GRAPH = "models/pretrained/en_ewt/graph"
DEV = HERE.parents[1].parent / "shared" / "data" / "en_ewt" / "dev.conllu"


def machine() -> str:
    cpu = "unknown cpu"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return f"{platform.machine()}, {cpu}, {subprocess.getoutput('nproc')} cores"


def load_dev(path: Path, limit: int | None):
    sents = list(read_conllu(path))
    if limit:
        rng = np.random.default_rng(0)
        idx = sorted(rng.choice(len(sents), size=min(limit, len(sents)), replace=False))
        sents = [sents[i] for i in idx]
    return sents


def encoded(sents, model):
    """(sentence, the model's encoding of its gold tokens, tags and lemmas)."""
    out = []
    for s in sents:
        w = s.words
        out.append((s, model.encode([x.form for x in w], [x.lemma for x in w],
                                    [x.upos for x in w], [x.xpos for x in w])))
    return out


def run(model, data, decoder, budget):
    """Parse every sentence; return (uas, las, uas_nopunct, tokens/s, results)."""
    tok = correct = lcorrect = 0
    np_tok = np_correct = 0
    results = []
    t0 = time.perf_counter()
    for sent, enc in data:
        dec = model.decode(enc, decoder, budget)
        labels = model.label(enc, dec.heads)
        results.append(dec)
        for i, w in enumerate(sent.words, 1):
            ok = dec.heads[i] == w.head
            tok += 1
            correct += ok
            lcorrect += ok and labels[i - 1] == w.deprel
            if w.upos != "PUNCT":
                np_tok += 1
                np_correct += ok
    secs = time.perf_counter() - t0
    return (100.0 * correct / tok, 100.0 * lcorrect / tok, 100.0 * np_correct / np_tok,
            tok / secs, secs / tok, results)


def warm(model, data):
    for _, enc in data[:5]:
        model.decode(enc, "greedy", {"restarts": 3, "converge": 2})
        model.decode(enc, "mst", {})


def cmd_accuracy(args) -> dict:
    out = {}
    for tag, path, decoders in (("first-order", args.o1, ("mst", "greedy")),
                                ("third-order", args.model, ("greedy", "mst"))):
        model = Pipeline.load(path).graph
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
    m1 = Pipeline.load(args.o1).graph
    data = encoded(load_dev(args.dev, None), m1)
    warm(m1, data)
    hit = 0
    for _, enc in data:
        sc = m1.scorer(enc)
        from models.graph.decoders import decode_greedy, decode_mst_exact

        g = decode_greedy(sc, {})
        e = decode_mst_exact(sc, {})
        hit += g.score >= e.score - 1e-6
    out["first_order_greedy_reaches_mst"] = round(100.0 * hit / len(data), 2)
    print(f"first-order: greedy (default budget) reaches the MST score on {hit}/{len(data)} "
          f"sentences = {100.0 * hit / len(data):.2f}%", flush=True)
    m3 = Pipeline.load(args.model).graph
    data = encoded(load_dev(args.dev, args.limit), m3)
    hit = 0
    for _, enc in data:
        sc = m3.scorer(enc)
        from models.graph.decoders import decode_greedy

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

    model = Pipeline.load(args.model).graph
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


def parse_dev(pipe, sents, decoder: str, budget: dict, gold_tags: bool, tagger: str):
    """(models.evaluate report, process seconds) of the pipeline's parses of copies of
    `sents`: with their gold tags, or tagged by `tagger` as the pipeline does."""
    import copy

    from models.evaluate import evaluate_sentences

    preds = []
    t0 = time.process_time()
    for sent in sents:
        pred = copy.deepcopy(sent)
        pipe.parse_conllu(pred, decoder, budget, gold_tags=gold_tags, tagger=tagger)
        preds.append(pred)
    seconds = time.process_time() - t0
    return evaluate_sentences(sents, preds, validate=False), seconds


def cmd_tags(args) -> dict:
    """UAS/LAS with gold tags vs the model's own predicted tags, for each graph model
    in --graphs (the en_ewt front-end tags them): the jackknifing benchmark."""
    from models.graph.model import GraphModel

    pipe = Pipeline.load("en_ewt")
    sents = load_dev(args.dev, args.limit)
    out = {}
    for path in args.graphs:
        pipe.graph = GraphModel.load(path)
        for gold in (True, False):
            report, _ = parse_dev(pipe, sents, "greedy", {}, gold, args.tagger)
            key = f"{path} {'gold' if gold else 'predicted'} tags"
            out[key] = {"UAS": round(100.0 * report.uas, 2),
                        "LAS": round(100.0 * report.las, 2)}
            print(f"| {path} | {'gold' if gold else 'predicted'} | {out[key]['UAS']:.2f} | "
                  f"{out[key]['LAS']:.2f} |", flush=True)
    return out


def cmd_retag(args) -> dict:
    """UAS/LAS and tokens/s (process time, tagging included) of every decoder with the
    model's predicted tags, without and with re-tagging by the parser
    (`Pipeline.choose_tags`), from gold tokens."""
    pipe = Pipeline.load("en_ewt")
    default = dict(pipe.tag_flips)
    sents = load_dev(args.dev, args.limit)
    for s in sents[:20]:                       # JIT warm-up of every decoder
        for dec in pipe.decoders():
            pipe.parse_words([w.form for w in s.words], dec, {}, tagger=args.tagger)
    out = {}
    print("| decoder | re-tagging | UAS | LAS | tokens/s |\n|---|---|---|---|---|")
    for dec in pipe.decoders():
        for flips in (0, default["flips"]):
            pipe.tag_flips = {**default, "flips": flips, "decoders": [dec]}
            tok = correct = lcorrect = 0
            t0 = time.process_time()
            for s in sents:
                tree = pipe.parse_words([w.form for w in s.words], dec, {}, tagger=args.tagger)
                for w, t in zip(s.words, tree.tokens):
                    tok += 1
                    correct += w.head == t.head
                    lcorrect += w.head == t.head and w.deprel == t.deprel
            tps = tok / (time.process_time() - t0)
            key = f"{dec} flips {flips}"
            out[key] = {"UAS": round(100 * correct / tok, 2),
                        "LAS": round(100 * lcorrect / tok, 2), "tokens_per_s": round(tps)}
            print(f"| {dec} | {'on' if flips else 'off'} | {out[key]['UAS']:.2f} | "
                  f"{out[key]['LAS']:.2f} | {tps:,.0f} |", flush=True)
    return out


def cmd_neural(args) -> dict:
    """Per graph decoder and weight of the neural arc scores (`graph/neural_arcs.py`):
    UAS/LAS with gold tags and with the --tagger's (re-tagging as the pipeline does),
    and tokens/s (process time, tagging and arc scoring included)."""
    import copy

    from models.graph.model import GraphModel

    pipe = Pipeline.load("en_ewt")
    if args.graphs != [SHIPPED_GRAPH]:         # another graph model with the same front-end
        pipe.graph = GraphModel.load(args.graphs[0])
    sents = load_dev(args.dev, args.limit)
    decoders = [d for d in pipe.decoders() if d in args.decoders]
    for s in sents[:20]:                       # JIT warm-up of every decoder
        for dec in decoders:
            pipe.parse_conllu(copy.deepcopy(s), dec, {"neural": 0.5}, tagger=args.tagger)
    rows = []
    print("| decoder | neural | gold UAS | gold LAS | predicted UAS | predicted LAS | gap "
          "| tokens/s (predicted) |\n|---|---|---|---|---|---|---|---|")
    for dec in decoders:
        for w in args.weights:
            row = {"decoder": dec, "neural": w}
            for gold in (True, False):
                report, seconds = parse_dev(pipe, sents, dec, {"neural": w}, gold, args.tagger)
                kind = "gold" if gold else "predicted"
                row[f"{kind}_UAS"] = round(100.0 * report.uas, 2)
                row[f"{kind}_LAS"] = round(100.0 * report.las, 2)
                row[f"{kind}_tokens_per_s"] = round(report.words / seconds)
            row["gap"] = round(row["gold_UAS"] - row["predicted_UAS"], 2)
            rows.append(row)
            print(f"| {dec} | {w:g} | {row['gold_UAS']:.2f} | {row['gold_LAS']:.2f} | "
                  f"{row['predicted_UAS']:.2f} | {row['predicted_LAS']:.2f} | {row['gap']:.2f} "
                  f"| {row['predicted_tokens_per_s']:,} |", flush=True)
    if args.graphs == [SHIPPED_GRAPH] and args.tagger == "accurate":
        plot_neural(rows, HERE / "neural_curve.png")
    return {"rows": rows, "arc_weight": pipe.arc_weight, "model_version": pipe.version,
            "graph": args.graphs[0]}


def cmd_arccost(args) -> dict:
    """Process-time tokens/s of the arc scorer (`NeuralArcScorer.arc_bonus`) and of the
    accurate tagger, sentence by sentence over dev, in alternation (3 rounds each)."""
    pipe = Pipeline.load("en_ewt")
    forms = [[w.form for w in s.words] for s in load_dev(args.dev, args.limit)]
    n = sum(len(f) for f in forms)
    jobs = {"arc_scorer": lambda f: pipe.arc_scorer.arc_bonus(f, pipe.tagger.type_strings,
                                                              0.3),
            "accurate_tagger": lambda f: pipe.accurate_tagger.tag(f),
            "fast_tagger": lambda f: pipe.tagger.tag(f)}
    for f in forms:                            # warm: the id cache is shared by both
        for job in jobs.values():
            job(f)
    runs: dict[str, list[int]] = {k: [] for k in jobs}
    for _ in range(3):
        for name, job in jobs.items():
            t0 = time.process_time()
            for f in forms:
                job(f)
            runs[name].append(round(n / (time.process_time() - t0)))
    out = {"tokens_per_s": runs,
           "arc_scorer_vs_accurate_tagger": round(sum(runs["arc_scorer"])
                                                  / sum(runs["accurate_tagger"]), 3)}
    print(json.dumps(out, indent=1))
    return out


def plot_neural(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, dec in enumerate(dict.fromkeys(r["decoder"] for r in rows)):
        rs = [r for r in rows if r["decoder"] == dec]
        color = f"C{i}"
        ax.plot([r["neural"] for r in rs], [r["gold_UAS"] for r in rs], "o--", color=color,
                label=f"{dec}, gold tags")
        ax.plot([r["neural"] for r in rs], [r["predicted_UAS"] for r in rs], "s-", color=color,
                label=f"{dec}, predicted tags")
    ax.set_xlabel("weight of the neural arc scores (budget `neural`)")
    ax.set_ylabel("UAS, en_ewt dev")
    ax.set_title("Tag-free neural arc scores close the gold/predicted tag gap")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def cmd_speed(args) -> dict:
    model = Pipeline.load(args.model).graph
    data = encoded(load_dev(args.dev, args.limit), model)
    warm(model, data)
    rows = []
    uas, las, _, tps, spt, _ = run(model, data, "mst", {})
    rows.append({"decoder": "mst", "K": None, "UAS": round(uas, 2), "LAS": round(las, 2),
                 "tokens_per_s": round(tps), "seconds_per_token": spt})
    print(f"| mst | - | {uas:.2f} | {las:.2f} | {tps:.0f} | {spt * 1e6:.0f} |", flush=True)
    for K in args.converge:
        budget = {"converge": K, "restarts": max(GREEDY_DEFAULTS["restarts"], 10 * K)}
        uas, las, _, tps, spt, res = run(model, data, "greedy", budget)
        used = float(np.mean([r.stats["restarts_used"] for r in res]))
        rows.append({"decoder": "greedy", "K": K, "UAS": round(uas, 2), "LAS": round(las, 2),
                     "tokens_per_s": round(tps), "seconds_per_token": spt,
                     "mean_restarts": round(used, 1)})
        print(f"| greedy | {K} | {uas:.2f} | {las:.2f} | {tps:.0f} | {spt * 1e6:.0f} | "
              f"{used:.1f} |", flush=True)
    budget = dict(GREEDY_DEFAULTS)
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
    p.add_argument("what", choices=("accuracy", "search", "speed", "pruning", "tags", "retag",
                                    "neural", "arccost", "replot"))
    p.add_argument("--graphs", nargs="+", default=[SHIPPED_GRAPH],
                   help="tags: graph model directories to compare; neural: the graph model "
                        "(results_neural_<its directory name>.json unless the shipped one)")
    p.add_argument("--model", default="en_ewt", help="third-order model (name or dir)")
    p.add_argument("--o1", default="runs/en_ewt_o1", help="first-order model dir")
    p.add_argument("--dev", type=Path, default=DEV)
    p.add_argument("--limit", type=int, default=None, help="random subset of dev sentences")
    p.add_argument("--converge", type=int, nargs="+", default=[10, 50, 300])
    p.add_argument("--tagger", choices=("fast", "accurate"),
                   help="tags, retag (default fast; results_*_accurate.json), neural (default "
                        "accurate; results_neural_fast.json): the front-end tagger")
    p.add_argument("--weights", type=float, nargs="+", default=[0, 0.15, 0.3, 0.5, 0.75, 1.0],
                   help="neural: weights of the neural arc scores")
    p.add_argument("--decoders", nargs="+", default=["greedy", "mst", "sampling", "bgi"],
                   help="neural: graph decoders to run")
    args = p.parse_args()
    args.tagger = args.tagger or ("accurate" if args.what == "neural" else "fast")
    if args.what == "replot":
        replot()
        return
    t0 = time.time()
    res = {"cmd_accuracy": cmd_accuracy, "cmd_search": cmd_search, "cmd_speed": cmd_speed,
           "cmd_pruning": cmd_pruning, "cmd_tags": cmd_tags, "cmd_retag": cmd_retag,
           "cmd_neural": cmd_neural, "cmd_arccost": cmd_arccost}[
        f"cmd_{args.what}"](args)
    res["machine"] = machine()
    res["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    res["wall_seconds"] = round(time.time() - t0, 1)
    res["tagger"] = args.tagger
    suffix = "" if args.tagger == "fast" else f"_{args.tagger}"
    if args.what == "arccost":
        suffix = ""
    elif args.what == "neural":
        suffix = "" if args.tagger == "accurate" else f"_{args.tagger}"
        if args.graphs != [SHIPPED_GRAPH]:
            suffix += f"_{Path(args.graphs[0]).name}"
    (HERE / f"results_{args.what}{suffix}.json").write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
