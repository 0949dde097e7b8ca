"""Shared fixtures of the service tests: a real model, real redis-server, real uvicorn.

`model_dirs` gives the directories holding the model the service tests call
`en_ewt`: the shipped models/pretrained/en_ewt once it is complete, otherwise a
tiny real model trained here in seconds (300 EWT sentences, one epoch each; set
DEPTREE_TEST_TINY=1 to force it). `serve(...)` starts `python -m app.serve_cli
serve` on a free loopback port and waits for /ready; `redis_server()` starts
`redis-server` on a free port with no persistence (skipped when the binary is
missing).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EWT = Path(os.environ.get("DEPTREE_EWT_DIR", ROOT.parent / "shared" / "data" / "en_ewt"))
SHIPPED = ROOT / "models" / "pretrained" / "en_ewt"

# ---- JAX's compiled programs, shared by the session's builds ----------------------------
def pytest_configure(config):
    """One JAX compilation cache for the whole session, set before anything imports
    JAX: the dozen tiny builds and trainings compile the same programs, ~20 s each
    when compiled afresh. (A build's own cache, under its .build, is what a user gets.)"""
    import tempfile

    if not os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        config._deptree_jax_cache = tempfile.mkdtemp(prefix="deptree-jax-")
        os.environ["JAX_COMPILATION_CACHE_DIR"] = config._deptree_jax_cache
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    # one cache of decompressed model arrays (models/array_cache.py) for the session's
    # loads and servers, not the user's own (~/.cache/deptree/arrays)
    if not os.environ.get("DEPTREE_ARRAY_CACHE"):
        config._deptree_array_cache = tempfile.mkdtemp(prefix="deptree-arrays-")
        os.environ["DEPTREE_ARRAY_CACHE"] = config._deptree_array_cache


def pytest_unconfigure(config):
    for name in ("_deptree_jax_cache", "_deptree_array_cache"):
        cache = getattr(config, name, None)
        if cache:
            shutil.rmtree(cache, ignore_errors=True)


# ---- ports and processes ---------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (children first), from /proc."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(") ", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out, todo = [], list(kids.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def stop_process(proc: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM (the graceful stop), SIGKILL after `timeout`; then whatever it had
    started and is still there (workers, the resource tracker) is killed too, so
    nothing outlives the fixture that started it. (The processes stay in pytest's
    process group, so a Ctrl-C or a `timeout` that signals the group reaches them.)"""
    below = descendants(proc.pid) if proc.poll() is None else []
    try:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
    finally:
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass                       # it exited with its parent, as it should


# ---- a real model ----------------------------------------------------------------------
def _shipped_complete() -> bool:
    return (SHIPPED / "pipeline.json").exists() and (SHIPPED / "graph" / "model.json").exists()


def build_tiny_model(out: Path, n_sentences: int = 300) -> Path:
    """A real (tiny) en_ewt: graph parser + front-end trained on the first sentences."""
    from models.graph.train import TrainConfig, train
    from models.text.train import train_frontend

    src = EWT / "train.conllu"
    if not src.exists():
        pytest.skip(f"no EWT training data at {src} to build a test model")
    blocks, cur = [], []
    with open(src, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                cur.append(line)
            elif cur:
                blocks.append("".join(cur))
                cur = []
                if len(blocks) >= n_sentences:
                    break
    data = out.parent / "train.conllu"
    data.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    model = out / "en_ewt"
    cfg = TrainConfig(order=3, epochs=1, pruner_epochs=1, label_epochs=1, log2_size=18)
    train(str(data), str(model / "graph"), None, cfg, command="tests/conftest.py tiny model")
    train_frontend(str(data), None, str(model / "frontend"), epochs=2, word_classes=None)
    (model / "pipeline.json").write_text(
        '{"name": "en_ewt", "language": "en", "version": "test-tiny", "graph": "graph",'
        ' "frontend": "frontend"}\n', encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory) -> list[str]:
    """Extra model directories for DEPTREE_MODEL_DIRS ([] = the shipped en_ewt)."""
    if _shipped_complete() and not os.environ.get("DEPTREE_TEST_TINY"):
        return []
    return [str(build_tiny_model(tmp_path_factory.mktemp("models")))]


@pytest.fixture(scope="session")
def ewt_dev_tokens():
    """A function: the first n en_ewt dev sentences as token lists (skips the test
    without the data)."""
    from itertools import islice

    from models.conllu import read_conllu

    def first(n: int) -> list[list[str]]:
        path = EWT / "dev.conllu"
        if not path.exists():
            pytest.skip(f"no EWT dev data at {path}")
        return [[w.form for w in s.words] for s in islice(read_conllu(str(path)), n)]

    return first


# ---- redis-server ----------------------------------------------------------------------
class RedisServer:
    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--protected-mode", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        r = redis.Redis.from_url(self.url)
        for _ in range(100):
            try:
                r.ping()
                return self
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    def client(self):
        import redis

        return redis.Redis.from_url(self.url, decode_responses=True)


@pytest.fixture
def redis_server():
    """A factory: each call starts a fresh redis-server; all are stopped afterwards."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (.ci/run installs it)")
    started: list[RedisServer] = []

    def start(port: int | None = None) -> RedisServer:
        started.append(RedisServer(port))        # listed first: stopped even if start fails
        return started[-1].start()

    try:
        yield start
    finally:
        for s in started:
            s.stop()


