"""Train a transition model: oracle examples, AdaGrad epochs, model selection on dev.

`train()` is the plain function; `python -m models.transition.train` the thin CLI.
Examples come from the static oracle (`oracle.py`) on gold trees with the tags of
the training file. Each epoch is evaluated on dev with greedy decoding (b = 1); the
best epoch is kept. `--bootstrap R` then runs up to R rounds of bootstrapping
(paper Algorithm 1, see `bootstrap.py`).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from numba import njit

from ..conllu import read_conllu
from ..graph.encode import encode
from ..progress import progress_bar
from .bootstrap import bootstrap
from .classifier import adagrad_epoch, compact, pack_bits, sparse_weights
from .examples import Examples, explore_room
from .features import DEFAULT_TEMPLATES, N_POS, extract, parse_templates
from .model import TransitionModel
from .oracle import oracle_move, oracle_sequence
from .system import (
    LABELED,
    LEFT_PASS,
    NO_PASS,
    RIGHT_PASS,
    J,
    Moves,
    N,
    action_index,
    action_table,
    apply,
    new_state,
    valid_mask,
)

PASS_TYPES = (LEFT_PASS, RIGHT_PASS, NO_PASS)

# AdaGrad keeps two dense float32 (rows, actions) tables, the weights and their squared
# gradient sums: at most this many cells each (512 MB for the pair). 5,000 sentences of
# 28 words (140k) with ~100 actions then train in 1.8 GB, not 2.3
# (bench/journal/12-any-treebank.md, "Peak memory at 5,000 sentences"); the rows halve from
# 2**20 to 2**19.
MAX_CELLS = 1 << 26

logger = logging.getLogger(__name__)


def _encode(sent):
    w = sent.words
    return encode([x.form for x in w], [x.lemma for x in w], [x.upos for x in w],
                  [x.xpos for x in w]).attrs


@njit(cache=True)
def _examples(gh, gl, attrs, table, n_rows, moves, aindex, ex, start):
    """Follow the oracle on one gold tree, writing into the `Examples` ex from row
    start on: features X, gold action y, valid moves V (bits, `classifier.pack_bits`).
    moves: `system.Moves`; aindex: int64 (7, L+1) action id of (type, label+1).
    Returns the end."""
    atype, alabel, root_label = moves
    X, y, V = ex.X, ex.y, ex.V
    n = gh.shape[0] - 1
    st, sc = new_state(n)
    pos = np.zeros(N_POS, np.int64)
    rows = np.zeros(table.shape[0], np.int64)
    vm = np.zeros(atype.shape[0], np.bool_)
    m = start
    while sc[J] <= sc[N]:
        t, lab = oracle_move(st, sc, gh, gl)
        extract(st, sc, attrs, table, n_rows, pos, rows)
        X[m, :] = rows
        valid_mask(st, sc, atype, alabel, root_label, vm)
        pack_bits(vm, V[m])
        y[m] = aindex[t, lab + 1]
        m += 1
        apply(st, sc, t, lab)
    return m


def _jackknifed(sents, k: int, seed: int):
    """Copies of the sentences with k-fold jackknifed UPOS/XPOS."""
    from ..conllu import Sentence
    from ..text.jackknife import jackknife_tags

    t0 = time.perf_counter()
    tags = jackknife_tags([[(w.form, w.upos, w.xpos) for w in s.words] for s in sents], k=k,
                          seed=seed)
    out, right, total = [], 0, 0
    for s, (upos, xpos) in zip(sents, tags):
        words = []
        for w, u, x in zip(s.words, upos, xpos):
            right += w.upos == u
            total += 1
            words.append(replace(w, upos=u, xpos=x))
        out.append(Sentence.from_words(words))
    logger.info("%d-fold jackknifed tags in %.0fs (UPOS %.2f%% correct)", k,
                time.perf_counter() - t0, 100.0 * right / max(1, total))
    return out


def _retagged(sents, model: str):
    """Copies of the sentences tagged and lemmatized by a pipeline's front-end."""
    from ..conllu import Sentence
    from ..serve.pipeline import Pipeline

    pipe = Pipeline.load(model)
    out = []
    for s in sents:
        upos, xpos, lemmas = pipe.tag([w.form for w in s.words])
        out.append(Sentence.from_words([replace(w, upos=u, xpos=x, lemma=m) for w, u, x, m
                                        in zip(s.words, upos, xpos, lemmas)]))
    return out


