"""`deptree train`: one command, a complete model directory, resumable; clear errors
for a directory that lacks a part or is of another format."""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.build import children, run_state
from models.build import stages as build
from models.errors import ModelError
from models.neural.ensemble import AnalyserEnsemble
from models.serve.pipeline import ACCURATE, Pipeline
from tests.conftest import ROOT, TINY_BUILD, TINY_TREEBANK, build_tiny
from tests.reliability.procs import alive

pytest.importorskip("jax")
NO_GRAPH_CHOICE = {"tensor_rank": 0, "global_features": False}   # the graph parts set off


def test_the_build_is_complete_and_parses(built_model):
    meta = json.loads((built_model / "pipeline.json").read_text())
    assert meta["format_version"] == 2 and meta["name"] == "tiny"
    for part in ("frontend", "graph", "neural", "transition"):
        assert meta[part] == part and (built_model / part).is_dir()
    assert "every 10th training sentence held out" in meta["build"]["dev"]
    assert {"tag_weight", "arc_weight", "label_mix"} <= set(meta)      # calibrated on dev
    assert "0.3/0" in meta["calibration"]["greedy_uas_las"]
    # FEATS: the analyser's down to the probability that got the most right on dev,
    # the front-end guesser's below it
    feats = meta["calibration"]["feats"]
    assert feats[f"{meta['feats_min_prob']:g}"] == max(feats.values())
    # each stage's own record (seconds, peak RSS) stays in build.stages, the settings at
    # the top, not both
    stages = meta["build"]["stages"]
    assert "peak_rss_mb" not in meta and stages["neural"]["peak_rss_mb"] > 0
    assert "calibration" not in stages["calibrate"] and stages["calibrate"]["seconds"] >= 0
    assert not (built_model / ".build").exists()          # work files removed when done
    # 40 sentences: two analysers (seeds 0 and 1), averaged
    assert stages["neural"]["analysers"] == 2 and (built_model / "neural" / "member-2").is_dir()
    # a budget of an hour: each analyser was given seconds and kept its one epoch
    assert stages["neural"]["planned_epochs"] == stages["neural"]["epochs"] == 1
    # the graph parser's parts, left to the dev split: each was tried and scored, and
    # the model kept has the parts the record names
    graph = stages["graph"]["selection"]
    assert set(graph["dev_uas_las"]) >= {"third order", "third order+global",
                                         "third order+tensor 50"}
    assert graph["kept"] in graph["dev_uas_las"]
    gmeta = json.loads((built_model / "graph" / "model.json").read_text())
    assert gmeta["train_config"]["global_features"] == stages["graph"]["global_features"]
    assert gmeta["train_config"]["tensor_rank"] == stages["graph"]["tensor_rank"]
    assert gmeta["train_config"]["jackknife"] == 0          # gold training tags
    # the transition parser: trained on jackknifed and on gold tags, the better one kept
    trans = stages["transition"]
    assert set(trans["dev_uas_las_greedy"]) == {"jackknifed", "gold"}
    assert trans["dev_uas_las_greedy"][trans["training_tags"]] == max(
        trans["dev_uas_las_greedy"].values(), key=sum)
    pipe = Pipeline.load(built_model)
    assert isinstance(pipe.analyser, AnalyserEnsemble) and len(pipe.analyser.members) == 2
    assert pipe.taggers == ["fast", ACCURATE]
    assert set(pipe.decoders()) == {"greedy", "mst", "sampling", "bgi", "selectional"}
    for tagger in ("fast", ACCURATE):
        for tree in pipe.parse_text("The forces killed him near the border. He left.",
                                    tagger=tagger):
            heads = [t.head for t in tree.tokens]
            assert heads.count(0) == 1 and all(0 <= h <= len(heads) for h in heads)
    tree = pipe.parse_words(["They", "left", "."], "mst", {"neural": 1.0})
    assert tree.stats["neural"] == 1.0