# ---- the service over real HTTP --------------------------------------------------------
class Server:
    def __init__(self, proc: subprocess.Popen, url: str, log: Path) -> None:
        self.proc = proc
        self.url = url
        self.log = log

    def client(self, timeout: float = 60):
        import httpx

        return httpx.Client(base_url=self.url, timeout=timeout)

    def wait_ready(self, timeout: float = 180, workers: int = 1) -> dict:
        import httpx
        from load_calibration import slowdown

        timeout *= slowdown()      # a cold numba cache compiles for minutes on a busy machine
        t0 = time.monotonic()
        last, failing = None, 0
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}:\n{self.tail()}")
            try:
                r = httpx.get(self.url + "/ready", timeout=5)
                last = r.json()
                # every decoder warm too: on a cold numba cache the slow ones compile
                # after /ready turns 200 (worker/warm.py), and a test's deadline would
                # be spent waiting for them
                warm = all(set(m.get("warm", m["decoders"])) >= set(m["decoders"])
                           for m in last.get("models", {}).values())
                if r.status_code == 200 and last["workers"]["workers_up"] >= workers and warm:
                    return last
                failing = failing + 1 if last["workers"].get("error") else 0
                if failing > 25:             # a worker that cannot load its model
                    raise RuntimeError(f"workers fail: {last}\n{self.tail()}")
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"not ready after {timeout}s: {last}\n{self.tail()}")

    def tail(self, n: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])


