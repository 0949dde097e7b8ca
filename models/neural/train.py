"""Training of the neural analyser (`network.py`) with JAX and optax.

Training time only (`pip install -e '.[train]'`). One loss, summed over the words
of a batch: cross-entropy of the gold (UPOS, XPOS) class, of the gold FEATS, of the
gold head among all words and the root, and of the gold relation given the gold
head (Dozat & Manning 2017, Section 2.2: arcs and labels are trained jointly, the
labels on gold arcs). Adam (beta2 0.9) with a linear warm-up and decay, gradient
clipping, dropout on the inputs, between layers and on the classifiers' ReLU
layers, and word dropout: the form of a word seen f times is unknown with
probability a / (a + f) (Kiperwasser & Goldberg 2016, Section 6), so rare words
learn to lean on their characters as unseen ones must. The epoch with the best
development LAS (each word's most likely head) is kept, among the epochs evaluated
(`evaluated`: all of a run of up to 100 epochs, evenly spaced ones of a longer run);
each of those ends in a checkpoint, so an interrupted run resumes where it stopped.
Given a budget of seconds, a run measures its epochs and plans fewer where the rest
would not fit (`affordable_epochs`); its learning rate then decays to 0 sooner.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from models.contextual.features import ContextualFeatures
from models.neural.batches import Encoded, Word, to_device
from models.neural.checkpoint import Checkpoint
from models.neural.jax_net import NO_ARC, import_jax, init_params, label_scores, make_forward
from models.neural.network import NeuralAnalyser
from models.neural.precision import resolve
from models.neural.schedule import (
    Schedule,
    affordable_epochs,
    make_optimizer,
    make_schedule,
    with_rate,
)
from models.neural.vocab import Lookup, Vocab
from models.progress import progress_bar
from models.text.word_vectors import WordVectors

logger = logging.getLogger(__name__)



@dataclass
class NeuralConfig:
    word_dim: int = 100
    char_dim: int = 32
    char_filters: int = 128
    char_width: int = 3
    affix_dim: int = 16            # per affix column (`vocab.AFFIXES`); 0: none
    vector_dim: int = 100          # projection of the pretrained vectors, if any
    context_dim: int = 256         # projection of the contextual encoder's mix, if any
    hidden: int = 256              # LSTM units per direction
    layers: int = 2
    arc_dim: int = 256
    label_dim: int = 100
    epochs: int = 0                # 0: `auto_epochs` of the training set's size
    batch_tokens: int = 1500
    learning_rate: float = 2e-3
    warmup_steps: int = 200
    keep_input: float = 0.67
    keep_hidden: float = 0.67
    word_dropout: float = 0.25
    label_smoothing: float = 0.0   # share of each loss spread over the possible answers
    seed: int = 0
    precision: str = "auto"        # matrix products: 'bf16', 'f32'; auto: `precision.resolve`


WORDS_SEEN = 12_000_000    # words the neural stage trains on in all, over its analysers
MAX_EPOCHS = 1200
EVALUATIONS = 100          # dev evaluations (and checkpoints) of a run at most


def auto_epochs(n_words: int, analysers: int = 1) -> int:
    """Epochs for each of `analysers` trained on n_words to see WORDS_SEEN words in
    all: one analyser of en_ewt (205k words) gets 59 epochs, each of a pair on 20k
    words 300, at most 1,200. A small treebank takes many passes: in the default
    request on hu_szeged dev, two analysers of 569 epochs beat two of 300 on its first
    10.5k words by 0.7 / 0.7 UAS / LAS, and two of 1,198 beat two of 600 on its first
    5k words by 0.7 / 0.9; on en_ewt dev, one of 60 epochs beat one of 30 by 0.32 /
    0.39 (bench/journal/12-any-treebank.md, "Tiny treebanks: 600 epochs", "Tiny
    treebanks: 1,200 epochs" and "en_ewt: one analyser, twice the words")."""
    words = WORDS_SEEN / max(1, analysers)
    return int(min(MAX_EPOCHS, max(15, math.ceil(words / max(1, n_words)))))


def evaluated(epoch: int, epochs: int) -> bool:
    """Whether epoch (1-based) of `epochs` ends in a dev evaluation and a checkpoint:
    every one up to EVALUATIONS epochs, then evenly spaced, and always the last."""
    return epoch % math.ceil(epochs / EVALUATIONS) == 0 or epoch == epochs


# ---- training -------------------------------------------------------------------------
def release_freed_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim; nothing
    elsewhere). XLA's compiler frees ~400 MB a program that glibc would keep: without
    this, the analyser's process on 5,000 long sentences stayed at 1.4-1.6 GB between
    compiles instead of 1.05-1.15 and peaked at 1.7-1.9 GB instead of 1.6
    (bench/journal/12-any-treebank.md, "Peak memory at 5,000 sentences")."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    """glibc's malloc_trim, or None; looked up once (`find_library` runs `ldconfig`)."""
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None


