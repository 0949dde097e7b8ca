"""Training of the neural tagger (`neural_tagger.py`) with JAX and optax.

Training time only (`pip install -e '.[train]'`); the trained model runs on numpy.
Cross-entropy over the joint (UPOS, XPOS) classes, Adam with a linear decay to 0,
dropout on the inputs and between layers, and word dropout: the form and lowercase
embeddings of a word seen f times are dropped with probability a / (a + f)
(Kiperwasser & Goldberg 2016, Section 6), so that rare words learn to lean on
affixes, clusters and GloVe vectors as unseen ones must.
"""
from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from models.text import wordclasses
from models.text.neural_tagger import PAD, UNKNOWN, NeuralTagger
from models.text.tagger import TYPE_FEATURES, Tagger
from models.text.word_vectors import WordVectors

logger = logging.getLogger(__name__)

# embedding width of each type-string column (`TYPE_FEATURES`, then `wordclasses.FEATURES`)
DIMS = {"w": 64, "l": 64, "flags": 8, "c4": 8, "cluster": 32}
DEFAULT_DIM = 16
MIN_COUNT = {"w": 2, "l": 2}       # rarer forms have no embedding of their own
BUCKETS = (8, 16, 24, 32, 48, 64, 96, 128, 256)
WEIGHTS = (2.0, 3.0, 4.0, 6.0, 8.0, 12.0)   # ensemble weights tried on dev


def _columns(linear: Tagger) -> list[str]:
    names = list(TYPE_FEATURES)
    if linear.word_classes is not None:
        names += list(wordclasses.FEATURES)
    return names


def _import_jax():
    try:
        import jax
        import jax.numpy as jnp
        import optax
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError("training the neural tagger needs jax and optax: "
                                  "pip install -e '.[train]'") from e
    return jax, jnp, optax


def cached_type_strings(linear: Tagger) -> Callable[[list[str]], list[list[str]]]:
    """`linear.type_strings` of a list of forms, each form's computed once: training
    reads every sentence each epoch."""
    strings: dict[str, list[str]] = {}

    def strings_of(forms: list[str]) -> list[list[str]]:
        for f in forms:
            if f not in strings:
                strings[f] = linear.type_strings([f])[0]
        return [strings[f] for f in forms]

    return strings_of


def init_params(key, columns: list[str], vocab: list[list[str]], vector_dims: int,
                vector_scale: float, hidden: int, layers: int, n_classes: int) -> dict:
    jax, jnp, _ = _import_jax()
    keys = iter(jax.random.split(key, 8 + len(columns) + 4 * layers))
    p = {}
    width = 0
    for c, name in enumerate(columns):
        d = DIMS.get(name, DEFAULT_DIM)
        p[f"emb{c}"] = jax.random.normal(next(keys), (len(vocab[c]) + 2, d)) * 0.1
        width += d
    p["proj"] = jnp.eye(vector_dims) * vector_scale
    width += vector_dims
    s = 1.0 / np.sqrt(hidden)
    for layer in range(layers):
        p[f"wx{layer}"] = jax.random.uniform(next(keys), (2, width, 4 * hidden), minval=-s,
                                             maxval=s)
        p[f"wh{layer}"] = jax.random.uniform(next(keys), (2, hidden, 4 * hidden), minval=-s,
                                             maxval=s)
        p[f"b{layer}"] = jnp.zeros((2, 4 * hidden)).at[:, hidden:2 * hidden].set(1.0)
        width = 2 * hidden
    if n_classes:                        # 0: the encoder only (`graph/neural_arcs.py`)
        p["wo"] = jax.random.normal(next(keys), (width, n_classes)) * 0.01
        p["bo"] = jnp.zeros(n_classes)
    return p


def make_forward(table: np.ndarray, n_columns: int, layers: int):
    """forward(params, ids [B, T, C + 1], lengths [B], key, keep_input, keep_hidden)
    -> logits [B, T, classes]; the same computation as `NeuralTagger.log_probs_of_ids`
    (before the softmax), with dropout when key is not None."""
    encoder = make_encoder(table, n_columns, layers)

    def forward(p, ids, lengths, key, keep_input, keep_hidden):
        return encoder(p, ids, lengths, key, keep_input, keep_hidden) @ p["wo"] + p["bo"]

    return forward