def build_examples(sents, attrs_list, labels, atype, alabel, table, n_rows,
                   explore: bool = False) -> tuple[Examples, list]:
    """The gold sequences' instances, and each sentence's gold (heads, label ids);
    explore: with room after them for a round of bootstrapping's (`examples.py`)."""
    lab_id = {lab: i for i, lab in enumerate(labels)}
    aindex = action_index(atype, alabel, len(labels))
    golds = []
    total = 0
    for s in sents:
        gh = s.heads()
        gl = np.array([-1] + [lab_id[d] for d in s.deprels()[1:]], dtype=np.int64)
        golds.append((gh, gl))
        total += len(oracle_sequence(gh, gl)[0])
    ex = Examples.empty(total + (explore_room(golds) if explore else 0), table.shape[0],
                        len(atype))
    m = 0
    moves = Moves(atype, alabel, labels.index("root"))
    for (gh, gl), attrs in zip(golds, attrs_list):
        m = _examples(gh, gl, attrs, table, n_rows, moves, aindex, ex, m)
    assert m == total and (ex.y[:m] >= 0).all()
    return ex._replace(n=m), golds


def evaluate(model: TransitionModel, sents, attrs_list, beam=1, margin=0.88):
    """(UAS, LAS, transitions per sentence, seconds) ignoring nothing (punctuation in)."""
    correct_u = correct_l = total = trans = 0
    t0 = time.perf_counter()
    for s, attrs in zip(sents, attrs_list):
        heads, labs, _, stats = model.parse_encoded(attrs, beam, margin)
        gh = s.heads()
        gd = s.deprels()
        for i in range(1, len(gh)):
            total += 1
            if heads[i] == gh[i]:
                correct_u += 1
                if model.labels[labs[i]] == gd[i]:
                    correct_l += 1
        trans += stats["transitions"]
    return (100.0 * correct_u / total, 100.0 * correct_l / total, trans / len(sents),
            time.perf_counter() - t0)