def test_feats_come_from_where_the_model_says(built_model):
    """`feats_min_prob`: the analyser's FEATS where it gives them that probability, the
    guesser's over the same tags below it; the tags and the tree do not change."""
    from dataclasses import replace

    pipe = Pipeline.load(built_model)
    words = ["The", "forces", "killed", "him", "near", "the", "border", "."]
    got = {}
    for t in (0.0, 0.5, 1.01):
        pipe.c.config = replace(pipe.c.config, feats_min_prob=t)
        got[t] = pipe.parse_words(words, tagger=ACCURATE).tokens
    assert len({tuple((x.upos, x.head, x.deprel) for x in toks) for toks in got.values()}) == 1
    up, xp = [x.upos for x in got[0.0]], [x.xpos for x in got[0.0]]
    analysis = pipe.analyser.analyze(words)
    own = [pipe.analyser.vocab.feats[i] for i in analysis.feats_logp.argmax(1)]
    prob = np.exp(analysis.feats_logp.max(1))
    guessed = pipe.c.feats.predict(words, up, xp)
    assert [x.feats for x in got[0.0]] == own                     # the analyser's alone
    assert [x.feats for x in got[1.01]] == guessed                 # the guesser's alone
    assert [x.feats for x in got[0.5]] == [o if p >= 0.5 else g
                                           for o, p, g in zip(own, prob, guessed)]