def start_process(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """`python -m app.serve_cli ARGS`, logging to `log` (stop it with stop_process)."""
    full = dict(os.environ)
    full.pop("PROMETHEUS_MULTIPROC_DIR", None)
    full.update(env)
    with open(log, "ab") as fh:          # the child keeps its own copy of the descriptor
        return subprocess.Popen([sys.executable, "-m", "app.serve_cli", *args], cwd=ROOT,
                                env=full, stdout=fh, stderr=subprocess.STDOUT)


@pytest.fixture
def stream_worker(model_dirs, tmp_path):
    """A factory: stream_worker(env) starts `deptree worker --models en_ewt` (stopped after)."""
    procs: list[subprocess.Popen] = []

    def start(env: dict[str, str]) -> subprocess.Popen:
        full = {"DEPTREE_MODEL_DIRS": os.pathsep.join(model_dirs), **env}
        procs.append(start_process(["worker", "--models", "en_ewt"], full,
                                   tmp_path / f"worker{len(procs)}.log"))
        return procs[-1]

    try:
        yield start
    finally:
        for p in procs:
            stop_process(p)


def _servers(model_dirs: list[str], tmp_path_factory):
    """A server factory and the list of what it started (for the caller to stop)."""
    servers: list[Server] = []

    def start(workers: int = 1, env: dict[str, str] | None = None, args: list[str] = (),
              ready_workers: int | None = None, wait: bool = True) -> Server:
        port = free_port()
        log = tmp_path_factory.mktemp("server") / "server.log"
        full_env = {"DEPTREE_MODEL_DIRS": os.pathsep.join(model_dirs), "DEPTREE_MODELS": "en_ewt",
                    **(env or {})}
        proc = start_process(["serve", "--port", str(port), "--workers", str(workers), *args],
                             full_env, log)
        srv = Server(proc, f"http://127.0.0.1:{port}", log)
        servers.append(srv)
        if wait:
            try:
                srv.wait_ready(workers=workers if ready_workers is None else ready_workers)
            except BaseException:        # not ready: stopped now, whoever calls start
                stop_process(proc)
                raise
        return srv

    return start, servers


@pytest.fixture
def serve(model_dirs, tmp_path_factory):
    """A factory: serve(workers=2, env={...}, args=[...]) -> a ready Server, stopped (with
    its workers) at the end of the test, so that few models are in memory at once."""
    start, servers = _servers(model_dirs, tmp_path_factory)
    try:
        yield start
    finally:
        for s in servers:
            stop_process(s.proc)


# Budgets the slow-request tests may ask for (the defaults cap restarts at 2000).
SLOW_CAPS = {"DEPTREE_BUDGET_CAPS": '{"restarts": 10000, "converge": 10000}'}


@pytest.fixture(scope="session")
def server(model_dirs, tmp_path_factory):
    """The embedded default: local backend, two workers, in-process LRU cache."""
    start, servers = _servers(model_dirs, tmp_path_factory)
    try:                                 # a setup that fails stops its server too
        yield start(workers=2, env=SLOW_CAPS)
    finally:
        for s in servers:
            stop_process(s.proc)


def slow_tokens(n: int = 200) -> list[str]:
    """A long sentence of distinct words: hill-climbing on it is slow enough to be caught."""
    words = ["the", "cat", "saw", "a", "dog", "near", "old", "houses", "while", "many",
             "people", "walked", "slowly", "into", "green", "fields", "and", "talked", "about",
             "strange", "music", "from", "distant", "cities"]
    return [words[i % len(words)] + ("" if i < len(words) else str(i)) for i in range(n)]


@pytest.fixture(scope="session")
def slow():
    """(tokens, budget) of a request that runs until its deadline."""
    return slow_tokens(), {"restarts": 10000, "converge": 10000}


# ---- a model built by `deptree train` -------------------------------------------------
TINY_TREEBANK = ROOT / "tests" / "models" / "text" / "data" / "tiny.conllu"
# a complete model in seconds: every stage, one epoch each, small networks
TINY_BUILD = {"neural_epochs": 1, "graph_epochs": 1, "transition_epochs": 1, "jackknife": 2,
              "time_budget": 60.0,
              "neural": {"word_dim": 8, "char_dim": 8, "char_filters": 8, "hidden": 16,
                         "arc_dim": 16, "label_dim": 8, "batch_tokens": 256}}


def record_bars(monkeypatch, module) -> list:
    """The progress bars `module` opens, in order: its `progress_bar` wrapped for the
    test."""
    bars, make = [], module.progress_bar

    def recording(*args, **kwargs):
        bars.append(make(*args, **kwargs))
        return bars[-1]

    monkeypatch.setattr(module, "progress_bar", recording)
    return bars


def build_tiny(out: Path, **options) -> Path:
    """`deptree train`'s whole build on the 40-sentence tiny treebank into out."""
    from models.build import BuildOptions, build_model

    return build_model(TINY_TREEBANK, None, out,
                       BuildOptions(**{**TINY_BUILD, "name": "tiny", "language": "en",
                                       **options}))


@pytest.fixture(scope="session")
def built_model(tmp_path_factory) -> Path:
    """A complete model directory (`tiny`) trained by the one command's code path."""
    pytest.importorskip("jax")
    return build_tiny(tmp_path_factory.mktemp("built") / "tiny")


# ---- the official UD validator ---------------------------------------------------------
@pytest.fixture(scope="session")
def ud_errors():
    """A function: ud_errors(conllu_text, lang="en") -> the errors (as strings) of the
    official UD validator (`udtools`, validate.py of UniversalDependencies/tools) at
    levels 1 and 2, over the text written to a file as a user would save it."""
    import tempfile

    from udtools import Validator
    from udtools.incident import Error

    def errors(text: str, lang: str = "en") -> list[str]:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "out.conllu"
            path.write_text(text, encoding="utf-8", newline="")
            state = Validator(lang=lang, level=2, output=None).validate_files([str(path)])
        return [str(e) for e in state.error_tracker if isinstance(e, Error)]

    return errors

def wait_for(pred, timeout: float, what: str):
    """pred()'s first true value, polled every 0.2 s; AssertionError naming `what`
    after `timeout` seconds."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        got = pred()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout}s: {what}")


@pytest.fixture(name="wait_for", scope="session")
def wait_for_fixture():
    """wait_for, for test modules outside this directory."""
    return wait_for


@pytest.fixture(scope="session")
def long_tokens():
    """slow_tokens itself, for a length other than 200 (with several conftest modules
    loaded, `from conftest import` may find another one)."""
    return slow_tokens
