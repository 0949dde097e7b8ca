"""Training of the neural arc scorer (`neural_arcs.py`) with JAX and optax.

Training time only (`pip install -e '.[train]'`). Cross-entropy of the gold head
of every word (Dozat & Manning 2017, Section 2.2), Adam (beta2 0.9) with a linear
decay to 0 and gradient clipping, dropout on the inputs, between the BiLSTM
layers and on the MLP outputs, and the tagger's word dropout
(`text/neural_tagger_train.py`). Inputs are the accurate tagger's: its
vocabulary and word vectors, with its encoder's shapes but weights of its own.
"""
from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from models.conllu import read_conllu
from models.graph.neural_arcs import NeuralArcScorer
from models.text.neural_tagger import PAD, NeuralTagger
from models.text.neural_tagger_train import (
    _batches,
    _import_jax,
    cached_type_strings,
    init_params,
    make_encoder,
    make_step,
    train_epoch,
)
from models.text.tagger import Tagger

logger = logging.getLogger(__name__)


def _biaffine_init(key, width: int, arc_dims: int) -> dict:
    jax, jnp, _ = _import_jax()
    k = iter(jax.random.split(key, 4))
    return {"root": jax.random.normal(next(k), (width,)) * 0.1,
            "head_w": jax.random.normal(next(k), (width, arc_dims)) * 0.05,
            "head_b": jnp.zeros(arc_dims),
            "dep_w": jax.random.normal(next(k), (width, arc_dims)) * 0.05,
            "dep_b": jnp.zeros(arc_dims),
            "U": jnp.zeros((arc_dims, arc_dims)), "u": jnp.zeros(arc_dims)}


def make_arc_forward(table: np.ndarray, n_columns: int, layers: int):
    """forward(params, ids [B, T, C + 1], lengths [B], key, keep_input, keep_hidden)
    -> log P(head | dep) [B, T, T + 1] (head 0 = root); the computation of
    `NeuralArcScorer.log_probs_of_ids` (transposed), with dropout when key is set."""
    jax, jnp, _ = _import_jax()
    encode = make_encoder(table, n_columns, layers)

    def forward(p, ids, lengths, key, keep_input, keep_hidden):
        batch, n = ids.shape[:2]
        sub = None
        if key is not None:
            key, sub = jax.random.split(key)
        x = encode(p, ids, lengths, sub, keep_input, keep_hidden)
        states = jnp.concatenate([jnp.broadcast_to(p["root"], (batch, 1, x.shape[-1])), x], 1)
        head = jax.nn.relu(states @ p["head_w"] + p["head_b"])
        dep = jax.nn.relu(x @ p["dep_w"] + p["dep_b"])
        if key is not None:
            k1, k2 = jax.random.split(key)
            head = head * jax.random.bernoulli(k1, keep_hidden, head.shape) / keep_hidden
            dep = dep * jax.random.bernoulli(k2, keep_hidden, dep.shape) / keep_hidden
        s = jnp.einsum("bda,ac,bhc->bdh", dep, p["U"], head) + (head @ p["u"])[:, None, :]
        real_head = jnp.arange(n + 1)[None, :] <= lengths[:, None]
        s = jnp.where(real_head[:, None, :], s, -1e9)
        itself = jnp.arange(n)[:, None] + 1 == jnp.arange(n + 1)[None, :]
        s = jnp.where(itself[None], -1e9, s)
        return jax.nn.log_softmax(s, -1)

    return forward


