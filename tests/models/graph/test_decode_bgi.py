"""BGI-PP decoder: valid trees, Algorithm 1 reference, incremental = from-scratch
gain/loss, swaps, beam, ensemble, determinism, budget validation."""
import time

import numpy as np
import pytest
from graph_fixtures import all_trees, random_sentence

from models.decoder_registry import DECODERS
from models.graph.decode_bgi import (
    BGIProblem,
    bgi_construct,
    improve,
    run_bgi,
)
from models.graph.decode_mst import decode_mst
from models.graph.decoders import (
    BudgetError,
    Scorer,
    decode_bgi,
)
from models.graph.prune import all_arcs
from models.graph.scoring import arc_scores
from models.tree import is_valid_tree

MASK = (1 << 14) - 1


def _scorer(rng, n, order, allowed=None):
    enc = random_sentence(rng, n)
    w = rng.normal(size=MASK + 1).astype(np.float32)
    allowed = all_arcs(n) if allowed is None else allowed
    if order == 1:
        S = rng.normal(size=(n + 1, n + 1))
        S[~allowed] = -np.inf
    else:
        S = arc_scores(enc.attrs, enc.upos_prefix, w, np.uint64(MASK), allowed)
    return Scorer(order, S, allowed, enc.attrs, enc.upos_prefix, w, MASK)


def _random_allowed(rng, n, keep=0.5):
    allowed = all_arcs(n) & (rng.random((n + 1, n + 1)) < keep)
    allowed[0, 1:] |= rng.random(n) < 0.3   # some root arcs
    return allowed


def algorithm1(S: np.ndarray) -> np.ndarray:
    """Reference Algorithm 1 for first-order parts and beta = 0: add the highest
    arc that keeps a partial UD tree (m headless, no cycle, one root child)."""
    n1 = S.shape[0]
    heads = np.full(n1, -1, np.int64)

    def root_of(x):
        while x > 0 and heads[x] >= 0:
            x = heads[x]
        return x

    for _ in range(n1 - 1):
        best, arg = -np.inf, None
        for h in range(n1):
            for m in range(1, n1):
                if heads[m] >= 0 or h == m or root_of(h) == m or not np.isfinite(S[h, m]):
                    continue
                if h == 0 and (heads[1:] == 0).any():
                    continue
                if S[h, m] > best:
                    best, arg = S[h, m], (h, m)
        heads[arg[1]] = arg[0]
    return heads


def scratch_values(prob: BGIProblem, st, beta: float) -> np.ndarray:
    """v of every arc straight from the definitions (bgi_state.py docstring)."""
    n1 = prob.n1
    heads = st.head.copy()
    tree = st.intree

    def root_of(x):
        while x > 0 and heads[x] >= 0:
            x = heads[x]
        return x

    used_root = (heads[1:] == 0).any()
    avail = np.zeros(n1 * n1, bool)
    for h in range(n1):
        for m in range(1, n1):
            avail[h * n1 + m] = (prob.allowed[h, m] and heads[m] < 0 and h != m
                                 and root_of(h) != m and not (h == 0 and used_root))
    assert (avail == st.avail).all()
    P = prob.parcs
    alive = np.array([all(a < 0 or tree[a] or avail[a] for a in row) for row in P])
    assert (alive == st.alive).all()
    G = np.zeros(n1 * n1)
    for i, row in enumerate(P):
        if not alive[i]:
            continue
        for a in row:
            if a >= 0 and avail[a]:
                G[a] += prob.w[i] * np.prod([prob.p[b] for b in row
                                             if b >= 0 and b != a and not tree[b]])
    D = prob.p * G
    v = np.full(n1 * n1, np.inf)
    for e in np.nonzero(avail)[0]:
        h, m = divmod(int(e), n1)
        r = root_of(h)
        excl = [x * n1 + m for x in range(n1) if x != h]
        excl += [a * n1 + r for a in range(1, n1) if root_of(a) == m]
        if h == 0:
            excl += [x for x in range(1, n1) if x != m]
        loss = sum(D[x] for x in excl if avail[x])
        v[e] = beta * loss - (1 - beta) * G[e]
    return v


