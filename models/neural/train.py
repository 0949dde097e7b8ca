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
development LAS (each word's most likely head) is kept. Every epoch ends in a
checkpoint, so an interrupted run resumes where it stopped.
"""
from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from models.neural.network import NeuralAnalyser
from models.neural.vocab import MAX_CHARS, PAD, UNKNOWN, Lookup, Vocab
from models.progress import progress_bar
from models.text.word_vectors import WordVectors

logger = logging.getLogger(__name__)

ROW = 128                # positions of a batch row (`Encoded.batches`)
# one word: (form, upos, xpos, feats, head, deprel)
Word = tuple[str, str, str, str, int, str]


@dataclass
class NeuralConfig:
    word_dim: int = 100
    char_dim: int = 32
    char_filters: int = 128
    char_width: int = 3
    affix_dim: int = 16            # per affix column (`vocab.AFFIXES`); 0: none
    vector_dim: int = 100          # projection of the pretrained vectors, if any
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
    seed: int = 0


def auto_epochs(n_words: int) -> int:
    """About 3M words seen in all: 15 epochs of en_ewt (205k words), 80 of a treebank
    of 40k words or less, where each epoch is cheap and more passes still help."""
    return int(min(80, max(15, math.ceil(3_000_000 / max(1, n_words)))))


def _import_jax():
    try:
        import jax
        import jax.numpy as jnp
        import optax
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError("training the neural analyser needs jax and optax: "
                                  "pip install -e '.[train]'") from e
    return jax, jnp, optax


# ---- the network in JAX ---------------------------------------------------------------
def init_params(key, vocab: Vocab, cfg: NeuralConfig, vectors: WordVectors | None) -> dict:
    jax, jnp, _ = _import_jax()
    keys = iter(jax.random.split(key, 32 + 4 * cfg.layers))

    def normal(shape, scale):
        return jax.random.normal(next(keys), shape) * scale

    def dense(n_in, n_out):                 # Glorot-uniform
        s = math.sqrt(6.0 / (n_in + n_out))
        return jax.random.uniform(next(keys), (n_in, n_out), minval=-s, maxval=s)

    p = {"word_emb": normal((len(vocab.words) + 2, cfg.word_dim), 0.1),
         "char_emb": normal((len(vocab.chars) + 4, cfg.char_dim), 0.1),
         "char_conv": normal((cfg.char_width, cfg.char_dim, cfg.char_filters),
                             1.0 / math.sqrt(cfg.char_width * cfg.char_dim)),
         "char_b": jnp.zeros(cfg.char_filters)}
    width = cfg.word_dim + cfg.char_filters
    for c, col in enumerate(vocab.affixes if cfg.affix_dim else ()):
        p[f"affix{c}"] = normal((len(col) + 1, cfg.affix_dim), 0.1)
        width += cfg.affix_dim
    if vectors is not None:
        norms = np.sqrt((vectors.table ** 2).sum(1))
        p["vec_proj"] = dense(vectors.dims, cfg.vector_dim) * (
            math.sqrt(vectors.dims) / max(float(np.median(norms[1:])), 1e-6))
        width += cfg.vector_dim
    h = cfg.hidden
    s = 1.0 / math.sqrt(h)
    for layer in range(cfg.layers):
        p[f"wx{layer}"] = jax.random.uniform(next(keys), (2, width, 4 * h), minval=-s, maxval=s)
        p[f"wh{layer}"] = jax.random.uniform(next(keys), (2, h, 4 * h), minval=-s, maxval=s)
        p[f"b{layer}"] = jnp.zeros((2, 4 * h)).at[:, h:2 * h].set(1.0)   # forget gate open
        width = 2 * h
    p["tag_w"], p["tag_b"] = dense(width, len(vocab.classes)), jnp.zeros(len(vocab.classes))
    p["feats_w"], p["feats_b"] = dense(width, len(vocab.feats)), jnp.zeros(len(vocab.feats))
    p["root"] = normal((width,), 0.1)
    for name, dim in (("arc", cfg.arc_dim), ("lab", cfg.label_dim)):
        p[f"{name}_hw"], p[f"{name}_hb"] = dense(width, dim), jnp.zeros(dim)
        p[f"{name}_dw"], p[f"{name}_db"] = dense(width, dim), jnp.zeros(dim)
    p["arc_U"], p["arc_u"] = jnp.zeros((cfg.arc_dim, cfg.arc_dim)), jnp.zeros(cfg.arc_dim)
    r = len(vocab.labels)
    p["lab_U"] = jnp.zeros((r, cfg.label_dim, cfg.label_dim))
    p["lab_Wh"], p["lab_Wd"] = dense(cfg.label_dim, r), dense(cfg.label_dim, r)
    p["lab_b"] = jnp.zeros(r)
    return p


def make_forward(table: np.ndarray | None, layers: int, n_affix: int = 0):
    """forward(params, batch, key, keep_input, keep_hidden) -> dict of "tag", "feats"
    log-probabilities [B, T, *], "arc" log P(head | dep) [B, T, T + 1] (head 0 the
    root, head k + 1 the word at row position k), "lab_head" [B, T + 1, L] and
    "lab_dep" [B, T, L]: what `NeuralAnalyser` computes, with dropout when key is not
    None. A batch row packs several sentences (`Encoded.rows`): the LSTMs start afresh
    at each sentence and a word's heads are its own sentence's words and the root, so
    every sentence is analysed as if alone, and every batch has one of two shapes.
    batch: "words" [B, T], "chars" [B, T, C], "affixes" [B, T, A], "vectors" [B, T],
    "seg" [B, T] (the sentence of each position within its row, -1 for padding)."""
    jax, jnp, _ = _import_jax()
    vec = None if table is None else jnp.asarray(table)

    def dropout(key, x, keep):
        if key is None:
            return x
        return x * jax.random.bernoulli(key, keep, x.shape) / keep

    def chars_of(p, ids):
        k = p["char_conv"].shape[0]
        x = p["char_emb"][ids]                                       # [B, T, C, d]
        n_out = ids.shape[-1] - k + 1
        y = p["char_b"] + sum(x[..., j:j + n_out, :] @ p["char_conv"][j] for j in range(k))
        last = (ids != PAD).sum(-1) - k
        valid = jnp.arange(n_out)[None, None, :] <= last[..., None]
        return jnp.tanh(jnp.max(jnp.where(valid[..., None], y, -jnp.inf), axis=-2))

    def bilstm(x, fresh, wx, wh, b):
        """Both directions of one layer over [B, T, D] in one scan; fresh [2, B, T]
        marks the positions where each direction starts a sentence."""
        hidden = wh.shape[1]
        gx = jnp.stack([x @ wx[0] + b[0], x[:, ::-1] @ wx[1] + b[1]])   # [2, B, T, 4H]

        def step(carry, inp):
            h, c = carry
            g, new = inp
            keep = 1.0 - new[..., None]
            h, c = h * keep, c * keep
            g = g + jnp.matmul(h, wh)
            s = jax.nn.sigmoid(g[..., :3 * hidden])
            c = s[..., hidden:2 * hidden] * c + s[..., :hidden] * jnp.tanh(g[..., 3 * hidden:])
            h = s[..., 2 * hidden:] * jnp.tanh(c)
            return (h, c), h

        zero = jnp.zeros((2, x.shape[0], hidden))
        _, hs = jax.lax.scan(step, (zero, zero), (jnp.moveaxis(gx, 2, 0),
                                                  jnp.moveaxis(fresh, 2, 0)))
        hs = jnp.moveaxis(hs, 0, 2)                                      # [2, B, T, H]
        return jnp.concatenate([hs[0], hs[1][:, ::-1]], axis=-1)

    def forward(p, batch, key, keep_input, keep_hidden):
        words, seg = batch["words"], batch["seg"]
        n_batch, n = words.shape
        parts = [p["word_emb"][words], chars_of(p, batch["chars"])]
        parts += [p[f"affix{c}"][batch["affixes"][..., c]] for c in range(n_affix)]
        if vec is not None:
            parts.append(vec[batch["vectors"]] @ p["vec_proj"])
        keys = [None] * (layers + 5) if key is None else list(jax.random.split(key, layers + 5))
        x = dropout(keys[0], jnp.concatenate(parts, axis=-1), keep_input)
        prev = jnp.concatenate([jnp.full((n_batch, 1), -2), seg[:, :-1]], axis=1)
        nxt = jnp.concatenate([seg[:, 1:], jnp.full((n_batch, 1), -2)], axis=1)
        fresh = jnp.stack([seg != prev, (seg != nxt)[:, ::-1]]).astype(x.dtype)
        for layer in range(layers):
            x = dropout(keys[layer + 1], bilstm(x, fresh, p[f"wx{layer}"], p[f"wh{layer}"],
                                                p[f"b{layer}"]), keep_hidden)
        full = jnp.concatenate([jnp.broadcast_to(p["root"], (n_batch, 1, x.shape[-1])), x], 1)
        head = dropout(keys[-4], jax.nn.relu(full @ p["arc_hw"] + p["arc_hb"]), keep_hidden)
        dep = dropout(keys[-3], jax.nn.relu(x @ p["arc_dw"] + p["arc_db"]), keep_hidden)
        s = jnp.einsum("bda,ac,bhc->bdh", dep, p["arc_U"], head) + (head @ p["arc_u"])[:, None]
        fseg = jnp.concatenate([jnp.full((n_batch, 1), -3), seg], axis=1)      # [B, T + 1]
        same = (fseg[:, None, :] == seg[:, :, None]) | (jnp.arange(n + 1) == 0)[None, None]
        itself = jnp.arange(n)[:, None] + 1 == jnp.arange(n + 1)[None, :]
        s = jnp.where(same & ~itself[None], s, -1e9)
        lab_head = dropout(keys[-2], jax.nn.relu(full @ p["lab_hw"] + p["lab_hb"]), keep_hidden)
        lab_dep = dropout(keys[-1], jax.nn.relu(x @ p["lab_dw"] + p["lab_db"]), keep_hidden)
        return {"tag": jax.nn.log_softmax(x @ p["tag_w"] + p["tag_b"]),
                "feats": jax.nn.log_softmax(x @ p["feats_w"] + p["feats_b"]),
                "arc": jax.nn.log_softmax(s, -1), "lab_head": lab_head, "lab_dep": lab_dep}

    return forward


def label_scores(p, lab_head, lab_dep, heads):
    """Relation scores [B, T, R] of the arcs heads [B, T] (0 the root, k + 1 row
    position k) -> each word (JAX)."""
    _, jnp, _ = _import_jax()
    hh = jnp.take_along_axis(lab_head, heads[:, :, None], axis=1)            # [B, T, L]
    return (jnp.einsum("btl,rlk,btk->btr", lab_dep, p["lab_U"], hh)
            + hh @ p["lab_Wh"] + lab_dep @ p["lab_Wd"] + p["lab_b"])


# ---- data -----------------------------------------------------------------------------
class Encoded:
    """A treebank as arrays: per sentence the word, character and vector ids of its
    words and their gold class, FEATS, head and relation ids."""

    def __init__(self, sentences: Sequence[Sequence[Word]], lookup: Lookup,
                 vectors: WordVectors | None):
        forms = sorted({w[0] for s in sentences for w in s})
        index = {f: i for i, f in enumerate(forms)}
        self.type_word = np.array([lookup.word_id(f) for f in forms], np.int32)
        self.type_chars = (np.stack([lookup.char_ids(f) for f in forms]) if forms
                           else np.zeros((0, MAX_CHARS + 2), np.int32))
        self.type_affixes = (np.stack([lookup.affix_ids(f) for f in forms]) if forms
                             else np.zeros((0, len(lookup.affix)), np.int32))
        self.type_vector = (vectors.rows(forms).astype(np.int32) if vectors is not None
                            else np.zeros(len(forms), np.int32))
        self.types = [np.array([index[w[0]] for w in s], np.int32) for s in sentences]
        self.gold = [np.array([[lookup.cls.get((w[1], w[2]), 0), lookup.feats.get(w[3], 0),
                                w[4], lookup.label.get(w[5], 0)] for w in s], np.int32)
                     for s in sentences]
        counts = Counter(w[0].lower() for s in sentences for w in s)
        self.type_count = np.array([counts[f.lower()] for f in forms], np.float64)

    def __len__(self) -> int:
        return len(self.types)

    def batches(self, order: Sequence[int], batch_tokens: int) -> list[list[list[int]]]:
        """Batches of rows of sentences: each row packs sentences (in `order`, first
        fit) into ROW positions, or holds one longer sentence; a batch has
        batch_tokens // ROW rows, or fewer rows of the longest length."""
        short, long_ = [], []
        for i in order:
            (short if len(self.types[i]) <= ROW else long_).append(i)
        rows: list[list[int]] = []
        free: list[int] = []
        for i in short:
            k = len(self.types[i])
            j = next((j for j in range(max(0, len(rows) - 8), len(rows)) if free[j] >= k), None)
            if j is None:
                rows.append([])
                free.append(ROW)
                j = len(rows) - 1
            rows[j].append(i)
            free[j] -= k
        per = max(1, batch_tokens // ROW)
        out = [rows[k:k + per] for k in range(0, len(rows), per)]
        if long_:
            per_long = max(1, batch_tokens // self.long_row)
            out += [[[i] for i in long_[k:k + per_long]]
                    for k in range(0, len(long_), per_long)]
        return out

    @property
    def long_row(self) -> int:
        """The row length of the batches of sentences longer than ROW."""
        longest = max((len(t) for t in self.types), default=0)
        return max(ROW, -(-longest // ROW) * ROW)

    def arrays(self, batch: Sequence[Sequence[int]], batch_tokens: int,
               rng: np.random.Generator | None, word_dropout: float) -> dict[str, np.ndarray]:
        """Padded arrays of a batch of rows, of the one shape of its kind (short rows,
        or long); gold heads as row positions + 1 (0 the root); word dropout when rng
        is given."""
        longest = max(sum(len(self.types[i]) for i in row) for row in batch)
        n = ROW if longest <= ROW else self.long_row
        size = max(1, batch_tokens // n, len(batch))
        types = np.zeros((size, n), np.int64)
        gold = np.zeros((size, n, 4), np.int32)
        seg = np.full((size, n), -1, np.int32)
        for r, row in enumerate(batch):
            at = 0
            for j, i in enumerate(row):
                k = len(self.types[i])
                types[r, at:at + k] = self.types[i]
                g = self.gold[i].copy()
                g[:, 2] = np.where(g[:, 2] > 0, g[:, 2] + at, 0)
                gold[r, at:at + k] = g
                seg[r, at:at + k] = j
                at += k
        real = seg >= 0
        words = np.where(real, self.type_word[types], PAD)
        if rng is not None and word_dropout > 0:
            f = self.type_count[types]
            words = np.where(real & (rng.random(words.shape) < word_dropout / (word_dropout + f)),
                             UNKNOWN, words)
        chars = np.where(real[..., None], self.type_chars[types], PAD)
        return {"words": words.astype(np.int32), "chars": chars.astype(np.int32),
                "affixes": self.type_affixes[types].astype(np.int32),
                "vectors": np.where(real, self.type_vector[types], 0).astype(np.int32),
                "seg": seg, "tags": gold[..., 0], "feats": gold[..., 1],
                "heads": gold[..., 2], "labels": gold[..., 3]}


# ---- training -------------------------------------------------------------------------
def _leaves(tree) -> list[np.ndarray]:
    jax, _, _ = _import_jax()
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _unflatten(like, leaves: Sequence[np.ndarray]):
    jax, jnp, _ = _import_jax()
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(like),
                                        [jnp.asarray(x) for x in leaves])


class _Checkpoint:
    """The training state after each epoch (params, optimizer, best params, history)
    in one npz, written atomically."""

    def __init__(self, directory: Path | None):
        self.path = None if directory is None else Path(directory) / "checkpoint-neural.npz"

    def save(self, epoch: int, params, opt_state, best, history: list[dict], key) -> None:
        if self.path is None:
            return
        arrays = {f"p{i}": x for i, x in enumerate(_leaves(params))}
        arrays.update({f"o{i}": x for i, x in enumerate(_leaves(opt_state))})
        arrays.update({f"b{i}": x for i, x in enumerate(_leaves(best))})
        arrays["key"] = np.asarray(key)
        arrays["meta"] = np.array(json.dumps({"epoch": epoch, "history": history}))
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, **arrays)
        tmp.replace(self.path)

    def load(self, params, opt_state):
        """(epoch, params, opt_state, best, history, key) or None."""
        if self.path is None or not self.path.exists():
            return None
        d = np.load(self.path)

        def group(prefix, like):
            n = len(_leaves(like))
            return _unflatten(like, [d[f"{prefix}{i}"] for i in range(n)])

        meta = json.loads(str(d["meta"]))
        logger.info("resuming the neural analyser after epoch %d", meta["epoch"])
        return (meta["epoch"], group("p", params), group("o", opt_state), group("b", params),
                meta["history"], d["key"])


def train_analyser(train: Sequence[Sequence[Word]], dev: Sequence[Sequence[Word]],
                   cfg: NeuralConfig | None = None, *, classes=None,
                   vectors: WordVectors | None = None, checkpoint_dir: str | Path | None = None,
                   progress: Callable[[str], None] | None = None) -> NeuralAnalyser:
    """Train on sentences of (form, upos, xpos, feats, head, deprel) words; keep the
    epoch of best LAS on dev (each word's most likely head). `classes` fixes the tag
    classes (a linear tagger's, to add the two taggers' scores)."""
    jax, jnp, optax = _import_jax()
    cfg = cfg or NeuralConfig()
    say = progress or logger.info
    vocab = Vocab.build([[(w[0], w[1], w[2], w[3], w[5]) for w in s] for s in train], classes)
    if not cfg.affix_dim:
        vocab = replace(vocab, affixes=())
    lookup = Lookup(vocab)
    data = Encoded(train, lookup, vectors)
    held = Encoded(dev, lookup, vectors)
    epochs = cfg.epochs or auto_epochs(sum(len(s) for s in train))
    rng = np.random.default_rng(cfg.seed)
    n_batches = len(data.batches(range(len(data)), cfg.batch_tokens))
    total = epochs * n_batches
    schedule = optax.join_schedules(
        [optax.linear_schedule(0.0, cfg.learning_rate, cfg.warmup_steps),
         optax.linear_schedule(cfg.learning_rate, 0.0, max(1, total - cfg.warmup_steps))],
        [cfg.warmup_steps])
    opt = optax.chain(optax.clip_by_global_norm(5.0), optax.adam(schedule, b1=0.9, b2=0.9))
    key = jax.random.PRNGKey(cfg.seed)
    key, k0 = jax.random.split(key)
    params = init_params(k0, vocab, cfg, vectors)
    state = opt.init(params)
    forward = make_forward(None if vectors is None else vectors.table, cfg.layers,
                           len(vocab.affixes))

    def loss_fn(p, batch, k):
        out = forward(p, batch, k, cfg.keep_input, cfg.keep_hidden)
        mask = batch["seg"] >= 0

        def nll(logp, gold):
            return -jnp.take_along_axis(logp, gold[..., None], -1)[..., 0]

        lab = jax.nn.log_softmax(label_scores(p, out["lab_head"], out["lab_dep"],
                                              batch["heads"]))
        total = (nll(out["tag"], batch["tags"]) + nll(out["feats"], batch["feats"])
                 + nll(out["arc"], batch["heads"]) + nll(lab, batch["labels"]))
        return jnp.sum(total * mask) / jnp.maximum(jnp.sum(mask), 1)

    @jax.jit
    def step(p, s, batch, k):
        loss, grads = jax.value_and_grad(loss_fn)(p, batch, k)
        updates, s = opt.update(grads, s, p)
        return optax.apply_updates(p, updates), s, loss

    @jax.jit
    def predict(p, batch):
        out = forward(p, batch, None, 1.0, 1.0)
        heads = jnp.argmax(out["arc"], -1)
        labels = jnp.argmax(label_scores(p, out["lab_head"], out["lab_dep"], heads), -1)
        return jnp.argmax(out["tag"], -1), heads, labels

    def evaluate(p) -> dict:
        right = np.zeros(4)
        words = 0
        for part in held.batches(range(len(held)), cfg.batch_tokens):
            b = held.arrays(part, cfg.batch_tokens, None, 0.0)
            tags, heads, labels = (np.asarray(x) for x in predict(p, _device(b)))
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
    resumed = _Checkpoint(checkpoint_dir).load(params, state)
    if resumed is not None:
        start, params, state, best, history, key = resumed
        key = jnp.asarray(key)
        rng = np.random.default_rng([cfg.seed, start])
    ckpt = _Checkpoint(checkpoint_dir)
    say(f"neural analyser: {len(train)} sentences, {len(vocab.words)} words, "
        f"{len(vocab.chars)} characters, {len(vocab.classes)} tag classes, "
        f"{len(vocab.labels)} relations; {epochs} epochs of {n_batches} batches")
    bar = progress_bar(total=total, initial=start * n_batches, desc="neural analyser",
                       unit="batch")
    try:
        for epoch in range(start, epochs):
            t0 = time.time()
            losses = []
            batches = data.batches(rng.permutation(len(data)), cfg.batch_tokens)
            compiling = 0.0
            for b in rng.permutation(len(batches)):
                arrays = data.arrays(batches[b], cfg.batch_tokens, rng, cfg.word_dropout)
                key, k = jax.random.split(key)
                shape = arrays["words"].shape
                t1 = time.time()
                params, state, loss = step(params, state, _device(arrays), k)
                if shape not in compiled:        # the first step of a shape compiles it
                    loss.block_until_ready()
                    compiled.add(shape)
                    compiling += time.time() - t1
                losses.append(loss)
                bar.update(1)
            row = {"epoch": epoch + 1, "loss": round(float(np.mean([float(x) for x in losses])),
                                                     4),
                   "seconds": round(time.time() - t0 - compiling, 1)}
            if compiling:
                row["compile_seconds"] = round(compiling, 1)
            t0 = time.time()
            if len(held):
                row.update(evaluate(params))
                if not history or row["las"] > max(r.get("las", -1) for r in history):
                    best = params
            else:
                best = params
            row["dev_seconds"] = round(time.time() - t0, 1)
            history.append(row)
            bar.set_postfix({k: v for k, v in row.items() if k in ("loss", "uas", "las")})
            say(f"neural analyser epoch {epoch + 1}/{epochs}: "
                + ", ".join(f"{k} {v}" for k, v in row.items() if k != "epoch"))
            ckpt.save(epoch + 1, params, state, best, history, key)
    finally:
        bar.close()
    best_row = max(history, key=lambda r: r.get("las", 0)) if history else {}
    meta = {"config": asdict(cfg), "epochs": epochs, "history": history,
            "best_epoch": best_row.get("epoch"), "dev": {k: best_row[k] for k in
                                                        ("tags", "uas", "las") if k in best_row}}
    return NeuralAnalyser(vocab, {k: np.asarray(v) for k, v in best.items()}, vectors, meta)


def _device(batch: dict[str, np.ndarray]) -> dict:
    _, jnp, _ = _import_jax()
    return {k: jnp.asarray(v) for k, v in batch.items() if k != "types"}