def make_step(cfg: NeuralConfig, table: np.ndarray | None, n_affix: int, opt,
              precision: str, context: bool = False):
    """The jitted step (params, optimizer state, batch, key) -> (params, state, loss):
    one optimizer update on the mean per word of the negative log-likelihoods of its
    tag, FEATS, head and relation (the relation of the gold head), with dropout. With
    `cfg.label_smoothing` > 0 each is label-smoothed (Szegedy et al. 2016, Section 7):
    that share of it is the mean negative log-likelihood of the word's possible answers
    (for heads, the words of its sentence and the root)."""
    jax, jnp, optax = import_jax()
    forward = make_forward(table, cfg.layers, n_affix, precision, context)
    eps = cfg.label_smoothing

    def loss_fn(p, batch, k):
        out = forward(p, batch, k, cfg.keep_input, cfg.keep_hidden)
        mask = batch["seg"] >= 0

        def nll(logp, gold):
            gold_nll = -jnp.take_along_axis(logp, gold[..., None], -1)[..., 0]
            if not eps:
                return gold_nll
            possible = logp > NO_ARC / 2               # not a head the word cannot take
            spread = -(jnp.sum(jnp.where(possible, logp, 0.0), -1)
                       / jnp.maximum(jnp.sum(possible, -1), 1))
            return (1 - eps) * gold_nll + eps * spread

        lab = jax.nn.log_softmax(label_scores(p, out["lab_head"], out["lab_dep"],
                                              batch["heads"], precision))
        total = (nll(out["tag"], batch["tags"]) + nll(out["feats"], batch["feats"])
                 + nll(out["arc"], batch["heads"]) + nll(lab, batch["labels"]))
        return jnp.sum(total * mask) / jnp.maximum(jnp.sum(mask), 1)

    @jax.jit
    def step(p, s, batch, k):
        loss, grads = jax.value_and_grad(loss_fn)(p, batch, k)
        updates, s = opt.update(grads, s, p)
        return optax.apply_updates(p, updates), s, loss

    return step