def test_the_cli_parses_text_with_the_built_model(built_model):
    out = subprocess.run([sys.executable, "-m", "deptree.cli", "parse", "--model",
                          str(built_model), "--input", "text"], input="The cat sat.\n",
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert [line.split("\t")[1] for line in out.stdout.splitlines()
            if line and line[0].isdigit()] == ["The", "cat", "sat", "."]


def test_an_interrupted_build_resumes_where_it_stopped(tmp_path, monkeypatch):
    ran = []

    def stop(run):
        raise KeyboardInterrupt

    def logged(name, fn):
        def wrapper(run):
            ran.append(name)
            return fn(run)
        return wrapper

    runners = dict(build._RUNNERS)
    monkeypatch.setattr(build, "_RUNNERS", {**{k: logged(k, f) for k, f in runners.items()},
                                            "graph": stop})
    with pytest.raises(KeyboardInterrupt):
        build_tiny(tmp_path / "m", skip=("transition",), analysers=1)
    assert ran == ["frontend", "neural"]   # no transition parser: no jackknifed tags
    assert not (tmp_path / "m" / "pipeline.json").exists()
    monkeypatch.setattr(build, "_RUNNERS", {k: logged(k, f) for k, f in runners.items()})
    build_tiny(tmp_path / "m", skip=("transition",), analysers=1)
    assert ran[2:] == ["graph", "calibrate"]               # nothing done twice
    assert Pipeline.load(tmp_path / "m").transition is None
    with pytest.raises(ModelError, match="holds a model"):
        build_tiny(tmp_path / "m", skip=("transition",), analysers=1)


def test_an_interrupted_neural_stage_keeps_its_finished_analysers(tmp_path, monkeypatch):
    trained = []
    real = build._run_child

    def second_fails(args, out):
        if "member-2" in str(out) and not trained.count(str(out)):
            trained.append(str(out))
            raise KeyboardInterrupt
        trained.append(str(out))
        real(args, out)

    monkeypatch.setattr(build, "_run_child", second_fails)
    with pytest.raises(KeyboardInterrupt):
        build_tiny(tmp_path / "m", skip=("transition",), analysers=2)
    assert (tmp_path / "m" / "neural" / "analyser.json").exists()
    build_tiny(tmp_path / "m", skip=("transition",), analysers=2)
    assert [p.split("/m/")[1] for p in trained] == ["neural", "neural/member-2",
                                                   "neural/member-2"]   # the first once
    assert len(Pipeline.load(tmp_path / "m").analyser.members) == 2


def test_other_options_do_not_resume_a_build(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "_RUNNERS", {**build._RUNNERS, "frontend": _interrupt})
    with pytest.raises(KeyboardInterrupt):
        build_tiny(tmp_path / "m")
    with pytest.raises(ModelError, match="other options"):
        build_tiny(tmp_path / "m", order=2)
    with pytest.raises(KeyboardInterrupt):                 # resumed: a budget may change
        build_tiny(tmp_path / "m", time_budget=30.0)


def _interrupt(run):
    raise KeyboardInterrupt


def test_a_missing_part_or_another_format_is_named(built_model, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(built_model, broken)
    shutil.rmtree(broken / "neural")
    with pytest.raises(ModelError, match=r"lists the neural part, but .*neural is missing"):
        Pipeline.load(broken)
    shutil.copytree(built_model / "neural", broken / "neural")
    (broken / "graph" / "weights.npz").unlink()
    with pytest.raises(ModelError, match="weights.npz is missing"):
        Pipeline.load(broken)
    shutil.copy(built_model / "graph" / "weights.npz", broken / "graph" / "weights.npz")
    meta = json.loads((broken / "pipeline.json").read_text())
    (broken / "pipeline.json").write_text(json.dumps({**meta, "format_version": 7}))
    with pytest.raises(ModelError, match="format version 7"):
        Pipeline.load(broken)
    (broken / "pipeline.json").write_text(json.dumps({**meta, "feats_min_prob": "high"}))
    with pytest.raises(ModelError, match="feats_min_prob is 'high'"):
        Pipeline.load(broken)


def test_bad_inputs_are_refused_before_training(tmp_path):
    with pytest.raises(ModelError, match="no training file"):
        build.build_model(tmp_path / "none.conllu", None, tmp_path / "m")
    with pytest.raises(ModelError, match="--analysers -1: give 1 or more"):
        build.build_model(TINY_TREEBANK, None, tmp_path / "m", build.BuildOptions(analysers=-1))
    with pytest.raises(ModelError, match="--time-budget -5: give minutes"):
        build.build_model(TINY_TREEBANK, None, tmp_path / "m", build.BuildOptions(time_budget=-5))
    for eps in (1, -0.1):
        with pytest.raises(ModelError, match="--label-smoothing"):
            build.build_model(TINY_TREEBANK, None, tmp_path / "m",
                              build.BuildOptions(neural={"label_smoothing": eps}))
    with pytest.raises(ModelError, match="only neural, contextual, transition are optional"):
        build.build_model(TINY_TREEBANK, None, tmp_path / "m",
                          build.BuildOptions(skip=("graph",)))


def test_the_models_own_decoder_defaults_apply_and_are_listed(built_model, tmp_path):
    own = tmp_path / "own"
    shutil.copytree(built_model, own)
    meta = json.loads((own / "pipeline.json").read_text())
    meta["decoder_defaults"] = {"greedy": {"converge": 1, "restarts": 2}}
    (own / "pipeline.json").write_text(json.dumps(meta))
    pipe = Pipeline.load(own)
    assert pipe.decoders()["greedy"]["defaults"]["restarts"] == 2
    assert pipe.version != Pipeline.load(built_model).version      # answers may differ
    forms = "The forces killed him near the border .".split()
    assert pipe.parse_words(forms, "greedy").stats["restarts_used"] <= 2
    assert pipe.parse_words(forms, "greedy", {"restarts": 5, "converge": 5}
                            ).stats["restarts_used"] > 2           # a request's budget wins


def test_a_time_budget_leaves_the_analysers_what_the_other_stages_do_not_take(tmp_path):
    """The later stages get the earlier ones' time again, 300 s at least; each analyser
    45 s less than its share, for its process's own work."""
    run = run_state.Run(tmp_path, TINY_TREEBANK, TINY_TREEBANK, True,
                     build.BuildOptions(time_budget=60.0, **NO_GRAPH_CHOICE),
                     {"done": {"split": {"seconds": 0.0}, "frontend": {"seconds": 100.0},
                               "jackknife": {"seconds": 300.0}}})
    assert build.neural_seconds(run, 1) == 3600 - 400 - 400 - 45
    assert build.neural_seconds(run, 2) == (3600 - 400 - 400) / 2 - 45
    run.state["done"] = {"frontend": {"seconds": 10.0}}
    assert build.neural_seconds(run, 1) == 3600 - 10 - 300 - 45
    run.state["done"] = {"frontend": {"seconds": 4000.0}}
    assert build.neural_seconds(run, 1) == 0.0             # over: one epoch and its decay
    run.options = build.BuildOptions()
    assert build.neural_seconds(run, 1) is None
    # the graph parser's parts left to the dev split: its candidates take more
    run.options = build.BuildOptions(time_budget=60.0)
    run.state["done"] = {"frontend": {"seconds": 100.0}, "jackknife": {"seconds": 300.0}}
    assert build.neural_seconds(run, 1) == pytest.approx(3600 - 400 - 400 - 1.2 * 400 - 45)
    run.state["done"] = {"frontend": {"seconds": 10.0}}
    assert build.neural_seconds(run, 1) == 3600 - 10 - 300 - 180 - 45


def test_treebanks_under_100k_words_get_two_analysers():
    """Measured to pay at 22k and 75k words; en_ewt (205k) keeps one, for its build time
    and speed goals (bench/journal/12-any-treebank.md, "Two analysers up to 100,000
    training words")."""
    assert build.auto_analysers(22_432) == 2
    assert build.auto_analysers(75_186) == 2
    assert build.auto_analysers(204_577) == 1


def test_large_treebanks_get_fewer_jackknife_folds():
    """10 folds up to 20,000 sentences; above, the folds' taggers train on about
    180,000 sentences in all, with 3 folds at least."""
    assert [build.auto_folds(n) for n in (40, 12_544, 20_000)] == [10, 10, 10]
    assert [build.auto_folds(n) for n in (20_001, 50_176, 90_000, 190_000)] == [9, 4, 3, 3]


def test_the_jackknife_stage_records_its_folds(tmp_path):
    """Without `--jackknife` the stage takes `auto_folds` of the training sentences and
    says how many it took; the parsers then read the jackknifed file."""
    sents = list(build.read_conllu(TINY_TREEBANK))
    run = run_state.Run(tmp_path, TINY_TREEBANK, TINY_TREEBANK, True, build.BuildOptions())
    info = build._jackknife(run)
    assert info["folds"] == 10 == build.auto_folds(len(sents))
    assert 0 < info["upos"] <= 100
    assert build._tagged_train(run) == tmp_path / ".build" / "train.jackknifed.conllu"
    assert len(list(build.read_conllu(build._tagged_train(run)))) == len(sents)
    assert not build.jackknifed(build.BuildOptions(jackknife=0))


def test_a_treebank_of_heads_and_relations_alone_builds_and_parses(tmp_path):
    """No UPOS, XPOS, LEMMA or FEATS (all `_`): the one command still builds a model
    whose trees are whole; it tags `_` (one tag class, no re-tagging)."""
    rows = []
    for line in TINY_TREEBANK.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[2] = cols[3] = cols[4] = cols[5] = "_"
        rows.append("\t".join(cols))
    bare = tmp_path / "bare.conllu"
    bare.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = build.build_model(bare, None, tmp_path / "bare",
                            build.BuildOptions(**{**TINY_BUILD, "analysers": 1}))
    pipe = Pipeline.load(out)
    for tagger in ("fast", ACCURATE):
        tree = pipe.parse_words("The forces killed him near the border .".split(), "greedy",
                                tagger=tagger)
        heads = [t.head for t in tree.tokens]
        assert heads.count(0) == 1 and all(0 <= h <= len(heads) for h in heads)
        assert {t.upos for t in tree.tokens} == {"_"}


def _stage_that_hangs(pid_file: str) -> None:
    """A stage process that never ends by itself."""
    import os
    import time

    children.child_start()
    with open(pid_file, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_stage_process_ends_with_a_killed_build(tmp_path):
    import os
    import signal
    import time

    pid_file = tmp_path / "stage.pid"
    script = ("from pathlib import Path; from models.build import children; "
              "from tests.models.build.test_build import _stage_that_hangs; "
              f"children.spawn(_stage_that_hangs, ({str(pid_file)!r},), 'test', "
              f"Path({str(tmp_path / 'never')!r}))")
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        for _ in range(600):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.1)
        child = int(pid_file.read_text())
        parent.send_signal(signal.SIGKILL)          # no handler of the parent's can run
        parent.wait()
        for _ in range(100):
            if not alive(child):
                break
            time.sleep(0.1)
        else:
            os.kill(child, signal.SIGKILL)
            pytest.fail("the stage process outlived its build")
    finally:
        parent.kill()


def test_the_neural_stage_keeps_what_it_compiled_under_the_build(tmp_path):
    """Without JAX_COMPILATION_CACHE_DIR, a stage's programs go to the directory the
    build gives it (a tiny one too), where the next process of the stage finds them;
    the cached program gives the same result."""
    cache = tmp_path / children.JAX_CACHE
    script = ("import jax, jax.numpy as jnp; from models.build import children; "
              f"children.use_compilation_cache({str(cache)!r}); "
              "print(float(jax.jit(lambda x: jnp.tanh(x).sum())(jnp.ones(3))))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    results, entries = [], []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        results.append(float(out.stdout))
        entries.append({p.name: p.stat().st_mtime_ns for p in cache.iterdir()})
    assert entries[0] and entries[1] == entries[0]     # found, not compiled and written again
    assert results[0] == results[1] == pytest.approx(3 * math.tanh(1.0), rel=1e-6)


def _write_tunables(path: str) -> None:
    """A stage process that writes the GLIBC_TUNABLES it started with."""
    Path(path).write_text(os.environ.get("GLIBC_TUNABLES", "<unset>"))


def test_the_neural_stage_process_starts_with_huge_pages_and_the_parent_keeps_its_own(
        tmp_path, monkeypatch):
    out = tmp_path / "tunables"
    for mine, child in [(None, children.HUGE_PAGES),
                        ("glibc.malloc.arena_max=2",
                         f"glibc.malloc.arena_max=2:{children.HUGE_PAGES}"),
                        ("glibc.malloc.hugetlb=0", "glibc.malloc.hugetlb=0")]:
        if mine is None:
            monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
        else:
            monkeypatch.setenv("GLIBC_TUNABLES", mine)
        children.spawn(_write_tunables, (str(out),), "test", out, tunables=children.HUGE_PAGES)
        assert out.read_text() == child
        assert os.environ.get("GLIBC_TUNABLES") == mine
    children.spawn(_write_tunables, (str(out),), "test", out)
    assert out.read_text() == "glibc.malloc.hugetlb=0"


def test_a_contextual_analyser_shares_the_time_budget(tmp_path):
    """With an encoder the neural stage's analysers leave a share for the contextual
    one, which gets what they left; the later stages' share is judged by the front-end
    and jackknife alone (1.5 times it: calibration runs twice), not by the analysers."""
    run = run_state.Run(tmp_path, TINY_TREEBANK, TINY_TREEBANK, True,
                     build.BuildOptions(time_budget=60.0, encoder="e5-small",
                                        **NO_GRAPH_CHOICE),
                     {"done": {"split": {"seconds": 0.0}, "frontend": {"seconds": 100.0},
                               "jackknife": {"seconds": 300.0}}})
    assert build.contextual_pending(run) == 1
    later = 1.5 * 400
    assert build.neural_seconds(run, 2 + 1) == (3600 - 400 - later) / 3 - 45
    run.state["done"]["neural"] = {"seconds": 1800.0}
    assert build.neural_seconds(run, 1) == 3600 - 400 - 1800 - later - 45
    run.state["done"]["contextual"] = {"seconds": 700.0}
    assert build.contextual_pending(run) == 0
    run.options = build.BuildOptions(time_budget=60.0, encoder="e5-small", skip=("contextual",),
                                     **NO_GRAPH_CHOICE)
    run.state["done"].pop("contextual")
    assert build.contextual_pending(run) == 0