def make_encoder(table: np.ndarray, n_columns: int, layers: int):
    """encoder(params, ids [B, T, C + 1], lengths [B], key, keep_input, keep_hidden)
    -> top-layer states [B, T, 2H], as `neural_tagger.bilstm_states`, with dropout
    on the inputs and after each layer when key is not None."""
    jax, jnp, _ = _import_jax()
    vec = jnp.asarray(table)

    def lstm(xs, mask, wx, wh, b):
        gx = xs @ wx + b
        batch, hidden = xs.shape[0], wh.shape[0]

        def step(carry, inp):
            h, c = carry
            g, m = inp
            g = g + h @ wh
            i, f, o, u = jnp.split(g, 4, axis=-1)
            c2 = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(u)
            h2 = jax.nn.sigmoid(o) * jnp.tanh(c2)
            m = m[:, None]
            return (jnp.where(m, h2, h), jnp.where(m, c2, c)), h2

        zero = jnp.zeros((batch, hidden))
        _, hs = jax.lax.scan(step, (zero, zero),
                             (jnp.swapaxes(gx, 0, 1), jnp.swapaxes(mask, 0, 1)))
        return jnp.swapaxes(hs, 0, 1)

    def encode(p, ids, lengths, key, keep_input, keep_hidden):
        batch, n = ids.shape[:2]
        mask = jnp.arange(n)[None, :] < lengths[:, None]
        x = jnp.concatenate([p[f"emb{c}"][ids[:, :, c]] for c in range(n_columns)]
                            + [vec[ids[:, :, n_columns]] @ p["proj"]], axis=-1)
        if key is not None:
            key, k = jax.random.split(key)
            x = x * jax.random.bernoulli(k, keep_input, x.shape) / keep_input
        t = jnp.arange(n)[None, :]
        rev = jnp.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)
        rows = jnp.arange(batch)[:, None]
        for layer in range(layers):
            wx, wh, b = p[f"wx{layer}"], p[f"wh{layer}"], p[f"b{layer}"]
            fw = lstm(x, mask, wx[0], wh[0], b[0])
            bw = lstm(x[rows, rev], mask, wx[1], wh[1], b[1])[rows, rev]
            x = jnp.concatenate([fw, bw], axis=-1)
            if key is not None:
                key, k = jax.random.split(key)
                x = x * jax.random.bernoulli(k, keep_hidden, x.shape) / keep_hidden
        return x

    return encode


def _batches(ids: list[np.ndarray], gold: list[np.ndarray], order: Sequence[int],
             batch_tokens: int, pad_row: np.ndarray) -> list[tuple]:
    by: dict[int, list[int]] = {}
    for i in order:
        n = next((b for b in BUCKETS if b >= len(ids[i])), len(ids[i]))
        by.setdefault(n, []).append(i)
    out = []
    for n, idx in by.items():
        size = max(1, batch_tokens // n)
        for k in range(0, len(idx), size):
            part = idx[k:k + size]
            x = np.tile(pad_row, (len(part), n, 1))
            y = np.zeros((len(part), n), np.int32)
            for j, i in enumerate(part):
                x[j, :len(ids[i])] = ids[i]
                y[j, :len(ids[i])] = gold[i]
            out.append((x, y, np.array([len(ids[i]) for i in part], np.int32), part))
    return out


def make_step(opt, token_nll):
    """The jitted update `step(params, state, x, y, lengths, key) -> (params, state,
    loss)` of optimizer `opt` on the mean of token_nll(params, x, y, lengths, key)
    [B, T] over the real (unpadded) tokens."""
    jax, jnp, optax = _import_jax()

    def loss_fn(p, x, y, lengths, k):
        mask = jnp.arange(x.shape[1])[None, :] < lengths[:, None]
        return jnp.sum(token_nll(p, x, y, lengths, k) * mask) / jnp.sum(mask)

    @jax.jit
    def step(p, state, x, y, lengths, k):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y, lengths, k)
        updates, state = opt.update(grads, state, p)
        return optax.apply_updates(p, updates), state, loss

    return step


def train_epoch(step, params, state, key, ids: list[np.ndarray], gold: list[np.ndarray],
                counts_of: list[np.ndarray], rng: np.random.Generator, batch_tokens: int,
                pad_row: np.ndarray, word_dropout: float) -> tuple:
    """One pass over shuffled length-bucketed batches with word dropout: the form and
    lowercase ids of a word seen f times become UNKNOWN with probability a / (a + f).
    `step(params, state, x, y, lengths, key) -> (params, state, loss)` is the jitted
    update. Returns (params, state, key, mean batch loss)."""
    jax, jnp, _ = _import_jax()
    batches = _batches(ids, gold, rng.permutation(len(ids)), batch_tokens, pad_row)
    rng.shuffle(batches)
    total = 0.0
    for x, y, lengths, part in batches:
        for j, i in enumerate(part):
            f = counts_of[i]
            drop = rng.random(len(f)) < word_dropout / (word_dropout + f)
            x[j, :len(f)][drop, :2] = UNKNOWN
        key, k = jax.random.split(key)
        params, state, loss = step(params, state, jnp.asarray(x), jnp.asarray(y),
                                   jnp.asarray(lengths), k)
        total += float(loss)
    return params, state, key, total / len(batches)