def train(train_path, dev_path, out_dir: str | None, *, epochs: int = 10,
          n_rows: int | None = 1 << 20, alpha: float = 0.02, rho: float = 0.1, eps: float = 1e-3,
          prune: float = 0.0, seed: int = 0, limit: int | None = None,
          templates=DEFAULT_TEMPLATES, passes: bool = True, bootstrap_rounds: int = 0,
          bootstrap_epochs: int | None = None, jackknife: int = 0,
          dev_tagger: str | None = None,
          command: str = "", checkpoint_dir: str | Path | None = None) -> TransitionModel:
    """Train on a CoNLL-U file (or a list of Sentences), select the epoch on dev (path
    or list; None: keep the last). passes=False drops the *-PASS moves (the arc-eager
    part alone, projective): trees whose oracle needs a PASS are left out of training.
    jackknife = k > 1 replaces the training UPOS/XPOS by k-fold jackknifed predictions of
    the project's tagger (`models.text.jackknife`, as `models/graph/train.py` does);
    lemmas stay gold. dev_tagger (a model name or directory with a front-end) re-tags
    dev (UPOS, XPOS, lemmas) so that epochs and rounds are chosen on predicted tags.
    n_rows: hashed feature rows; None: `text.tagger.auto_bits` of the words and actions.
    checkpoint_dir: where the model after the epochs and after each bootstrapping round
    is kept, so that a rerun with the same data continues from the last of them."""
    t0 = time.perf_counter()
    sents = (list(read_conllu(train_path)) if isinstance(train_path, (str, Path))
             else list(train_path))[:limit]
    dev = (list(read_conllu(dev_path)) if isinstance(dev_path, (str, Path))
           else list(dev_path or []))
    if jackknife > 1:
        sents = _jackknifed(sents, jackknife, seed)
    labels = sorted({w.deprel for s in sents for w in s.words})
    if "root" not in labels:
        raise ValueError("training data has no root label")
    lab_id = {lab: i for i, lab in enumerate(labels)}
    seen = set()
    keep = []
    for s in sents:
        gh = s.heads()
        gl = np.array([-1] + [lab_id[d] for d in s.deprels()[1:]], dtype=np.int64)
        ty, la, _, _ = oracle_sequence(gh, gl)
        if not passes and np.isin(ty, PASS_TYPES).any():
            continue
        keep.append(s)
        seen.update((int(t), labels[int(x)]) for t, x in zip(ty, la) if LABELED[t])
    if len(keep) < len(sents):
        logger.info("without PASS moves: %d of %d training trees left out", len(sents) - len(keep),
                    len(sents))
    sents = keep
    atype, alabel = action_table(labels, seen)
    if not passes:
        atype, alabel = atype[~np.isin(atype, PASS_TYPES)], alabel[~np.isin(atype, PASS_TYPES)]
    if n_rows is None:          # sized to the data and the actions, as the tagger's rows
        from models.text.tagger import auto_bits
        n_rows = 1 << auto_bits(sum(len(s.words) for s in sents), len(atype), MAX_CELLS)
    table = parse_templates(templates)
    attrs_tr = [_encode(s) for s in sents]
    if dev_tagger:
        dev = _retagged(dev, dev_tagger)
    attrs_dev = [_encode(s) for s in dev]
    gold, golds = build_examples(sents, attrs_tr, labels, atype, alabel, table, n_rows,
                                 explore=bool(bootstrap_rounds and dev))
    X, y, V = gold.filled()
    logger.info("%d sentences, %d examples, %d actions, %d templates (%.1fs)", len(sents),
                len(y), len(atype), len(templates), time.perf_counter() - t0)
    W = np.zeros((n_rows, len(atype)), dtype=np.float32)
    G = np.zeros_like(W)
    p = np.zeros(len(atype), np.float64)
    rng = np.random.default_rng(seed)
    data_hash = (hashlib.sha256(Path(train_path).read_bytes()).hexdigest()[:16]
                 if isinstance(train_path, (str, Path)) else None)
    meta = {"training": {"command": command,
                         "data": str(train_path) if data_hash else "<sentences>",
                         "data_sha256_16": data_hash,
                         "sentences": len(sents), "epochs": epochs, "alpha": alpha, "rho": rho,
                         "eps": eps, "bootstrapping": False,
                         "tags": f"{jackknife}-fold jackknifed" if jackknife > 1 else "gold",
                         "dev_tags": f"predicted ({dev_tagger})" if dev_tagger else "gold",
                         "passes": passes}}
    ckpt = _Checkpoint(checkpoint_dir)
    bar = progress_bar(epochs + (bootstrap_rounds * (bootstrap_epochs or epochs) if dev else 0),
                       "transition parser", "epoch")
    best, best_uas = None, -1.0      # best: `sparse_weights`, not a copy of W
    resumed = ckpt.load("epochs")
    if resumed is not None:
        best, saved_meta = resumed
        meta["training"].update(saved_meta["training"])
        bar.update(epochs)
    for ep in range(1, epochs + 1 if resumed is None else 1):
        order = rng.permutation(len(y)).astype(np.int64)
        te = time.perf_counter()
        loss, correct = adagrad_epoch(W, G, X, y, V, order, alpha, rho, eps, p)
        model = TransitionModel(labels, atype, alabel, list(templates), W, meta)
        msg = (f"epoch {ep}: loss {loss / len(y):.4f} train acc {100 * correct / len(y):.2f}"
               f" ({time.perf_counter() - te:.1f}s)")
        if dev:
            uas, las, _tps, secs = evaluate(model, dev, attrs_dev)
            msg += f" dev UAS {uas:.2f} LAS {las:.2f} ({secs:.1f}s)"
            if uas > best_uas:
                best = None              # freed before its successor is made
                best_uas, best = uas, sparse_weights(W)
                meta["training"]["best_epoch"] = ep
                meta["training"]["dev_uas_greedy"] = round(uas, 2)
                meta["training"]["dev_las_greedy"] = round(las, 2)
        logger.info(msg)
        bar.update(1)
    if best is None:             # no dev: the last epoch
        best = sparse_weights(W)
    del W, G                     # the dense tables: bootstrapping makes its own
    if resumed is None:
        ckpt.save("epochs", best, meta)
    model = TransitionModel(labels, atype, alabel, list(templates), None, meta,
                            compact(*best, n_rows, len(atype)))
    del best
    if bootstrap_rounds and dev:
        model, history = bootstrap(
            model, golds, attrs_tr, gold,
            lambda m: evaluate(m, dev, attrs_dev)[0], rounds=bootstrap_rounds,
            epochs=bootstrap_epochs or meta["training"].get("best_epoch", epochs), alpha=alpha,
            rho=rho, eps=eps, seed=seed, checkpoint=ckpt, progress=bar.update)
        meta["training"]["bootstrapping"] = {"rounds_run": len(history) - 1, "b_t": 1,
                                             "dev_uas_by_round": [round(u, 2) for _, u in history]}
        model.meta = meta
    bar.update(bar.total - bar.n)  # the planned rounds are at most: a round that loses ends it
    bar.close()
    if out_dir:
        model.save(out_dir, prune=prune)
        logger.info("saved %s", out_dir)
    return model


