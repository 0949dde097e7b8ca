"""Second stage: the UD relation of each arc of a tree.

A multiclass linear model over hashed features of the arc (h, m) and its
neighbourhood in the tree (grandparent; m's children, their count and the words
of the outer ones; h's other children: m's rank among them, the inner sibling,
h's auxiliary and nominal dependents before it), trained as an averaged
perceptron on the gold trees (McDonald et al. 2006 label the arcs of an
unlabeled tree the same way). The root arc always gets `root` and no other arc
does, as UD requires. `LABEL_FEATURE_SET` names the feature version stored in
model files: weights of another version cannot be read with these features.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .encode import A_LEMMA, A_UPOS, A_WORD, A_XPOS, upos_id
from .features import _at, _dist_bin, _mix, fhash

LABEL_FEATURE_SET = "label-v2"  # v2: + outer children's words, siblings, h's auxiliary
MAX_LABEL_FEATURES = 35
AUX_ID = np.uint64(upos_id("AUX"))
NOMINAL_IDS = (np.uint64(upos_id("NOUN")), np.uint64(upos_id("PROPN")), np.uint64(upos_id("PRON")))


@njit(cache=True, _nrt=False)
def _siblings(attrs, heads, h, m):
    """m among h's other children: how many lie between h and m, the nearest of them
    to m (0 if none), the lemma of h's last auxiliary before h (0 if none) and the
    number of h's nominal dependents before h (its subject candidates)."""
    rank = 0
    inner = 0
    haux = np.uint64(0)
    nominal = 0
    for c in range(1, heads.shape[0]):
        if heads[c] != h or c == m:
            continue
        if min(h, m) < c < max(h, m):
            rank += 1
            if inner == 0 or abs(c - m) < abs(inner - m):
                inner = c
        if c < h:
            p = attrs[c, A_UPOS]
            if p == AUX_ID:
                haux = attrs[c, A_LEMMA]
            elif p in NOMINAL_IDS:
                nominal += 1
    return rank, inner, haux, nominal


@njit(cache=True, _nrt=False)
def label_features(attrs, heads, h, m, out):
    """Base feature hashes of arc h -> m given the whole tree (heads)."""
    n1 = heads.shape[0]
    db = _dist_bin(h, m)
    z = np.uint64(0)
    hw = attrs[h, A_WORD]; hp = attrs[h, A_UPOS]; hx = attrs[h, A_XPOS]; hl = attrs[h, A_LEMMA]
    mw = attrs[m, A_WORD]; mp = attrs[m, A_UPOS]; mx = attrs[m, A_XPOS]; ml = attrs[m, A_LEMMA]
    gp = np.uint64(0xB0DA)
    if h > 0:
        gp = attrs[heads[h], A_UPOS]
    nl = 0
    nr = 0
    lm = np.uint64(0)
    rm = np.uint64(0)
    lmi = 0  # m's outermost children
    rmi = 0
    for c in range(1, n1):
        if heads[c] == m:
            if c < m:
                nl += 1
                if lm == 0:
                    lm = attrs[c, A_UPOS] + np.uint64(1)
                    lmi = c
            else:
                nr += 1
                rm = attrs[c, A_UPOS] + np.uint64(1)
                rmi = c
    val = np.uint64(min(nl, 3) * 4 + min(nr, 3))
    k = 0
    out[k] = fhash(601, z, z, z, z, z); k += 1
    out[k] = fhash(602, hw, z, z, z, z); k += 1
    out[k] = fhash(603, hp, z, z, z, z); k += 1
    out[k] = fhash(604, mw, z, z, z, z); k += 1
    out[k] = fhash(605, mp, z, z, z, z); k += 1
    out[k] = fhash(606, hp, mp, z, z, z); k += 1
    out[k] = fhash(607, hw, mp, z, z, z); k += 1
    out[k] = fhash(608, hp, mw, z, z, z); k += 1
    out[k] = fhash(609, hl, ml, z, z, z); k += 1
    out[k] = fhash(610, hp, mp, db, z, z); k += 1
    out[k] = fhash(611, mp, _at(attrs, m - 1, A_UPOS), z, z, z); k += 1
    out[k] = fhash(612, mp, _at(attrs, m + 1, A_UPOS), z, z, z); k += 1
    out[k] = fhash(613, hx, mx, z, z, z); k += 1
    out[k] = fhash(614, gp, hp, mp, z, z); k += 1
    out[k] = fhash(615, mp, val, z, z, z); k += 1
    out[k] = fhash(616, mp, lm, z, z, z); k += 1
    out[k] = fhash(617, mp, rm, z, z, z); k += 1
    out[k] = fhash(618, mw, db, z, z, z); k += 1
    out[k] = fhash(619, hx, mx, db, z, z); k += 1
    out[k] = fhash(620, ml, z, z, z, z); k += 1
    out[k] = fhash(621, mx, z, z, z, z); k += 1
    out[k] = fhash(622, hl, mx, db, z, z); k += 1
    out[k] = fhash(623, mp, lm, rm, hp, z); k += 1
    out[k] = fhash(624, ml, hp, db, z, z); k += 1
    # words of m's outer children: case and mark words decide obl vs nmod, ccomp vs xcomp
    lmw = attrs[lmi, A_WORD] if lmi > 0 else z
    rmw = attrs[rmi, A_WORD] if rmi > 0 else z
    rank, inner, haux, hsubj = _siblings(attrs, heads, h, m)
    inner_p = attrs[inner, A_UPOS] + np.uint64(1) if inner > 0 else z
    r = np.uint64(min(rank, 3) + 1)
    out[k] = fhash(625, mp, lmw, z, z, z); k += 1
    out[k] = fhash(626, hp, mp, lmw, z, z); k += 1
    out[k] = fhash(627, mp, rmw, z, z, z); k += 1
    out[k] = fhash(628, hw, mw, db, z, z); k += 1
    out[k] = fhash(629, hp, mp, inner_p, db, z); k += 1
    out[k] = fhash(630, hp, mp, r, db, z); k += 1
    out[k] = fhash(631, hx, mp, haux, db, z); k += 1
    out[k] = fhash(632, mx, haux, db, z, z); k += 1
    out[k] = fhash(633, hp, mp, np.uint64(min(hsubj, 2) + 1), db, z); k += 1
    out[k] = fhash(634, mw, hp, db, z, z); k += 1
    out[k] = fhash(635, hl, ml, lmw, z, z); k += 1
    return k


