"""Selectional branching on en_ewt dev: UAS/LAS and transitions per sentence for each
beam b, speed (tokens/s, warm, one core) for b = 1 and b = 16, and the
non-projective check on nl_lassysmall (train 90% / test 10%, with and without the
PASS moves). Writes a Markdown report (default runs/bench_selectional.md) whose
figures are recorded in bench/RESULTS.md.

    python bench/transition/bench_selectional.py [--skip-nl]
"""
from __future__ import annotations

import argparse
import datetime
import logging
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from models.conllu import read_conllu
from models.transition.model import MARGIN_DEFAULT, decode, load
from models.transition.train import _encode, evaluate, train
from models.tree import is_projective

logger = logging.getLogger("bench_selectional")
DATA = ROOT.parent / "shared" / "data"
BEAMS = (1, 2, 4, 8, 16, 32, 64)


def machine() -> str:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node()}, {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def speed(model, attrs, beam, margin, repeats=2):
    tokens = sum(a.shape[0] - 1 for a in attrs)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for a in attrs:
            model.parse_encoded(a, beam, margin)
        best = min(best, time.perf_counter() - t0)
    return tokens / best, 1000.0 * best / len(attrs)


def predicted_attrs(sents):
    """Encoded sentences with UPOS/XPOS/lemmas from the shipped en_ewt front-end."""
    from models.graph.encode import encode
    from models.serve.pipeline import Pipeline

    pipe = Pipeline.load("en_ewt")
    out, right, total = [], 0, 0
    for s in sents:
        forms = [w.form for w in s.words]
        upos, xpos, lemmas = pipe.tag(forms)
        right += sum(u == w.upos for u, w in zip(upos, s.words))
        total += len(forms)
        out.append(encode(forms, lemmas, upos, xpos).attrs)
    return out, 100.0 * right / total


def speed_api(model, sents, beam, margin):
    """tokens/s through the serving call `decode()` (string encoding included)."""
    cols = [([w.form for w in s.words], [w.lemma for w in s.words], [w.upos for w in s.words],
             [w.xpos for w in s.words]) for s in sents]
    t0 = time.perf_counter()
    for c in cols:
        decode(model, *c, {"beam": beam, "margin": margin})
    return sum(len(c[0]) for c in cols) / (time.perf_counter() - t0)


def nl_check(epochs: int):
    sents = list(read_conllu(str(DATA / "nl_lassysmall" / "train.conllu")))
    cut = int(0.9 * len(sents))
    tr, te = sents[:cut], sents[cut:]
    attrs = [_encode(s) for s in te]
    nonproj = sum(not is_projective(s.heads()) for s in te)
    rows = []
    for passes in (True, False):
        m = train(tr, None, None, epochs=epochs, n_rows=1 << 18, alpha=0.05, passes=passes)
        for b in (1, 16):
            uas, las, tps, _ = evaluate(m, te, attrs, beam=b, margin=MARGIN_DEFAULT)
            rows.append((passes, b, uas, las, tps))
    return len(tr), len(te), nonproj, rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(ROOT / "models/pretrained/en_ewt/transition"))
    ap.add_argument("--dev", default=str(DATA / "en_ewt" / "dev.conllu"))
    ap.add_argument("--margin", type=float, default=MARGIN_DEFAULT)
    ap.add_argument("--skip-nl", action="store_true")
    ap.add_argument("--nl-epochs", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "runs/bench_selectional.md"),
                    help="Markdown report (merged by hand into bench/RESULTS.md)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    model = load(args.model)
    dev = list(read_conllu(args.dev))
    attrs = [_encode(s) for s in dev]
    acc = []
    for b in BEAMS:
        uas, las, tps, secs = evaluate(model, dev, attrs, beam=b, margin=args.margin)
        acc.append((b, uas, las, tps, secs))
        logger.info("b=%d UAS %.2f LAS %.2f transitions/sentence %.1f", b, uas, las, tps)
    pattrs, upos_acc = predicted_attrs(dev)
    pred = [(b, *evaluate(model, dev, pattrs, beam=b, margin=args.margin)[:3]) for b in (1, 16, 64)]
    spd = {b: speed(model, attrs, b, args.margin) for b in (1, 16)}
    api = {b: speed_api(model, dev, b, args.margin) for b in (1, 16)}
    load_avg = os.getloadavg()
    for b, (tok, ms) in spd.items():
        logger.info("b=%d %.0f tokens/s, %.2f ms/sentence", b, tok, ms)
    nl = None if args.skip_nl else nl_check(args.nl_epochs)

    tr = model.meta.get("training", {})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True, check=False).stdout.strip()
    words = sum(len(s.words) for s in dev)
    now = datetime.datetime.now(datetime.UTC)
    bs = tr.get("bootstrapping")
    boot = (f"bootstrapping with b_t = {bs['b_t']}, dev UAS (b=1) by round "
            f"{bs['dev_uas_by_round']}, the best round kept" if isinstance(bs, dict)
            else "no bootstrapping")
    mp = Path(args.model).resolve()
    shown = mp.relative_to(ROOT) if mp.is_relative_to(ROOT) else mp
    lines = [
        "# Selectional branching (transition parser): results",
        "",
        f"- command: `python bench/transition/bench_selectional.py {' '.join(sys.argv[1:])}`",
        f"- date: {now:%Y-%m-%d %H:%M} UTC, commit {commit}",
        f"- machine: {machine()} (shared with other work; numba, one thread)",
        (f"- model: `{shown}`,"
        f" trained with `{tr.get('command', '?')}`; training tags: {tr.get('tags', '?')},"
        f" dev tags for model selection:"
        f" {tr.get('dev_tags', 'gold')}; static oracle; best epoch"
        f" {tr.get('best_epoch', '?')} by greedy dev UAS; {boot}"),
        (f"- data: {args.dev}, {len(dev)} sentences, {words} words, gold UPOS/XPOS/lemmas;"
        " UAS/LAS over every word, punctuation included"),
        f"- margin m = {args.margin:g}, k = 2",
        "",
        "## en_ewt dev accuracy vs beam, gold tags (paper Table 4 / Figure 5)",
        "",
        "| b_d | UAS | LAS | transitions / sentence | seconds (whole dev) |",
        "|---:|---:|---:|---:|---:|",
    ]
    lines += [f"| {b} | {u:.2f} | {la:.2f} | {t:.1f} | {s:.1f} |" for b, u, la, t, s in acc]
    g = {b: u for b, u, *_ in acc}
    lines += [
        "",
        (f"Goals: b=16 >= b=1 + 0.7 UAS: {g[16] - g[1]:+.2f} "
        f"({'met' if g[16] - g[1] >= 0.7 else 'not met'}); b=16 within 0.1 of b=64: "
        f"{g[16] - g[64]:+.2f} ({'met' if g[16] >= g[64] - 0.1 else 'not met'})."),
        "",
        (f"## en_ewt dev with predicted tags (the shipped front-end's UPOS/XPOS/lemmas,"
         f" UPOS {upos_acc:.2f}% correct)"),
        "",
        "| b_d | UAS | LAS | transitions / sentence |",
        "|---:|---:|---:|---:|",
        *[f"| {b} | {u:.2f} | {la:.2f} | {t:.1f} |" for b, u, la, t in pred],
        "",
        "## Speed (warm, one core, en_ewt dev; kernel: best of 2 runs, encoding excluded)",
        "",
        (f"Load average at the end of the timing runs: {load_avg[0]:.1f} on"
         f" {os.cpu_count()} cores (other sessions' work), so the figures move with the load."),
        "",
        "| b | tokens/s | ms / sentence | tokens/s through `decode()` (strings encoded) |",
        "|---:|---:|---:|---:|",
    ]
    lines += [f"| {b} | {tok:,.0f} | {ms:.3f} | {api[b]:,.0f} |" for b, (tok, ms) in spd.items()]
    lines += ["", f"Goal b=16 >= 10,000 tokens/s: {'met' if spd[16][0] >= 10000 else 'not met'}."]
    if nl:
        ntr, nte, nonproj, rows = nl
        lines += [
            "",
            (f"## Non-projective check: nl_lassysmall train.conllu, first 90% ({ntr} sentences)"
            f" train, last 10% ({nte}, {nonproj} non-projective) test"),
            "",
            (f"{args.nl_epochs} epochs, 2^18 rows, alpha 0.05, gold tags. Without PASS: the"
            " PASS moves are removed and the training trees whose oracle needs one are left"
            " out (the arc-eager half of the system, projective only)."),
            "",
            "| PASS moves | b | UAS | LAS | transitions / sentence |",
            "|---|---:|---:|---:|---:|",
        ]
        lines += [f"| {'with' if p else 'without'} | {b} | {u:.2f} | {la:.2f} | {t:.1f} |"
                  for p, b, u, la, t in rows]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    logger.info("wrote %s", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
