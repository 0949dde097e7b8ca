"""The neural analyser's network in JAX, for training: parameters, the forward pass and
the relation scores. `network.py` runs the same computation in numpy, from the saved
parameters (a test checks that the two agree)."""
from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

from models.neural.vocab import PAD, Vocab
from models.text.word_vectors import WordVectors

if TYPE_CHECKING:
    from models.neural.train import NeuralConfig

NO_ARC = -1e9    # arc score of a head a word cannot take (itself, another sentence's words)


def import_jax():
    try:
        import jax
        import jax.numpy as jnp
        import optax
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError("training the neural analyser needs jax and optax: "
                                  "pip install -e '.[train]'") from e
    return jax, jnp, optax



def init_params(key, vocab: Vocab, cfg: NeuralConfig, vectors: WordVectors | None,
                context: tuple[int, int] | None = None) -> dict:
    """The analyser's initial parameters; `context` (layers, hidden size) adds the
    contextual encoder's scalar mix ("ctx_mix", "ctx_scale") and projection
    ("ctx_proj" [hidden, cfg.context_dim])."""
    jax, jnp, _ = import_jax()
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
    if context is not None:
        n_layers, dims = context
        p["ctx_mix"] = jnp.zeros(n_layers)                # softmax weights of the layers
        p["ctx_scale"] = jnp.ones(1)
        p["ctx_proj"] = dense(dims, cfg.context_dim)
        width += cfg.context_dim
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


def make_forward(table: np.ndarray | None, layers: int, n_affix: int = 0,
                 precision: str = "f32", context: bool = False):
    """forward(params, batch, key, keep_input, keep_hidden) -> dict of "tag", "feats"
    log-probabilities [B, T, *], "arc" log P(head | dep) [B, T, T + 1] (head 0 the
    root, head k + 1 the word at row position k), "lab_head" [B, T + 1, L] and
    "lab_dep" [B, T, L]: what `NeuralAnalyser` computes, with dropout when key is not
    None. A batch row packs several sentences (`Encoded.rows`): the LSTMs start afresh
    at each sentence and a word's heads are its own sentence's words and the root, so
    every sentence is analysed as if alone, and every batch has one of two shapes.
    batch: "words" [B, T], "chars" [B, T, C], "affixes" [B, T, A], "vectors" [B, T],
    "seg" [B, T] (the sentence of each position within its row, -1 for padding), and
    with `context` "context" [B, T, L, H] (each word's encoder states, `contextual/`).
    precision: the type of the matrix products' operands, 'f32' or 'bf16'
    (`precision.py`); the batched products of the biaffine scores stay float32."""
    jax, jnp, _ = import_jax()
    from models.neural.jax_lstm import recurrence

    vec = None if table is None else jnp.asarray(table)
    mm = product(precision)
    low = operand_type(precision)

    def dense(x, w):
        return _dense(x, w, mm)

    def dropout(key, x, keep):
        if key is None:
            return x
        return x * jax.random.bernoulli(key, keep, x.shape) / keep

    def chars_of(p, ids):
        k, d, n_filters = p["char_conv"].shape
        x = p["char_emb"][ids]                                       # [B, T, C, d]
        n_out = ids.shape[-1] - k + 1
        windows = jnp.concatenate([x[..., j:j + n_out, :] for j in range(k)], -1)
        y = dense(windows, p["char_conv"].reshape(k * d, n_filters)) + p["char_b"]
        last = (ids != PAD).sum(-1) - k
        valid = jnp.arange(n_out)[None, None, :] <= last[..., None]
        return jnp.tanh(jnp.max(jnp.where(valid[..., None], y, -jnp.inf), axis=-2))

    def bilstm(x, fresh, wx, wh, b):
        """Both directions of one layer over [B, T, D] (`jax_lstm.recurrence`); fresh
        [2, B, T] marks the positions where each direction starts a sentence."""
        gx = jnp.stack([dense(x, wx[0]) + b[0], dense(x[:, ::-1], wx[1]) + b[1]])
        hs = recurrence(jnp.moveaxis(gx, 2, 0), jnp.moveaxis(fresh, 2, 0), wh, low)
        hs = jnp.moveaxis(hs, 0, 2)                                      # [2, B, T, H]
        return jnp.concatenate([hs[0], hs[1][:, ::-1]], axis=-1)

    def forward(p, batch, key, keep_input, keep_hidden):
        words, seg = batch["words"], batch["seg"]
        n_batch, n = words.shape
        parts = [p["word_emb"][words], chars_of(p, batch["chars"])]
        parts += [p[f"affix{c}"][batch["affixes"][..., c]] for c in range(n_affix)]
        if vec is not None:
            parts.append(dense(vec[batch["vectors"]], p["vec_proj"]))
        if context:
            parts.append(dense(mix_layers(p, batch["context"]), p["ctx_proj"]))
        keys = [None] * (layers + 5) if key is None else list(jax.random.split(key, layers + 5))
        x = dropout(keys[0], jnp.concatenate(parts, axis=-1), keep_input)
        prev = jnp.concatenate([jnp.full((n_batch, 1), -2), seg[:, :-1]], axis=1)
        nxt = jnp.concatenate([seg[:, 1:], jnp.full((n_batch, 1), -2)], axis=1)
        fresh = jnp.stack([seg != prev, (seg != nxt)[:, ::-1]]).astype(x.dtype)
        for layer in range(layers):
            x = dropout(keys[layer + 1], bilstm(x, fresh, p[f"wx{layer}"], p[f"wh{layer}"],
                                                p[f"b{layer}"]), keep_hidden)
        full = jnp.concatenate([jnp.broadcast_to(p["root"], (n_batch, 1, x.shape[-1])), x], 1)
        head = dropout(keys[-4], jax.nn.relu(dense(full, p["arc_hw"]) + p["arc_hb"]),
                       keep_hidden)
        dep = dropout(keys[-3], jax.nn.relu(dense(x, p["arc_dw"]) + p["arc_db"]), keep_hidden)
        s = (jnp.einsum("bdc,bhc->bdh", dense(dep, p["arc_U"]), head)
             + (head @ p["arc_u"])[:, None])
        fseg = jnp.concatenate([jnp.full((n_batch, 1), -3), seg], axis=1)      # [B, T + 1]
        same = (fseg[:, None, :] == seg[:, :, None]) | (jnp.arange(n + 1) == 0)[None, None]
        itself = jnp.arange(n)[:, None] + 1 == jnp.arange(n + 1)[None, :]
        s = jnp.where(same & ~itself[None], s, NO_ARC)
        lab_head = dropout(keys[-2], jax.nn.relu(dense(full, p["lab_hw"]) + p["lab_hb"]),
                           keep_hidden)
        lab_dep = dropout(keys[-1], jax.nn.relu(dense(x, p["lab_dw"]) + p["lab_db"]),
                          keep_hidden)
        return {"tag": jax.nn.log_softmax(dense(x, p["tag_w"]) + p["tag_b"]),
                "feats": jax.nn.log_softmax(dense(x, p["feats_w"]) + p["feats_b"]),
                "arc": jax.nn.log_softmax(s, -1), "lab_head": lab_head, "lab_dep": lab_dep}

    return forward