def train_analyser(train: Sequence[Sequence[Word]], dev: Sequence[Sequence[Word]],
                   cfg: NeuralConfig | None = None, *, classes=None,
                   vectors: WordVectors | None = None, checkpoint_dir: str | Path | None = None,
                   progress: Callable[[str], None] | None = None,
                   seconds: float | None = None,
                   context: ContextualFeatures | None = None) -> NeuralAnalyser:
    """Train on sentences of (form, upos, xpos, feats, head, deprel) words; keep the
    epoch of best LAS on dev (each word's most likely head). `classes` fixes the tag
    classes (a linear tagger's, to add the two taggers' scores). With `seconds`, the run
    trains fewer epochs than planned where its epochs show the plan would take longer
    (`affordable_epochs`), counting those of an interrupted run. With `context`, the
    analyser also reads the encoder's states of each word, frozen: they are computed
    once (and kept in checkpoint_dir, `encoder_states`)."""
    jax, jnp, _ = import_jax()
    cfg = cfg or NeuralConfig()
    say = progress or logger.info
    vocab = Vocab.build([[(w[0], w[1], w[2], w[3], w[5]) for w in s] for s in train], classes)
    if not cfg.affix_dim:
        vocab = replace(vocab, affixes=())
    lookup = Lookup(vocab)
    ckdir = None if checkpoint_dir is None else Path(checkpoint_dir)
    data = Encoded(train, lookup, vectors,
                   None if context is None else encoder_states(context, train, ckdir, "train"))
    held = Encoded(dev, lookup, vectors,
                   None if context is None else encoder_states(context, dev, ckdir, "dev"))
    n_words = sum(len(s) for s in train)
    epochs = cfg.epochs or auto_epochs(n_words)
    rng = np.random.default_rng(cfg.seed)
    n_batches = len(data.batches(range(len(data)), cfg.batch_tokens))
    planned = epochs
    schedule = make_schedule(cfg, epochs * n_batches)
    opt = make_optimizer(cfg)
    key = jax.random.PRNGKey(cfg.seed)
    key, k0 = jax.random.split(key)
    params = init_params(k0, vocab, cfg, vectors, None if context is None else context.dims)
    state = opt.init(params)
    precision = resolve(cfg.precision, n_words)
    table = None if vectors is None else vectors.table
    ctx = context is not None
    step = make_step(cfg, table, len(vocab.affixes), opt, precision, ctx)
    exact = make_forward(table, cfg.layers, len(vocab.affixes), "f32", ctx)   # as inference

    @jax.jit
    def predict(p, batch):
        out = exact(p, batch, None, 1.0, 1.0)
        heads = jnp.argmax(out["arc"], -1)
        labels = jnp.argmax(label_scores(p, out["lab_head"], out["lab_dep"], heads), -1)
        return jnp.argmax(out["tag"], -1), heads, labels

    def evaluate(p) -> dict:
        right = np.zeros(4)
        words = 0
        for part in held.batches(range(len(held)), cfg.batch_tokens):
            b = held.arrays(part, cfg.batch_tokens, None, 0.0)
            tags, heads, labels = (np.asarray(x) for x in predict(p, to_device(b)))
            real = b["seg"] >= 0
            ok_h = heads == b["heads"]
            ok_l = labels == b["labels"]
            right += [(tags == b["tags"])[real].sum(), ok_h[real].sum(),
                      (ok_h & ok_l)[real].sum(), 0]
            words += int(real.sum())
        w = max(1, words)
        return {"tags": round(100 * right[0] / w, 2), "uas": round(100 * right[1] / w, 2),
                "las": round(100 * right[2] / w, 2)}

    best, history, start = params, [], 0
    compiled: set[tuple[int, ...]] = set()
    resumed = Checkpoint(checkpoint_dir).load(params, state)
    if resumed is not None:
        start, params, state, best, history, key, plan = resumed
        key = jnp.asarray(key)
        rng = np.random.default_rng([cfg.seed, start])
        if plan.get("planned") == epochs and plan["epochs"] != epochs:   # replanned before
            epochs = plan["epochs"]
            schedule = Schedule(schedule.peak, schedule.warmup, plan["total"],
                                tuple(plan["start"]) if plan.get("start") else None)
    ckpt = Checkpoint(checkpoint_dir)
    say(f"neural analyser: {len(train)} sentences, {len(vocab.words)} words, "
        f"{len(vocab.chars)} characters, {len(vocab.classes)} tag classes, "
        f"{len(vocab.labels)} relations; {epochs} epochs of {n_batches} batches; "
        f"{precision} matrix products"
        + (f"; a budget of {seconds:.0f} s" if seconds is not None else ""))
    bar = progress_bar(total=epochs * n_batches, initial=start * n_batches,
                       desc="neural analyser", unit="batch")
    try:
        epoch = start
        while epoch < epochs:
            t0 = time.time()
            losses = []
            batches = data.batches(rng.permutation(len(data)), cfg.batch_tokens)
            compiling = 0.0
            for i, b in enumerate(rng.permutation(len(batches))):
                state = with_rate(state, schedule(epoch * n_batches + i))
                arrays = data.arrays(batches[b], cfg.batch_tokens, rng, cfg.word_dropout)
                key, k = jax.random.split(key)
                shape = arrays["words"].shape
                if shape not in compiled:        # compiling peaks: start it low
                    release_freed_memory()
                t1 = time.time()
                params, state, loss = step(params, state, to_device(arrays), k)
                if shape not in compiled:        # the first step of a shape compiles it
                    loss.block_until_ready()
                    compiled.add(shape)
                    compiling += time.time() - t1
                    release_freed_memory()
                losses.append(loss)
                bar.update(1)
            # an epoch's batch count varies with its order: end it where the plan does
            bar.update((epoch + 1) * n_batches - bar.n)
            row = {"epoch": epoch + 1, "loss": round(float(np.mean([float(x) for x in losses])),
                                                     4),
                   "seconds": round(time.time() - t0 - compiling, 1)}
            if compiling:
                row["compile_seconds"] = round(compiling, 1)
            check = evaluated(epoch + 1, epochs)
            t0 = time.time()
            if len(held) and check:
                release_freed_memory()           # the first compiles the dev programs
                row.update(evaluate(params))
                release_freed_memory()
                if row["las"] > max((r.get("las", -1) for r in history), default=-1):
                    best = params
                row["dev_seconds"] = round(time.time() - t0, 1)
            elif not len(held):
                best = params
            history.append(row)
            bar.set_postfix({k: v for k, v in row.items() if k in ("loss", "uas", "las")})
            say(f"neural analyser epoch {epoch + 1}/{epochs}: "
                + ", ".join(f"{k} {v}" for k, v in row.items() if k != "epoch"))
            fits = affordable_epochs(history, planned, seconds) if epoch + 1 < epochs else epochs
            if fits != epochs:
                if epochs == planned:
                    say(f"neural analyser: {fits} epochs instead of {epochs}, to train "
                        f"within {seconds:.0f} s")
                epochs = fits
                schedule.replan((epoch + 1) * n_batches, epochs * n_batches)
                bar.total = epochs * n_batches
                bar.refresh()
                check = check or evaluated(epoch + 1, epochs)
            if check:
                ckpt.save(epoch + 1, params, state, best, history, key,
                          {"planned": planned, "epochs": epochs, "total": schedule.total,
                           "start": schedule.start})
            epoch += 1
    finally:
        bar.close()
    best_row = max(history, key=lambda r: r.get("las", 0)) if history else {}
    meta = {"config": asdict(cfg), "precision": precision, "epochs": epochs, "history": history,
            **({"planned_epochs": planned, "budget_seconds": round(seconds)}
               if seconds is not None else {}),
            "best_epoch": best_row.get("epoch"), "dev": {k: best_row[k] for k in
                                                        ("tags", "uas", "las") if k in best_row}}
    return NeuralAnalyser(vocab, {k: np.asarray(v) for k, v in best.items()}, vectors, meta,
                          context)