def train_arc_scorer(sentences: Sequence[Sequence[tuple[str, int]]], linear: Tagger,
                     inputs: NeuralTagger, *, hidden: int = 256, layers: int = 2,
                     arc_dims: int = 256, epochs: int = 12, seed: int = 0,
                     learning_rate: float = 2e-3, keep_input: float = 0.7,
                     keep_hidden: float = 0.67, word_dropout: float = 0.25,
                     batch_tokens: int = 800,
                     dev: Sequence[Sequence[tuple[str, int]]] | None = None,
                     progress: Callable[[str], None] | None = None
                     ) -> tuple[NeuralArcScorer, dict]:
    """Train on sentences of (form, head) pairs over `inputs`' vocabulary and vectors
    (the words' strings from `linear.type_strings`). Returns the scorer and per-epoch
    figures (loss; with dev, the UAS of its own argmax heads)."""
    jax, jnp, optax = _import_jax()
    say = progress or logger.info
    columns = list(inputs.meta["columns"])      # names: the embedding widths follow them
    strings_of = cached_type_strings(linear)

    def encode(sents):
        ids = [inputs.ids([w[0] for w in s], strings_of) for s in sents]
        heads = [np.array([w[1] for w in s], np.int32) for s in sents]
        return ids, heads

    freq = Counter(w[0] for s in sentences for w in s)
    ids, heads = encode(sentences)
    counts_of = [np.array([freq[w[0]] for w in s], np.float64) for s in sentences]
    key = jax.random.PRNGKey(seed)
    key, k1, k2 = jax.random.split(key, 3)
    norms = np.sqrt((inputs.vectors.table ** 2).sum(1))
    params = init_params(k1, columns, inputs.vocab, inputs.vectors.dims,
                         5.0 / max(float(norms.max()), 1e-8), hidden, layers, 0)
    params.update(_biaffine_init(k2, 2 * hidden, arc_dims))
    forward = make_arc_forward(inputs.vectors.table, len(inputs.vocab), layers)
    pad_row = np.array([PAD] * len(inputs.vocab) + [0], np.int64)
    rng = np.random.default_rng(seed)
    n_batches = len(_batches(ids, heads, range(len(ids)), batch_tokens, pad_row))
    opt = optax.chain(optax.clip_by_global_norm(5.0),
                      optax.adam(optax.linear_schedule(learning_rate, 0.0, epochs * n_batches),
                                 b2=0.9))
    state = opt.init(params)

    def token_nll(p, x, y, lengths, k):
        lp = forward(p, x, lengths, k, keep_input, keep_hidden)
        return -jnp.take_along_axis(lp, y[:, :, None], -1)[:, :, 0]

    step = make_step(opt, token_nll)

    dev_ids, dev_heads = encode(dev) if dev else (None, None)
    meta = {"hidden": hidden, "layers": layers, "arc_dims": arc_dims, "epochs": epochs,
            "seed": seed}
    history: list[dict] = []
    scorer = None
    for epoch in range(epochs):
        t0 = time.time()
        params, state, key, loss = train_epoch(step, params, state, key, ids, heads, counts_of,
                                               rng, batch_tokens, pad_row, word_dropout)
        scorer = NeuralArcScorer(inputs, {k: np.asarray(v) for k, v in params.items()}, meta)
        row = {"epoch": epoch + 1, "loss": round(loss, 4),
               "seconds": round(time.time() - t0, 1)}
        if dev:
            row["dev_uas_argmax"] = argmax_uas(scorer, dev_ids, dev_heads)
        history.append(row)
        say(f"epoch {epoch + 1}/{epochs}: " + ", ".join(f"{k} {v}" for k, v in row.items()
                                                        if k != "epoch"))
    return scorer, {"history": history}


def argmax_uas(scorer: NeuralArcScorer, ids: Sequence[np.ndarray],
               heads: Sequence[np.ndarray]) -> float:
    """UAS (%) of each word's most likely head alone (no tree constraint)."""
    right = sum(int((scorer.log_probs_of_ids(x)[:, 1:].argmax(0) == h).sum())
                for x, h in zip(ids, heads))
    return round(100 * right / max(1, sum(len(h) for h in heads)), 2)


def train_neural_arcs(train_path: str, dev_path: str | None, model_dir: str,
                      out_dir: str | None = None, *, epochs: int = 12, seed: int = 0,
                      hidden: int = 256, arc_dims: int = 256) -> dict:
    """Train the arc scorer of the pipeline in model_dir over its accurate tagger's
    inputs (frontend/neural); write it to out_dir (default model_dir/arcs) with
    metrics.json and return the metrics."""
    fe = os.path.join(model_dir, "frontend")
    linear = Tagger.load(os.path.join(fe, "tagger"))
    inputs = NeuralTagger.load(os.path.join(fe, "neural"))
    out_dir = out_dir or os.path.join(model_dir, "arcs")
    train = list(read_conllu(train_path))
    dev = list(read_conllu(dev_path)) if dev_path else []

    def pairs(sents):
        return [[(w.form, w.head) for w in s.words] for s in sents]

    logger.info("training the neural arc scorer on %d sentences (%s)", len(train), train_path)
    t0 = time.perf_counter()
    scorer, info = train_arc_scorer(pairs(train), linear, inputs, epochs=epochs, seed=seed,
                                    hidden=hidden, arc_dims=arc_dims,
                                    dev=pairs(dev) if dev else None)
    scorer.save(out_dir)
    metrics = {"train": train_path, "dev": dev_path, "epochs": epochs, "seed": seed,
               "hidden": hidden, "arc_dims": arc_dims,
               "seconds": round(time.perf_counter() - t0, 1), "history": info["history"]}
    if dev:                                  # the saved (float16) model, as a pipeline loads it
        saved = NeuralArcScorer.load(out_dir, inputs)
        ids = [inputs.ids([w.form for w in s.words], linear.type_strings) for s in dev]
        metrics["dev_uas_argmax"] = argmax_uas(
            saved, ids, [np.array([w.head for w in s.words]) for s in dev])
    with open(os.path.join(out_dir, "metrics.json"), "w", encoding="utf-8") as f:
        json.dump(metrics, f, indent=1)
    return metrics
