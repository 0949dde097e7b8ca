"""Kernels of the BGI-PP decoder: the incremental gain/loss state and the beam.

Tchernowitz, Yedidsion & Reichart (EMNLP 2016), Algorithm 2 and Appendix A.
Parts come from bgi_parts.py, each read as the set of its arcs (at most 3). A
part is alive while none of its arcs is excluded; that siblings must be
consecutive and valency parts are not arc sets, so both are left to the final
scoring (swaps, beam choice), not to the construction.

State of a partial tree T (arc id a = h * n1 + m):
  G[a]   gain: sum over alive parts P containing a of w_P * prod of p_b over
         P's other arcs b not in T
  D[a] = p_a * G[a]: the mass lost if a is excluded
  Din[m]      sum of D over available arcs into m
  Csub[c, r]  sum of D over available arcs a->r, a in the component rooted at c
  Droot       sum of D over available arcs 0->x
loss(h->m) = Din[m] - D + Csub[m, root(h)] + [h == 0] (Droot - D): the arcs
adding h->m excludes are the other heads of m, the arcs from m's component
into the root of h's component (cycles) and, for h = 0, the other root arcs.
A part through two excluded arcs is charged once per arc.

The arrays travel packed, as pynndescent packs a tree's arrays in one named tuple:
`Parts` (the sentence's parts and their arc index, fixed), `Tree` (one partial
tree's state) and `Beam` (the beam's partial trees as rows of the same arrays, plus
their costs); `beam_row` reads one row of a `Beam` as a `Tree`.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

# w (P,) part weights, parcs (P, 3) their arcs (-1 padded), aptr/apart the arc ->
# parts index (CSR), p (n1*n1,) arc probabilities
Parts = namedtuple("Parts", "w parcs aptr apart p")
# one partial tree: avail, intree (bool (n1*n1,)), alive (bool (P,)), G (n1*n1,),
# Din (n1,), Csub (n1, n1), Droot (1,), comp, head (int64 (n1,))
Tree = namedtuple("Tree", "avail intree alive G Din Csub Droot comp head")
# the beam: each field of Tree with a leading row axis, and cost (rows,)
Beam = namedtuple("Beam", "avail intree alive G Din Csub Droot comp head cost")


@njit(cache=True, _nrt=False)
def _contrib(i, skip, w, parcs, intree, p):
    """w_P * prod of p over P's arcs not in the tree, except arc `skip`."""
    v = w[i]
    for j in range(3):
        b = parcs[i, j]
        if b >= 0 and b != skip and not intree[b]:
            v *= p[b]
    return v


@njit(cache=True, _nrt=False)
def _bump(a, delta, n1, G, p, Din, Csub, Droot, comp):
    """G[a] += delta and the D aggregates of available arc a with it."""
    G[a] += delta
    dd = p[a] * delta
    h = a // n1
    m = a - h * n1
    Din[m] += dd
    Csub[comp[h], m] += dd
    if h == 0:
        Droot[0] += dd


@njit(cache=True, _nrt=False)
def state_init(pt, t):
    """Fill G and the aggregates of the empty partial tree t (a `Tree`; avail, intree,
    alive set by the caller: avail = allowed arcs, nothing in the tree, all alive);
    pt: the sentence's `Parts`."""
    w, parcs, aptr, apart, p = pt
    avail, intree, alive, G, Din, Csub, Droot, comp, head = t
    n1 = head.shape[0]
    G[:] = 0.0
    Din[:] = 0.0
    Csub[:, :] = 0.0
    Droot[0] = 0.0
    for x in range(n1):
        comp[x] = x
        head[x] = -1
    for a in range(n1 * n1):
        if not avail[a]:
            continue
        g = 0.0
        for q in range(aptr[a], aptr[a + 1]):
            i = apart[q]
            if alive[i]:
                g += _contrib(i, a, w, parcs, intree, p)
        _bump(a, g, n1, G, p, Din, Csub, Droot, comp)


@njit(cache=True, _nrt=False)
def state_values(beta, t, p, v):
    """v[a] = beta * loss - (1 - beta) * gain for available arcs, +inf otherwise
    (t: a `Tree`, p: the arc probabilities)."""
    avail, G, Din, Csub, Droot, comp = t.avail, t.G, t.Din, t.Csub, t.Droot, t.comp
    n1 = comp.shape[0]
    for a in range(n1 * n1):
        if not avail[a]:
            v[a] = np.inf
            continue
        h = a // n1
        m = a - h * n1
        d = p[a] * G[a]
        loss = Din[m] - d + Csub[m, comp[h]]
        if h == 0:
            loss += Droot[0] - d
        v[a] = beta * loss - (1.0 - beta) * G[a]