STATES_CHUNK = 256         # sentences per call of the encoder (one step of its bar)


def encoder_states(context: ContextualFeatures, sentences: Sequence[Sequence[Word]],
                   directory: Path | None, part: str) -> list[np.ndarray]:
    """float16 [n, L, H] per sentence: the encoder's states of its words, computed
    with a progress bar, or read back from `directory` where an earlier run of the
    same encoder and layers on the same words left them."""
    forms = [[w[0] for w in s] for s in sentences]
    key = hashlib.sha256(json.dumps([context.spec.to_json(), forms]).encode()).hexdigest()[:16]
    path = None if directory is None else directory / f"encoder-{part}-{key}.npy"
    lengths = np.array([len(f) for f in forms], np.int64)
    if path is not None and path.exists():
        flat = np.load(path, mmap_mode="r")
        if flat.shape[0] == lengths.sum():
            logger.info("the encoder's states of %s read back from %s", part, path)
            return np.split(np.asarray(flat), np.cumsum(lengths)[:-1])
    out: list[np.ndarray] = []
    bar = progress_bar(total=len(forms), desc=f"encoder states ({part})", unit="sentence")
    try:
        order = sorted(range(len(forms)), key=lambda i: len(forms[i]))
        got: dict[int, np.ndarray] = {}
        for k in range(0, len(order), STATES_CHUNK):
            chunk = order[k:k + STATES_CHUNK]
            for i, x in zip(chunk, context.sentences([forms[i] for i in chunk])):
                got[i] = x.astype(np.float16)
            bar.update(len(chunk))
        out = [got[i] for i in range(len(forms))]
    finally:
        bar.close()
    if path is not None and out:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, np.concatenate(out))
        tmp.replace(path)
    return out