def mix_layers(p, states):
    """The scalar mix of the encoder's layers (Peters et al. 2018, eq. 1): states
    [..., L, H] -> scale x sum_l softmax(ctx_mix)_l states_l, [..., H]."""
    jax, jnp, _ = import_jax()
    w = jax.nn.softmax(p["ctx_mix"])
    return p["ctx_scale"] * jnp.einsum("...lh,l->...h", states.astype(jnp.float32), w)


def label_scores(p, lab_head, lab_dep, heads, precision: str = "f32"):
    """Relation scores [B, T, R] of the arcs heads [B, T] (0 the root, k + 1 row
    position k) -> each word (JAX)."""
    _, jnp, _ = import_jax()
    mm = product(precision)
    hh = jnp.take_along_axis(lab_head, heads[:, :, None], axis=1)            # [B, T, L]
    r, n_lab, _ = p["lab_U"].shape
    du = _dense(lab_dep, jnp.transpose(p["lab_U"], (1, 0, 2)).reshape(n_lab, r * n_lab), mm)
    return (jnp.einsum("btrk,btk->btr", du.reshape(du.shape[:-1] + (r, n_lab)), hh)
            + _dense(hh, p["lab_Wh"], mm) + _dense(lab_dep, p["lab_Wd"], mm) + p["lab_b"])


def _dense(x, w, mm):
    """x [..., n] @ w [n, m] as one 2-D product mm: XLA's CPU matmul, and above all its
    gradient with respect to w, is several times slower on the batched form."""
    return mm(x.reshape(-1, x.shape[-1]), w).reshape(x.shape[:-1] + w.shape[-1:])


def operand_type(precision: str):
    """The type of the training graph's product operands: float32 ('f32') or bfloat16
    ('bf16'); the sums are float32 either way."""
    _, jnp, _ = import_jax()
    types = {"f32": jnp.float32, "bf16": jnp.bfloat16}
    if precision not in types:
        raise ValueError(f"precision must be 'f32' or 'bf16', not {precision!r}")
    return types[precision]


def product(precision: str):
    """a [m, n] @ b [n, k] of the training graph: float32 ('f32'), or bfloat16 operands
    with float32 sums ('bf16'), the two products of its gradient likewise."""
    _, jnp, _ = import_jax()
    return jnp.matmul if operand_type(precision) == jnp.float32 else _bf16_product()


@functools.cache
def _bf16_product():
    """The 'bf16' product, its gradient written out so that it stays bfloat16 too."""
    jax, jnp, _ = import_jax()
    low = operand_type("bf16")

    def mm(a, b):
        return jax.lax.dot(a, b, preferred_element_type=jnp.float32)

    @jax.custom_vjp
    def f(a, b):
        return mm(a.astype(low), b.astype(low))

    def forward(a, b):
        a, b = a.astype(low), b.astype(low)
        return mm(a, b), (a, b)

    def backward(saved, g):
        a, b = saved
        g = g.astype(low)
        return mm(g, b.T), mm(a.T, g)

    f.defvjp(forward, backward)
    return f