class _Checkpoint:
    """Sparse weights (the model file's gaps and float16 values) and their metadata at
    named points of training, one npz each, written atomically."""

    def __init__(self, directory: str | Path | None):
        self.directory = Path(directory) if directory else None

    def save(self, name: str, weights: tuple, meta: dict) -> None:
        """weights: (gaps, float16 values) of `sparse_weights`."""
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.directory / f"{name}.tmp.npz"
        np.savez(tmp, gaps=weights[0], value=weights[1], meta=np.array(json.dumps(meta)))
        tmp.replace(self.directory / f"{name}.npz")

    def load(self, name: str) -> tuple[tuple, dict] | None:
        path = None if self.directory is None else self.directory / f"{name}.npz"
        if path is None or not path.exists():
            return None
        with np.load(path) as d:
            logger.info("transition parser: resuming after %s", name)
            meta = json.loads(str(d["meta"]))
            if "W" in d.files:          # written by an earlier version: a dense table
                return sparse_weights(d["W"]), meta
            return (d["gaps"], d["value"]), meta


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="train the selectional-branching transition parser")
    ap.add_argument("train")
    ap.add_argument("--dev")
    ap.add_argument("--out")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--rows-log2", type=int, default=20)
    ap.add_argument("--alpha", type=float, default=0.02)
    ap.add_argument("--rho", type=float, default=0.1)
    ap.add_argument("--eps", type=float, default=1e-3)
    ap.add_argument("--prune", type=float, default=0.0)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--dev-tagger", help="re-tag dev with this model's front-end")
    ap.add_argument("--jackknife", type=int, default=0,
                    help="k-fold jackknifed training tags (0: the file's tags)")
    ap.add_argument("--bootstrap", type=int, default=0,
                    help="rounds of bootstrapping (needs --dev)")
    ap.add_argument("--bootstrap-epochs", type=int, help="epochs per round (default: best epoch)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    train(args.train, args.dev, args.out, epochs=args.epochs, n_rows=1 << args.rows_log2,
          alpha=args.alpha, rho=args.rho, eps=args.eps, prune=args.prune, limit=args.limit,
          jackknife=args.jackknife, dev_tagger=args.dev_tagger, bootstrap_rounds=args.bootstrap,
          bootstrap_epochs=args.bootstrap_epochs,
          command="python -m models.transition.train " + " ".join(argv or sys.argv[1:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