@njit(cache=True, _nrt=False)
def _exclude(x, n1, pt, t):
    """Arc x leaves the available set: its D leaves the aggregates and the parts
    through it die, taking their contributions from their other available arcs."""
    w, parcs, aptr, apart, p = pt
    avail, intree, alive, G, Din, Csub, Droot, comp, _ = t
    avail[x] = False
    d = p[x] * G[x]
    h = x // n1
    m = x - h * n1
    Din[m] -= d
    Csub[comp[h], m] -= d
    if h == 0:
        Droot[0] -= d
    for q in range(aptr[x], aptr[x + 1]):
        i = apart[q]
        if not alive[i]:
            continue
        alive[i] = False
        for j in range(3):
            b = parcs[i, j]
            if b >= 0 and b != x and avail[b]:
                _bump(b, -_contrib(i, b, w, parcs, intree, p), n1, G, p, Din, Csub, Droot, comp)


@njit(cache=True, _nrt=False)
def state_add(e, pt, t):
    """Add arc e = h -> m (m headless, root(h) != m) to the partial tree t and update
    its state (Appendix A): exclude the other heads of m, the arcs from m's component
    into root(h) and, for h = 0, the other root arcs; re-weight the alive parts
    through e; merge m's component into root(h)'s. Cost: the parts through the
    touched arcs, O(n)."""
    w, parcs, aptr, apart, p = pt
    avail, intree, alive, G, Din, Csub, Droot, comp, head = t
    n1 = head.shape[0]
    h = e // n1
    m = e - h * n1
    r = comp[h]
    if avail[e]:  # e leaves the available set without killing its parts
        avail[e] = False
        d = p[e] * G[e]
        Din[m] -= d
        Csub[r, m] -= d
        if h == 0:
            Droot[0] -= d
    for x in range(n1):
        a = x * n1 + m
        if avail[a]:
            _exclude(a, n1, pt, t)
    for y in range(n1):
        if comp[y] == m:
            a = y * n1 + r
            if avail[a]:
                _exclude(a, n1, pt, t)
    if h == 0:
        for x in range(1, n1):
            if avail[x]:
                _exclude(x, n1, pt, t)
    for q in range(aptr[e], aptr[e + 1]):
        i = apart[q]
        if not alive[i]:
            continue
        for j in range(3):
            b = parcs[i, j]
            if b >= 0 and b != e and avail[b]:
                intree[e] = False
                old = _contrib(i, b, w, parcs, intree, p)
                intree[e] = True
                _bump(b, _contrib(i, b, w, parcs, intree, p) - old, n1, G, p, Din, Csub,
                      Droot, comp)
    intree[e] = True
    for x in range(n1):
        Csub[r, x] += Csub[m, x]
        Csub[m, x] = 0.0
    for x in range(n1):
        if comp[x] == m:
            comp[x] = r
    Csub[r, r] = 0.0
    head[m] = h


@njit(cache=True, _nrt=False)
def fallback_arc(head, comp, fb):
    """Best arc h -> m by fb (float64 (n1, n1)) keeping a valid partial tree,
    pruned arcs included: used when no allowed arc is available (-1: none)."""
    n1 = head.shape[0]
    root_used = False
    for x in range(1, n1):
        if head[x] == 0:
            root_used = True
    best = -np.inf
    arg = -1
    for m in range(1, n1):
        if head[m] != -1:
            continue
        for h in range(n1):
            if h == m or comp[h] == m or (h == 0 and root_used):
                continue
            if fb[h, m] > best:
                best = fb[h, m]
                arg = h * n1 + m
    return arg


@njit(cache=True, inline="always")
def _lex_less(c1, b1, e1, c2, b2, e2):
    return c1 < c2 or (c1 == c2 and (b1 < b2 or (b1 == b2 and e1 < e2)))


@njit(cache=True, inline="always")
def beam_row(bm, k):
    """Row k of the beam `bm` as a `Tree` (views, no copy)."""
    return Tree(bm.avail[k], bm.intree[k], bm.alive[k], bm.G[k], bm.Din[k], bm.Csub[k],
                bm.Droot[k], bm.comp[k], bm.head[k])


@njit(cache=True, _nrt=False)
def _copy_row(src, b, dst, k, cost):
    """dst's row k := src's row b, at `cost`."""
    n1 = src.head.shape[1]
    for a in range(src.avail.shape[1]):
        dst.avail[k, a] = src.avail[b, a]
        dst.intree[k, a] = src.intree[b, a]
        dst.G[k, a] = src.G[b, a]
    for i in range(src.alive.shape[1]):
        dst.alive[k, i] = src.alive[b, i]
    for x in range(n1):
        dst.Din[k, x] = src.Din[b, x]
        dst.comp[k, x] = src.comp[b, x]
        dst.head[k, x] = src.head[b, x]
        for y in range(n1):
            dst.Csub[k, x, y] = src.Csub[b, x, y]
    dst.Droot[k, 0] = src.Droot[b, 0]
    dst.cost[k] = cost


