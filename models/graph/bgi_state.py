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
"""
from __future__ import annotations

import numpy as np
from numba import njit


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
def state_init(w, parcs, aptr, apart, p, avail, intree, alive, G, Din, Csub, Droot, comp, head):
    """Fill G and the aggregates of the empty partial tree (avail, intree, alive
    set by the caller: avail = allowed arcs, nothing in the tree, all alive)."""
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
def state_values(beta, avail, G, p, Din, Csub, Droot, comp, v):
    """v[a] = beta * loss - (1 - beta) * gain for available arcs, +inf otherwise."""
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
def _exclude(x, n1, w, parcs, aptr, apart, p, avail, intree, alive, G, Din, Csub, Droot, comp):
    """Arc x leaves the available set: its D leaves the aggregates and the parts
    through it die, taking their contributions from their other available arcs."""
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
def state_add(e, w, parcs, aptr, apart, p, avail, intree, alive, G, Din, Csub, Droot, comp,
              head):
    """Add arc e = h -> m (m headless, root(h) != m) and update the state (Appendix A):
    exclude the other heads of m, the arcs from m's component into root(h) and,
    for h = 0, the other root arcs; re-weight the alive parts through e; merge
    m's component into root(h)'s. Cost: the parts through the touched arcs, O(n)."""
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
            _exclude(a, n1, w, parcs, aptr, apart, p, avail, intree, alive, G, Din, Csub,
                     Droot, comp)
    for y in range(n1):
        if comp[y] == m:
            a = y * n1 + r
            if avail[a]:
                _exclude(a, n1, w, parcs, aptr, apart, p, avail, intree, alive, G, Din, Csub,
                         Droot, comp)
    if h == 0:
        for x in range(1, n1):
            if avail[x]:
                _exclude(x, n1, w, parcs, aptr, apart, p, avail, intree, alive, G, Din, Csub,
                         Droot, comp)
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


@njit(cache=True, _nrt=False)
def beam_step(nb, beam, beta, w, parcs, aptr, apart, p, fb, avail, intree, alive, G, Din, Csub,
              Droot, comp, head, cost, avail2, intree2, alive2, G2, Din2, Csub2, Droot2, comp2,
              head2, cost2, V, fbarc, cb, ce, cc):
    """One step of the beam over nb partial trees (rows of the state arrays):
    the `beam` lowest (cost + v(e), row, e) extensions (a row without an
    available arc offers its fallback arc at its cost) are written, each a copy
    of its row plus the arc, into the rows of the *2 arrays; return their count.
    V (beam, n1*n1), fbarc (beam,), cb/ce (beam,) int64 and cc (beam,) scratch."""
    A = V.shape[1]
    n1 = head.shape[1]
    for b in range(nb):
        state_values(beta, avail[b], G[b], p, Din[b], Csub[b], Droot[b], comp[b], V[b])
        fbarc[b] = -1
        anyf = False
        for e in range(A):
            if V[b, e] < np.inf:
                anyf = True
                break
        if not anyf:
            fbarc[b] = fallback_arc(head[b], comp[b], fb)
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
        b = cb[k]
        for a in range(A):
            avail2[k, a] = avail[b, a]
            intree2[k, a] = intree[b, a]
            G2[k, a] = G[b, a]
        for i in range(alive.shape[1]):
            alive2[k, i] = alive[b, i]
        for x in range(n1):
            Din2[k, x] = Din[b, x]
            comp2[k, x] = comp[b, x]
            head2[k, x] = head[b, x]
            for y in range(n1):
                Csub2[k, x, y] = Csub[b, x, y]
        Droot2[k, 0] = Droot[b, 0]
        cost2[k] = cc[k]
        state_add(ce[k], w, parcs, aptr, apart, p, avail2[k], intree2[k], alive2[k], G2[k],
                  Din2[k], Csub2[k], Droot2[k], comp2[k], head2[k])
    return nk


@njit(cache=True, _nrt=False)
def beam_run(steps, nb, beam, beta, w, parcs, aptr, apart, p, fb, avail, intree, alive, G, Din,
             Csub, Droot, comp, head, cost, avail2, intree2, alive2, G2, Din2, Csub2, Droot2,
             comp2, head2, cost2, V, fbarc, cb, ce, cc):
    """`steps` beam steps in one call (no per-step dispatch), alternating between
    the two sets of state arrays; return nb * 2 + (1 if the last step wrote the
    *2 arrays else 0)."""
    flip = 0
    for _ in range(steps):
        if flip == 0:
            nb = beam_step(nb, beam, beta, w, parcs, aptr, apart, p, fb, avail, intree, alive,
                           G, Din, Csub, Droot, comp, head, cost, avail2, intree2, alive2, G2,
                           Din2, Csub2, Droot2, comp2, head2, cost2, V, fbarc, cb, ce, cc)
        else:
            nb = beam_step(nb, beam, beta, w, parcs, aptr, apart, p, fb, avail2, intree2,
                           alive2, G2, Din2, Csub2, Droot2, comp2, head2, cost2, avail, intree,
                           alive, G, Din, Csub, Droot, comp, head, cost, V, fbarc, cb, ce, cc)
        flip = 1 - flip
    return nb * 2 + flip


@njit(cache=True, _nrt=False)
def beam_start(allowed, w, parcs, aptr, apart, p, avail, intree, alive, G, Din, Csub, Droot, comp,
               head, cost):
    """Row 0 of the beam's state arrays := the empty partial tree: the allowed arcs
    but those into the root and self-loops available, the parts through an arc
    that can never be added dead, then `state_init`."""
    n1 = allowed.shape[0]
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
    cost[0] = 0.0
    state_init(w, parcs, aptr, apart, p, avail[0], intree[0], alive[0], G[0], Din[0], Csub[0],
               Droot[0], comp[0], head[0])


@njit(cache=True)
def beam_buffers(beam, n1, P):
    """One set of the beam's state arrays (rows: partial trees): avail, intree
    (bool (beam, n1*n1)), alive (bool (beam, P)), G (beam, n1*n1), Din (beam, n1),
    Csub (beam, n1, n1), Droot (beam, 1), comp, head (int64 (beam, n1)), cost (beam,)."""
    A = n1 * n1
    return (np.empty((beam, A), np.bool_), np.empty((beam, A), np.bool_),
            np.empty((beam, P), np.bool_), np.empty((beam, A)), np.empty((beam, n1)),
            np.empty((beam, n1, n1)), np.empty((beam, 1)), np.empty((beam, n1), np.int64),
            np.empty((beam, n1), np.int64), np.empty(beam))


@njit(cache=True)
def beam_construct(beam, beta, allowed, w, parcs, aptr, apart, p, fb):
    """Algorithm 2 with a beam in one call: allocate, start, `beam_run`; return the
    heads of the final beam's trees (int64 (nb, n1), best first, heads[:, 0] = -1)."""
    n1 = allowed.shape[0]
    a0, i0, l0, g0, d0, c0, r0, m0, h0, s0 = beam_buffers(beam, n1, w.shape[0])
    a1, i1, l1, g1, d1, c1, r1, m1, h1, s1 = beam_buffers(beam, n1, w.shape[0])
    V = np.empty((beam, n1 * n1))
    fbarc = np.empty(beam, np.int64)
    cb = np.empty(beam, np.int64)
    ce = np.empty(beam, np.int64)
    cc = np.empty(beam)
    beam_start(allowed, w, parcs, aptr, apart, p, a0, i0, l0, g0, d0, c0, r0, m0, h0, s0)
    # np.int64(1), not the literal: beam_step is then compiled once, not also for Literal[int](1)
    r = beam_run(n1 - 1, np.int64(1), beam, beta, w, parcs, aptr, apart, p, fb, a0, i0, l0, g0,
                 d0, c0, r0, m0, h0, s0, a1, i1, l1, g1, d1, c1, r1, m1, h1, s1, V, fbarc, cb, ce,
                 cc)
    nb = r // 2
    out = np.empty((nb, n1), np.int64)
    src = h1 if r % 2 else h0
    for k in range(nb):
        for x in range(n1):
            out[k, x] = src[k, x]
        out[k, 0] = -1
    return out