@njit(cache=True, _nrt=False)
def _scores(base, k, w, mask, n_labels, out):
    for lab in range(n_labels):
        s = 0.0
        lv = np.uint64(lab + 1)
        for j in range(k):
            s += w[_mix(base[j], lv) & mask]
        out[lab] = s


@njit(cache=True)
def predict_labels(attrs, heads, w, mask, n_labels, root_label):
    """Label id of every word's arc (index 0 unused)."""
    n1 = heads.shape[0]
    labels = np.zeros(n1, dtype=np.int64)
    base = np.empty(MAX_LABEL_FEATURES, dtype=np.uint64)
    sc = np.empty(n_labels)
    _predict_into(attrs, heads, w, mask, n_labels, root_label, labels, base, sc)
    return labels


@njit(cache=True, _nrt=False)
def _predict_into(attrs, heads, w, mask, n_labels, root_label, labels, base, sc):
    n1 = heads.shape[0]
    for m in range(1, n1):
        h = heads[m]
        if h == 0:
            labels[m] = root_label
            continue
        k = label_features(attrs, heads, h, m, base)
        _scores(base, k, w, mask, n_labels, sc)
        sc[root_label] = -np.inf
        best = 0
        for lab in range(n_labels):
            if sc[lab] > sc[best]:
                best = lab
        labels[m] = best


@njit(cache=True)
def label_scores(attrs, heads, w, mask, n_labels):
    """float64 [n1, n_labels]: every relation's score of each word's arc (row 0 and the
    root's row unused), for mixing with another model's relation scores."""
    n1 = heads.shape[0]
    out = np.zeros((n1, n_labels))
    base = np.empty(MAX_LABEL_FEATURES, dtype=np.uint64)
    for m in range(1, n1):
        if heads[m] > 0:
            k = label_features(attrs, heads, heads[m], m, base)
            _scores(base, k, w, mask, n_labels, out[m])
    return out


@njit(cache=True)
def perceptron_sentence(attrs, heads, gold, w, u, step, mask, n_labels, root_label):
    """One averaged-perceptron pass over a sentence's gold arcs; returns #correct."""
    n1 = heads.shape[0]
    base = np.empty(MAX_LABEL_FEATURES, dtype=np.uint64)
    sc = np.empty(n_labels)
    correct = 0
    for m in range(1, n1):
        h = heads[m]
        if h == 0:
            correct += gold[m] == root_label
            continue
        k = label_features(attrs, heads, h, m, base)
        _scores(base, k, w, mask, n_labels, sc)
        sc[root_label] = -np.inf
        p = np.argmax(sc)
        if p == gold[m]:
            correct += 1
            continue
        gv = np.uint64(gold[m] + 1)
        pv = np.uint64(p + 1)
        for j in range(k):
            gi = _mix(base[j], gv) & mask
            pi = _mix(base[j], pv) & mask
            w[gi] += 1.0
            u[gi] += step
            w[pi] -= 1.0
            u[pi] -= step
    return correct