def reference_beam(prob: BGIProblem, beta: float, beam: int) -> list[np.ndarray]:
    """The beam in plain Python over BGIState objects: per state its `beam` best
    arcs (ties by arc id), then the `beam` best (cost, state, arc) overall."""
    states = [prob.initial()]
    v = np.empty(prob.n1 ** 2)
    for _ in range(prob.n1 - 1):
        cands = []
        for si, s in enumerate(states):
            prob.values(s, beta, v)
            fin = [int(e) for e in np.lexsort((np.arange(v.size), v))[:beam]
                   if np.isfinite(v[e])]
            if not fin:
                cands.append((s.cost, si, prob.fallback(s)))
            cands += [(s.cost + float(v[e]), si, e) for e in fin]
        cands = sorted(cands)[:beam]
        nxt = []
        for cost, si, e in cands:
            s = states[si].copy()
            prob.add(s, e)
            s.cost = cost
            nxt.append(s)
        states = nxt
    return [np.concatenate([[-1], s.head[1:]]) for s in states]


@pytest.mark.parametrize("order", [1, 2, 3])
def test_incremental_gain_loss_equals_scratch_every_step(rng, order):
    for trial in range(12):
        n = int(rng.integers(2, 7))
        allowed = all_arcs(n) if trial % 2 else _random_allowed(rng, n)
        sc = _scorer(rng, n, order, allowed)
        beta = float(rng.random())
        prob = BGIProblem(sc, alpha=float(rng.uniform(0.2, 2.0)),
                          min_part_prob=0.0 if trial % 3 else 0.02, markers=trial % 4 != 1)
        st = prob.initial()
        v = np.empty(prob.n1 ** 2)
        for _ in range(n):
            prob.values(st, beta, v)
            ref = scratch_values(prob, st, beta)
            fin = np.isfinite(ref)
            assert (np.isfinite(v) == fin).all()
            np.testing.assert_allclose(v[fin], ref[fin], rtol=1e-9, atol=1e-9)
            e = int(np.argmin(v)) if fin.any() else prob.fallback(st)
            prob.add(st, e)


def test_first_order_beta0_equals_algorithm1(rng):
    for _ in range(60):
        n = int(rng.integers(1, 10))
        sc = _scorer(rng, n, 1)
        trees, _ = bgi_construct(BGIProblem(sc, alpha=1.0), beta=0.0)
        assert (trees[0][1:] == algorithm1(sc.S)[1:]).all()


@pytest.mark.parametrize("order", [1, 3])
def test_always_valid_tree(rng, order):
    for trial in range(40):
        n = int(rng.integers(1, 12))
        allowed = _random_allowed(rng, n, keep=0.3) if trial % 2 else all_arcs(n)
        sc = _scorer(rng, n, order, allowed)
        for beam, swaps in ((1, 0), (3, 2)):
            heads, score, _ = run_bgi(sc, beam, swaps, 1.0, float(rng.random()))
            assert is_valid_tree(heads)
            if np.isfinite(score):
                assert score == pytest.approx(sc.score(heads))
            # a dead end of the construction is repaired when the allowed arcs hold a tree
            mst = decode_mst(np.where(allowed, sc.S, -np.inf))
            if is_valid_tree(mst) and allowed[mst[1:], np.arange(1, n + 1)].all():
                assert allowed[heads[1:], np.arange(1, n + 1)].all() and np.isfinite(score)