@njit(cache=True, _nrt=False)
def beam_step(nb, beam, beta, pt, fb, cur, nxt, sx):
    """One step of the beam over the nb partial trees of `cur` (a `Beam`): the `beam`
    lowest (cost + v(e), row, e) extensions (a row without an available arc offers
    its fallback arc, by fb, at its cost) are written, each a copy of its row plus
    the arc, into the rows of `nxt`; return their count. pt: the `Parts`; sx =
    (V (beam, n1*n1), fbarc (beam,), cb, ce (beam,) int64, cc (beam,)) scratch."""
    V, fbarc, cb, ce, cc = sx
    A = V.shape[1]
    for b in range(nb):
        row = beam_row(cur, b)
        state_values(beta, row, pt.p, V[b])
        fbarc[b] = -1
        anyf = False
        for e in range(A):
            if V[b, e] < np.inf:
                anyf = True
                break
        if not anyf:
            fbarc[b] = fallback_arc(row.head, row.comp, fb)
    cost = cur.cost
    nk = 0
    lc = -np.inf
    lb = -1
    le = -1
    for k in range(beam):
        bc = np.inf
        bb = -1
        be = -1
        for b in range(nb):
            if fbarc[b] >= 0:
                c = cost[b]
                e = fbarc[b]
                if _lex_less(lc, lb, le, c, b, e) and (bb < 0 or _lex_less(c, b, e, bc, bb, be)):
                    bc = c; bb = b; be = e
                continue
            for e in range(A):
                if V[b, e] == np.inf:
                    continue
                c = cost[b] + V[b, e]
                if _lex_less(lc, lb, le, c, b, e) and (bb < 0 or _lex_less(c, b, e, bc, bb, be)):
                    bc = c; bb = b; be = e
        if bb < 0:
            break
        cb[k] = bb; ce[k] = be; cc[k] = bc
        lc = bc; lb = bb; le = be
        nk += 1
    for k in range(nk):
        _copy_row(cur, cb[k], nxt, k, cc[k])
        state_add(ce[k], pt, beam_row(nxt, k))
    return nk


@njit(cache=True, _nrt=False)
def beam_run(steps, nb, beam, beta, pt, fb, b0, b1, sx):
    """`steps` beam steps in one call (no per-step dispatch), alternating between
    the two beams b0 and b1; return nb * 2 + (1 if the last step wrote b1 else 0)."""
    flip = 0
    for _ in range(steps):
        if flip == 0:
            nb = beam_step(nb, beam, beta, pt, fb, b0, b1, sx)
        else:
            nb = beam_step(nb, beam, beta, pt, fb, b1, b0, sx)
        flip = 1 - flip
    return nb * 2 + flip


@njit(cache=True, _nrt=False)
def beam_start(allowed, pt, bm):
    """Row 0 of the beam `bm` := the empty partial tree: the allowed arcs but those
    into the root and self-loops available, the parts through an arc that can never
    be added dead, then `state_init`."""
    n1 = allowed.shape[0]
    avail, intree, alive = bm.avail, bm.intree, bm.alive
    parcs = pt.parcs
    for h in range(n1):
        for m in range(n1):
            avail[0, h * n1 + m] = allowed[h, m] and m != 0 and h != m
            intree[0, h * n1 + m] = False
    for i in range(parcs.shape[0]):
        ok = True
        for j in range(3):
            b = parcs[i, j]
            if b >= 0 and not avail[0, b]:
                ok = False
        alive[0, i] = ok
    bm.cost[0] = 0.0
    state_init(pt, beam_row(bm, 0))


@njit(cache=True)
def beam_buffers(beam, n1, P):
    """A `Beam` of `beam` rows for a sentence of n1 - 1 words and P parts."""
    A = n1 * n1
    return Beam(np.empty((beam, A), np.bool_), np.empty((beam, A), np.bool_),
                np.empty((beam, P), np.bool_), np.empty((beam, A)), np.empty((beam, n1)),
                np.empty((beam, n1, n1)), np.empty((beam, 1)), np.empty((beam, n1), np.int64),
                np.empty((beam, n1), np.int64), np.empty(beam))


@njit(cache=True)
def beam_scratch(beam, n1):
    """`beam_step`'s scratch: V, fbarc, cb, ce, cc."""
    return (np.empty((beam, n1 * n1)), np.empty(beam, np.int64), np.empty(beam, np.int64),
            np.empty(beam, np.int64), np.empty(beam))


@njit(cache=True)
def beam_construct(beam, beta, allowed, pt, fb):
    """Algorithm 2 with a beam in one call: allocate, start, `beam_run`; return the
    heads of the final beam's trees (int64 (nb, n1), best first, heads[:, 0] = -1)."""
    n1 = allowed.shape[0]
    P = pt.w.shape[0]
    b0 = beam_buffers(beam, n1, P)
    b1 = beam_buffers(beam, n1, P)
    beam_start(allowed, pt, b0)
    # np.int64(1), not the literal: beam_step is then compiled once, not also for Literal[int](1)
    r = beam_run(n1 - 1, np.int64(1), beam, beta, pt, fb, b0, b1, beam_scratch(beam, n1))
    nb = r // 2
    out = np.empty((nb, n1), np.int64)
    src = b1.head if r % 2 else b0.head
    for k in range(nb):
        for x in range(n1):
            out[k, x] = src[k, x]
        out[k, 0] = -1
    return out
