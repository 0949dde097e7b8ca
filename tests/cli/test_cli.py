"""The `deptree` command line: `parse --tagger` chooses the tagger as a request does,
and `train` takes the model's language from a UD file name."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from models.conllu import read_conllu_string
from models.serve.pipeline import Pipeline
from models.serve.registry import resolve

ROOT = Path(__file__).resolve().parents[2]
WORDS = ["I", "saw", "her", "duck", "near", "the", "bank", "."]


def deptree(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "deptree.cli", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=300, check=False)


def tags(out: str) -> list[list[tuple[str, str]]]:
    return [[(w.upos, w.xpos) for w in s.words] for s in read_conllu_string(out)]


@pytest.fixture(scope="module")
def model(model_dirs) -> Path:
    return resolve("en_ewt", search_dirs=[Path(d) for d in model_dirs])


@pytest.fixture(scope="module")
def pipe(model) -> Pipeline:
    return Pipeline.load(model)


@pytest.fixture
def fast_only(model, pipe, tmp_path) -> Path:
    """en_ewt without its accurate tagger: the model itself, or a copy (symlinks) of it
    without the neural analysers (`neural/`, `contextual/`, their entries in
    pipeline.json)."""
    if "accurate" not in pipe.taggers:
        return model
    out = tmp_path / "en_ewt_fast"
    out.mkdir()
    for p in model.iterdir():
        if p.name not in ("neural", "contextual", "pipeline.json"):
            (out / p.name).symlink_to(p)
    meta = json.loads((model / "pipeline.json").read_text())
    meta.pop("neural")
    meta.pop("contextual", None)
    (out / "pipeline.json").write_text(json.dumps(meta))
    assert Pipeline.load(out).taggers == ["fast"]
    return out


def test_tagger_defaults_to_the_most_accurate(model, pipe):
    line = " ".join(WORDS) + "\n"
    base = ("parse", "--model", str(model), "--input", "tokens", "--decoder", "mst")
    best = pipe.taggers[-1]                     # `auto`: accurate where the model has it
    default, chosen = deptree(*base, stdin=line), deptree(*base, "--tagger", best, stdin=line)
    assert default.returncode == 0 and chosen.returncode == 0, default.stderr + chosen.stderr
    assert default.stdout == chosen.stdout
    upos, xpos, _ = pipe.tag(WORDS, best)
    assert tags(chosen.stdout) == [list(zip(upos, xpos))]


def test_unknown_tagger_name_is_a_usage_error():
    r = deptree("parse", "--tagger", "quantum", "--input", "tokens", stdin="A cat .\n")
    assert r.returncode == 2 and "invalid choice: 'quantum'" in r.stderr


def test_accurate_where_the_model_lacks_it_is_exit_2_naming_its_taggers(fast_only):
    r = deptree("parse", "--model", str(fast_only), "--input", "tokens", "--tagger", "accurate",
                stdin="A cat sat .\n")
    assert r.returncode == 2 and r.stdout == "", r.stderr
    last = r.stderr.splitlines()[-1]          # after the model's loading log line
    assert last.startswith("deptree: error: ") and "accurate" in last
    assert "Traceback" not in r.stderr
    assert last.endswith("unknown tagger 'accurate'; model en_ewt has: fast")


def test_accurate_tags_with_the_accurate_tagger(model, pipe, ewt_dev_tokens):
    # sentences the two taggers tag differently, so the output shows which one ran
    sents = [f for f in ewt_dev_tokens(300) if " " not in "".join(f)
             and pipe.tag(f, "fast")[:2] != pipe.tag(f, "accurate")[:2]][:5]
    assert sents, "fast and accurate agree on 300 dev sentences"
    lines = "".join(" ".join(f) + "\n" for f in sents)
    got = {}
    for tagger in ("fast", "accurate"):
        r = deptree("parse", "--model", str(model), "--input", "tokens", "--decoder", "mst",
                    "--tagger", tagger, stdin=lines)
        assert r.returncode == 0, r.stderr
        got[tagger] = tags(r.stdout)
        want = [list(zip(*pipe.tag(f, tagger)[:2])) for f in sents]
        assert got[tagger] == want, tagger
    assert got["fast"] != got["accurate"]


def test_neural_flag_sets_the_arc_score_weight(model, pipe):
    if pipe.analyser is None:
        pytest.skip("en_ewt has no neural analyser (models/pretrained/en_ewt/neural/ missing)")
    line = " ".join(WORDS) + "\n"
    base = ("parse", "--model", str(model), "--input", "tokens", "--decoder", "mst")
    r = deptree(*base, "--neural", "10", stdin=line)
    assert r.returncode == 0, r.stderr
    want = pipe.parse_words(WORDS, "mst", {"neural": 10.0})
    assert [w.head for w in read_conllu_string(r.stdout)[0].words] == [
        t.head for t in want.tokens]
    bad = deptree(*base, "--neural", "20", stdin=line)
    assert bad.returncode == 2 and "neural must be a number in [0, 10]" in bad.stderr


@pytest.mark.parametrize(("argv", "language"), [
    (["--data", "UD_Turkish-IMST/tr_imst-ud-train.conllu"], "tr"),
    (["--data", "grc_perseus-ud-train.conllu"], "grc"),
    (["--data", "grc_perseus-ud-train.conllu", "--language", "el"], "el"),
    (["--data", "../shared/data/tr_imst/train.conllu"], "und"),
    (["--data", "my_data.conllu"], "und"),
])
def test_train_language_from_a_ud_file_name(argv, language):
    from deptree.cli import build_parser
    from deptree.cli.train import build_language

    args = build_parser(["train"]).parse_args(["train", *argv, "--out", "m"])
    assert build_language(args) == language


@pytest.mark.parametrize(("argv", "neural"), [
    ([], {}),
    (["--precision", "auto"], {}),
    (["--precision", "f32"], {"precision": "f32"}),
    (["--precision", "bf16"], {"precision": "bf16"}),
])
def test_train_precision_reaches_the_analysers_config(argv, neural):
    from deptree.cli import build_parser
    from deptree.cli.train import build_options
    from models.neural.train import NeuralConfig

    args = build_parser(["train"]).parse_args(["train", "--data", "t.conllu", "--out", "m",
                                               *argv])
    opts = build_options(args)
    assert opts.neural == neural
    assert NeuralConfig(**opts.neural).precision == neural.get("precision", "auto")


@pytest.mark.parametrize(("argv", "minutes"), [([], 60.0), (["--time-budget", "0"], 0.0),
                                              (["--time-budget", "90"], 90.0)])
def test_train_aims_at_an_hour_unless_told(argv, minutes):
    from deptree.cli import build_parser
    from deptree.cli.train import build_options

    args = build_parser(["train"]).parse_args(["train", "--data", "t.conllu", "--out", "m",
                                               *argv])
    assert build_options(args).time_budget == minutes


@pytest.mark.parametrize(("argv", "neural"), [
    ([], {}), (["--label-smoothing", "0"], {"label_smoothing": 0.0}),
    (["--label-smoothing", "0.2"], {"label_smoothing": 0.2}),
])
def test_train_label_smoothing_reaches_the_analysers_config_only_when_given(argv, neural):
    from deptree.cli import build_parser
    from deptree.cli.train import build_options

    args = build_parser(["train"]).parse_args(["train", "--data", "t.conllu", "--out", "m",
                                               *argv])
    assert build_options(args).neural == neural


def test_train_refuses_an_unknown_precision():
    from deptree.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser(["train"]).parse_args(["train", "--data", "t.conllu", "--out", "m",
                                            "--precision", "fp16"])


def test_train_reads_the_encoder_where_it_is_installed(tmp_path):
    """`--encoder auto` (the default) is e5-small where the contextual extra is
    installed, none without it; `none` turns it off. With one, a treebank of more than
    5,000 sentences gets two hours by default."""
    from deptree.cli import build_parser
    from deptree.cli.train import build_options
    from models.contextual.source import EncoderSpec
    from models.errors import ModelError

    try:
        EncoderSpec.new()
        installed = True
    except ModelError:
        installed = False
    big = tmp_path / "big.conllu"
    big.write_text("1\tx\tx\tX\t_\t_\t0\troot\t_\t_\n\n" * 5001)

    def opts(*argv, data="t.conllu"):
        args = build_parser(["train"]).parse_args(["train", "--data", str(data), "--out", "m",
                                                   *argv])
        return build_options(args)

    assert opts().encoder == ("e5-small" if installed else "")
    assert opts("--encoder", "none").encoder == ""
    assert opts("--encoder", "none", data=big).time_budget == 60.0
    assert opts(data=big).time_budget == (120.0 if installed else 60.0)
    assert opts("--time-budget", "45", data=big).time_budget == 45.0