def train_neural_tagger(sentences: Sequence[Sequence[Sequence[str]]], linear: Tagger,
                        vectors: WordVectors, *, hidden: int = 256, layers: int = 2,
                        epochs: int = 20, seed: int = 0, learning_rate: float = 2e-3,
                        keep_input: float = 0.7, keep_hidden: float = 0.5,
                        word_dropout: float = 0.25, batch_tokens: int = 800,
                        dev: Sequence[Sequence[Sequence[str]]] | None = None,
                        progress: Callable[[str], None] | None = None
                        ) -> tuple[NeuralTagger, float, dict]:
    """Train on sentences of (form, upos, xpos, ...) tuples, over `linear`'s word
    strings and classes. Returns the tagger, the ensemble weight (the best of
    `WEIGHTS` on dev after the last epoch, 6 without dev) and per-epoch figures."""
    jax, _, optax = _import_jax()
    say = progress or logger.info
    columns = _columns(linear)
    classes = [tuple(c) for c in linear.classes]
    cindex = {c: i for i, c in enumerate(classes)}
    strings_of = cached_type_strings(linear)

    counts = [Counter() for _ in columns]
    freq = Counter()
    for s in sentences:
        for w, st in zip(s, strings_of([w[0] for w in s])):
            freq[w[0]] += 1
            for c, v in enumerate(st):
                counts[c][v] += 1
    vocab = [sorted(v for v, n in cnt.items() if n >= MIN_COUNT.get(name, 1))
             for name, cnt in zip(columns, counts)]
    norms = np.sqrt((vectors.table ** 2).sum(1))
    shell = NeuralTagger(classes, vocab, {}, vectors)      # for its `ids` only

    def encode(sents):
        ids = [shell.ids([w[0] for w in s], strings_of) for s in sents]
        gold = [np.array([cindex.get((w[1], w[2]), 0) for w in s], np.int32) for s in sents]
        return ids, gold

    ids, gold = encode(sentences)
    counts_of = [np.array([freq[w[0]] for w in s], np.float64) for s in sentences]
    key = jax.random.PRNGKey(seed)
    key, k = jax.random.split(key)
    params = init_params(k, columns, vocab, vectors.dims, 5.0 / max(float(norms.max()), 1e-8),
                         hidden, layers, len(classes))
    forward = make_forward(vectors.table, len(columns), layers)
    pad_row = np.array([PAD] * len(columns) + [0], np.int64)
    rng = np.random.default_rng(seed)
    n_batches = len(_batches(ids, gold, range(len(ids)), batch_tokens, pad_row))
    schedule = optax.linear_schedule(learning_rate, 0.0, epochs * n_batches)
    opt = optax.adam(schedule)
    state = opt.init(params)

    def token_nll(p, x, y, lengths, k):
        return optax.softmax_cross_entropy_with_integer_labels(
            forward(p, x, lengths, k, keep_input, keep_hidden), y)

    step = make_step(opt, token_nll)

    dev_ids = dev_gold = dev_linear = None
    if dev:
        dev_ids, dev_gold = encode(dev)
        dev_linear = [linear.scores([w[0] for w in s]) for s in dev]
    history: list[dict] = []
    tagger = None
    for epoch in range(epochs):
        t0 = time.time()
        params, state, key, loss = train_epoch(step, params, state, key, ids, gold, counts_of,
                                               rng, batch_tokens, pad_row, word_dropout)
        tagger = NeuralTagger(classes, vocab, {k: np.asarray(v) for k, v in params.items()},
                              vectors, {"columns": columns, "hidden": hidden,
                                        "layers": layers, "epochs": epochs, "seed": seed})
        row = {"epoch": epoch + 1, "loss": round(loss, 4),
               "seconds": round(time.time() - t0, 1)}
        if dev:
            row.update(_dev_figures(tagger, dev_ids, dev_gold, dev_linear, classes))
        history.append(row)
        say(f"epoch {epoch + 1}/{epochs}: " + ", ".join(f"{k} {v}" for k, v in row.items()
                                                        if k != "epoch"))
    weight = 6.0
    if dev:
        last = history[-1]
        weight = max(WEIGHTS, key=lambda w: (last[f"upos_w{w:g}"] + last[f"xpos_w{w:g}"], -w))
    tagger.meta["weight"] = weight
    return tagger, weight, {"history": history, "columns": columns}


def _dev_figures(tagger: NeuralTagger, ids, gold, linear_scores, classes) -> dict:
    """UPOS / XPOS accuracy (%) of the neural tagger alone and of the ensemble at
    each of `WEIGHTS`."""
    upos = np.array([c[0] for c in classes])
    xpos = np.array([c[1] for c in classes])
    y = np.concatenate(gold)
    lp = [tagger.log_probs_of_ids(x) for x in ids]
    lin = np.concatenate(linear_scores)
    neural = np.concatenate(lp)

    def acc(pred):
        return (round(100 * float(np.mean(upos[pred] == upos[y])), 2),
                round(100 * float(np.mean(xpos[pred] == xpos[y])), 2))

    out = {}
    out["upos_neural"], out["xpos_neural"] = acc(neural.argmax(1))
    for w in WEIGHTS:
        out[f"upos_w{w:g}"], out[f"xpos_w{w:g}"] = acc((lin + neural / w).argmax(1))
    return out