def test_swaps_never_lose_and_reach_local_optimum(rng):
    for n in (3, 4, 5):
        sc = _scorer(rng, n, 3)
        trees = list(all_trees(n))
        for t in trees[:: max(1, len(trees) // 15)]:
            heads = t.copy()
            before = sc.score(heads)
            improve(sc, heads, 50)
            assert is_valid_tree(heads)
            after = sc.score(heads)
            assert after >= before - 1e-9
            # no single arc change (either case) improves on it
            for m in range(1, n + 1):
                for h2 in range(n + 1):
                    if h2 in (m, heads[m]):
                        continue
                    cand = heads.copy()
                    x = h2
                    while x > 0 and x != m:
                        x = cand[x]
                    if x == m:
                        cand[h2] = heads[m]
                    cand[m] = h2
                    if is_valid_tree(cand):
                        assert sc.score(cand) <= after + 1e-9


def test_rehang_case_is_used(rng):
    """m = 1 under the root word 2, whose best head is 1's child 3: the move
    1 -> 3 needs 3 re-hung on 1's old head first."""
    S = np.full((4, 4), -5.0)
    np.fill_diagonal(S, -np.inf)
    S[:, 0] = -np.inf
    S[0, 2] = 5.0
    S[2, 1] = 0.0
    S[1, 3] = 0.0
    S[3, 1] = 4.0
    S[2, 3] = 3.0
    sc = Scorer(1, S, np.isfinite(S), random_sentence(rng, 3).attrs,
                random_sentence(rng, 3).upos_prefix, np.zeros(MASK + 1, np.float32), MASK)
    heads = np.array([-1, 2, 0, 1])
    improve(sc, heads, 1)
    assert heads.tolist() == [-1, 3, 0, 2]


@pytest.mark.parametrize("beam", [1, 2, 5])
def test_beam_kernel_equals_python_reference(rng, beam):
    for trial in range(15):
        n = int(rng.integers(1, 9))
        allowed = _random_allowed(rng, n, keep=0.4) if trial % 2 else all_arcs(n)
        sc = _scorer(rng, n, 3 if trial % 3 else 1, allowed)
        prob = BGIProblem(sc, 1.0)
        beta = float(rng.random())
        ref = reference_beam(prob, beta, beam)
        for deadline in (None, time.monotonic() + 3600):  # one call / a call per step
            trees, hit = bgi_construct(prob, beta, beam=beam, deadline=deadline)
            assert not hit and len(trees) == len(ref)
            for t, r in zip(trees, ref):
                assert (t == r).all()


def test_beam_returns_best_of_its_trees(rng):
    for _ in range(10):
        sc = _scorer(rng, 8, 3)
        prob = BGIProblem(sc, 1.0)
        trees, _ = bgi_construct(prob, 0.2, beam=4)
        assert 1 <= len(trees) <= 4 and all(is_valid_tree(t) for t in trees)
        _, score, _ = run_bgi(sc, 4, 0, 1.0, 0.2, min_part_prob=0.0)
        assert score == pytest.approx(max(sc.score(t) for t in trees))
        for t in trees:
            improve(sc, t, 50)
        _, score, _ = run_bgi(sc, 4, 50, 1.0, 0.2, min_part_prob=0.0)
        assert score == pytest.approx(max(sc.score(t) for t in trees))


def test_deterministic_and_registered(rng):
    assert "bgi" in DECODERS
    sc = _scorer(rng, 9, 3)
    a = decode_bgi(sc, {"beam": 2, "swaps": 2})
    b = decode_bgi(sc, {"beam": 2, "swaps": 2})
    assert (a.heads == b.heads).all() and a.score == b.score
    e = decode_bgi(sc, {"ensemble_with": "greedy"})
    assert is_valid_tree(e.heads) and e.stats["ensemble_with"] == "greedy"


def test_ensemble_with_large_gamma_reproduces_other_tree(rng):
    from models.graph.decoders import decode_greedy
    sc = _scorer(rng, 8, 3)
    other = decode_greedy(sc, {}).heads
    prob = BGIProblem(sc, 1.0, bias_heads=other, gamma=(1e6, 0.0, 0.0))
    trees, _ = bgi_construct(prob, beta=0.0)
    assert (trees[0][1:] == other[1:]).all()


@pytest.mark.parametrize("budget", [{"beam": 0}, {"swaps": -1}, {"alpha": 0},
                                    {"beta": 1.5}, {"beta": "x"}, {"min_part_prob": -0.1},
                                    {"min_part_prob": 2}, {"min_part_prob": None},
                                    {"ensemble_with": "bgi"}, {"deadline_ms": 0},
                                    {"ensemble_heads": [0]}])
def test_budget_validation(rng, budget):
    sc = _scorer(rng, 4, 3)
    with pytest.raises(BudgetError):
        decode_bgi(sc, budget)


def test_past_deadline_still_returns_a_valid_tree(rng):
    sc = _scorer(rng, 9, 3)
    trees, hit = bgi_construct(BGIProblem(sc, 1.0), 0.3, beam=4, deadline=time.monotonic() - 1)
    assert hit and len(trees) == 1 and is_valid_tree(trees[0])
    res = decode_bgi(sc, {"beam": 4, "swaps": 5, "deadline_ms": 1e-6})
    assert is_valid_tree(res.heads) and res.stats["deadline_hit"]


def test_ensemble_with_given_heads_of_another_parser(rng):
    """`ensemble_with: selectional`: the Pipeline passes the transition parser's tree
    as `ensemble_heads` (no budget field: a request cannot set it); with a huge gamma
    BGI reproduces it, and bad heads are refused."""
    sc = _scorer(rng, 7, 3)
    other = DECODERS["mst"](sc, {}).heads
    res = decode_bgi(sc, {"ensemble_with": "selectional"},
                     ensemble_heads=[int(h) for h in other[1:]])
    assert is_valid_tree(res.heads) and res.stats["ensemble_with"] == "selectional"
    prob = BGIProblem(sc, 1.0, bias_heads=other, gamma=(1e6, 0.0, 0.0))
    assert (bgi_construct(prob, beta=0.0)[0][0][1:] == other[1:]).all()
    for bad in (None, [0] * 6, [9] * 7, [-1] * 7):
        with pytest.raises(BudgetError):
            decode_bgi(sc, {"ensemble_with": "selectional"}, ensemble_heads=bad)


def test_starts_of_the_swaps(rng):
    """start "both" improves a superset of the trees "bgi" and "max" improve, so its
    model score is never lower; "max" starts from the higher-scoring tree."""
    for n in (3, 6, 10):
        sc = _scorer(rng, n, 3)
        res = {s: decode_bgi(sc, {"start": s, "swaps": 3}) for s in ("bgi", "max", "both")}
        assert all(is_valid_tree(r.heads) for r in res.values())
        assert res["both"].score >= max(res["bgi"].score, res["max"].score) - 1e-9
        assert decode_bgi(sc, {"start": "max", "swaps": 0}).score >= \
            decode_bgi(sc, {"start": "bgi", "swaps": 0}).score - 1e-9
    for bad in ("yes", True, None):
        with pytest.raises(BudgetError):
            decode_bgi(sc, {"start": bad})


def test_min_part_prob_is_a_budget_field(rng):
    """The budget field `min_part_prob` (its default the search's own, MIN_PART_PROB):
    0 builds every higher-order part, a large value fewer; both give a valid tree."""
    from models.graph.decode_bgi import MIN_PART_PROB

    assert decode_bgi.defaults()["min_part_prob"] == MIN_PART_PROB
    assert "min_part_prob" in decode_bgi.describe()["params"]
    sc = _scorer(rng, 9, 3)
    parts = {}
    for p in (0.0, MIN_PART_PROB, 0.5):
        res = decode_bgi(sc, {"min_part_prob": p})
        assert is_valid_tree(res.heads)
        parts[p] = res.stats["parts"]
    assert parts[0.0] > parts[0.5] and parts[MIN_PART_PROB] >= parts[0.5]
    default = decode_bgi(sc, {})
    assert default.stats["parts"] == parts[MIN_PART_PROB]
