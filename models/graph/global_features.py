"""Global features of a whole tree (Zhang, Lei, Barzilay, Jaakkola & Globerson, ACL
2014, "Steps to Excellence", Section 4; used by Zhang et al., EMNLP 2014, Section 5).

They score properties no bounded part sees, which is why the search must score any
full tree. Each is written as a term of one word x (x's subtree, its children and its
head) or of the whole tree (right branch), hashed into the model's weight vector like
the part templates:

  span length     x's tag with its subtree's binned size, and with its head's tag;
                  x's tag with the binned reach of the subtree left and right of x
  neighbours      x's tag and binned size with the tags just left and right of the
                  subtree's extent
  valency         x's tag with its binned number of non-punctuation children, and
                  with the string of its children's tags
  non-projective  x's subtree is not contiguous (a word between its ends hangs
                  elsewhere: the tree is projective iff no subtree has such a gap),
                  alone and with the tags of x and its head
  coordination    x has a CCONJ child (UD hangs `cc` on the later conjunct, itself
                  under the first): the tags of x and of its head, alone and with
                  x's binned size, and whether the two tags agree
  PP attachment   each ADP child c of x (UD's `case`): the words of x's head and of
                  c with x's tag, and the head's tag with the words of c and x
  right branch    the number of words on the path from the root to the last
                  non-punctuation word, binned, with the binned sentence length

A move of one word m from head a to head b changes only the terms of m, of a, b and
their ancestors (their subtrees, children or heads change) and the right branch:
`move_delta` rescores those (greedy's hill-climbing and sampling's Gibbs options);
`scores_into` scores a tree from scratch and keeps each term (for a move that changes
two or more arcs: a re-rooting, a random walk); `global_score` is its sum alone;
`global_feature_ids` gives the training update its features. `mst` cannot score them
(they break its arc factorisation) and `bgi` builds its trees from parts without them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .encode import A_UPOS, A_WORD, UPOS_TAGS
from .features import OUTSIDE, fhash

GLOBAL_FEATURE_SET = "global-v1"
MAX_WORD_TERMS = 16      # most feature hashes of one word's term (2 ADP children kept)

_PUNCT = np.uint64(UPOS_TAGS.index("PUNCT"))
_CCONJ = np.uint64(UPOS_TAGS.index("CCONJ"))
_ADP = np.uint64(UPOS_TAGS.index("ADP"))


@njit(cache=True)
def global_scratch(n1, on):
    """The `gl` tuple of the search kernels (`decode_greedy.hill_climb`, the chain kernels
    of `sampling_moves`): (flag, lo, hi, size, G, mark, buf) for trees of n1 - 1 words;
    flag[0] = 1 scores the global features, G holds the current tree's terms."""
    flag = np.zeros(1, np.int64)
    flag[0] = 1 if on else 0
    return (flag, np.empty(n1, np.int64), np.empty(n1, np.int64), np.empty(n1, np.int64),
            np.zeros(n1), np.zeros(n1, np.bool_), np.empty(MAX_WORD_TERMS, np.uint64))


@njit(cache=True, inline="always")
def size_bin(s):
    """Binned subtree size: 1-4 as is, then 5-6, 7-9, 10-14, 15-24, 25 and more."""
    if s <= 4:
        return s
    if s <= 6:
        return 5
    if s <= 9:
        return 6
    if s <= 14:
        return 7
    if s <= 24:
        return 8
    return 9


@njit(cache=True, inline="always")
def _small_bin(d):
    if d <= 3:
        return d
    if d <= 5:
        return 4
    if d <= 9:
        return 5
    return 6


@njit(cache=True, _nrt=False)
def subtree_stats(heads, lo, hi, size):
    """lo[x], hi[x], size[x]: the leftmost and rightmost word of x's subtree and its
    number of words, for every x (root 0 included), from each word up its head chain
    (O(n * depth)). Returns False on a cycle."""
    n1 = heads.shape[0]
    for i in range(n1):
        lo[i] = i
        hi[i] = i
        size[i] = 1
    for i in range(1, n1):
        x = heads[i]
        steps = 0
        while x >= 0:
            if i < lo[x]:
                lo[x] = i
            if i > hi[x]:
                hi[x] = i
            size[x] += 1
            if x == 0:
                break
            x = heads[x]
            steps += 1
            if steps > n1:
                return False
    return True


@njit(cache=True, _nrt=False)
def word_terms(x, heads, lo, hi, size, attrs, out):
    """Write the feature hashes of word x's term (x >= 1) into out; return how many."""
    n1 = heads.shape[0]
    z = np.uint64(0)
    p = heads[x]
    P = attrs[x, A_UPOS]
    HP = attrs[p, A_UPOS]
    sb = np.uint64(size_bin(size[x]))
    k = 0
    out[k] = fhash(300, P, sb, z, z, z); k += 1
    out[k] = fhash(301, P, HP, sb, z, z); k += 1
    out[k] = fhash(302, P, np.uint64(_small_bin(x - lo[x])), np.uint64(_small_bin(hi[x] - x)),
                   z, z); k += 1
    left = attrs[lo[x] - 1, A_UPOS] if lo[x] - 1 >= 0 else OUTSIDE
    right = attrs[hi[x] + 1, A_UPOS] if hi[x] + 1 < n1 else OUTSIDE
    out[k] = fhash(303, P, sb, left, right, z); k += 1
    nc = 0
    tags = np.uint64(0x5A17)
    cc = False
    adp = 0
    for c in range(1, n1):
        if heads[c] != x:
            continue
        t = attrs[c, A_UPOS]
        tags = fhash(399, tags, t, z, z, z)
        if t != _PUNCT:
            nc += 1
        if t == _CCONJ:
            cc = True
        if t == _ADP and adp < 2:
            adp += 1
            out[k] = fhash(310, attrs[p, A_WORD], attrs[c, A_WORD], P, z, z); k += 1
            out[k] = fhash(311, HP, attrs[c, A_WORD], attrs[x, A_WORD], z, z); k += 1
    out[k] = fhash(304, P, np.uint64(_small_bin(nc)), z, z, z); k += 1
    out[k] = fhash(305, P, tags, z, z, z); k += 1
    if size[x] != hi[x] - lo[x] + 1:
        out[k] = fhash(306, z, z, z, z, z); k += 1
        out[k] = fhash(307, P, HP, z, z, z); k += 1
    if cc:
        out[k] = fhash(308, P, HP, z, z, z); k += 1
        out[k] = fhash(309, P, HP, sb, z, z); k += 1
        out[k] = fhash(312, np.uint64(P == HP), z, z, z, z); k += 1
    return k


@njit(cache=True, _nrt=False)
def right_branch_terms(heads, attrs, out):
    """Feature hashes of the right branch (module docstring) into out; return how many."""
    n1 = heads.shape[0]
    last = n1 - 1
    while last > 1 and attrs[last, A_UPOS] == _PUNCT:
        last -= 1
    path = 0
    x = last
    while x > 0 and path <= n1:
        path += 1
        x = heads[x]
    z = np.uint64(0)
    out[0] = fhash(320, np.uint64(size_bin(path)), np.uint64(size_bin(n1 - 1)), z, z, z)
    out[1] = fhash(321, np.uint64((10 * path) // (n1 - 1)), z, z, z, z)
    return 2


@njit(cache=True, _nrt=False)
def _sum(w, mask, buf, k):
    s = 0.0
    for j in range(k):
        s += w[buf[j] & mask]
    return s


@njit(cache=True, _nrt=False)
def word_score(x, heads, lo, hi, size, attrs, w, mask, buf):
    return _sum(w, mask, buf, word_terms(x, heads, lo, hi, size, attrs, buf))


@njit(cache=True, _nrt=False)
def right_branch_score(heads, attrs, w, mask, buf):
    return _sum(w, mask, buf, right_branch_terms(heads, attrs, buf))


@njit(cache=True, _nrt=False)
def scores_into(heads, attrs, w, mask, lo, hi, size, G, buf):
    """G[x] = word x's term for every word (G[0] = the right branch); return the sum."""
    subtree_stats(heads, lo, hi, size)
    G[0] = right_branch_score(heads, attrs, w, mask, buf)
    total = G[0]
    for x in range(1, heads.shape[0]):
        G[x] = word_score(x, heads, lo, hi, size, attrs, w, mask, buf)
        total += G[x]
    return total


@njit(cache=True, _nrt=False)
def move_delta(heads, m, b, attrs, w, mask, lo, hi, size, G, mark, buf):
    """Change of the global score when word m (now under heads[m]) moves under b, its
    terms G being those of the current tree (`scores_into`). heads is as before on
    return, lo, hi and size are those of the moved tree; mark is scratch of n+1 bools,
    all False, left so."""
    a = heads[m]
    starts = (np.int64(a), np.int64(b), np.int64(m))
    delta = 0.0
    heads[m] = b
    subtree_stats(heads, lo, hi, size)
    for start in starts:           # m, a, b and their ancestors: the terms that change
        x = start
        while x > 0 and not mark[x]:
            mark[x] = True
            delta += word_score(x, heads, lo, hi, size, attrs, w, mask, buf) - G[x]
            x = heads[x]
    delta += right_branch_score(heads, attrs, w, mask, buf) - G[0]
    for start in starts:
        x = start
        while x > 0 and mark[x]:
            mark[x] = False
            x = heads[x]
    heads[m] = a
    return delta


@njit(cache=True)
def global_score(heads, attrs, w, mask):
    """The global score of the tree heads (heads[0] = -1), from scratch."""
    n1 = heads.shape[0]
    lo = np.empty(n1, np.int64)
    hi = np.empty(n1, np.int64)
    size = np.empty(n1, np.int64)
    G = np.empty(n1)
    buf = np.empty(MAX_WORD_TERMS, np.uint64)
    return scores_into(heads, attrs, w, np.uint64(mask), lo, hi, size, G, buf)


@njit(cache=True)
def global_feature_ids(heads, attrs, mask):
    """Masked feature indices of every global term of the tree (with repeats)."""
    n1 = heads.shape[0]
    lo = np.empty(n1, np.int64)
    hi = np.empty(n1, np.int64)
    size = np.empty(n1, np.int64)
    subtree_stats(heads, lo, hi, size)
    buf = np.empty(MAX_WORD_TERMS, np.uint64)
    out = np.empty(n1 * MAX_WORD_TERMS + 2, np.int64)
    k = right_branch_terms(heads, attrs, buf)
    for j in range(k):
        out[j] = np.int64(buf[j] & np.uint64(mask))
    for x in range(1, n1):
        nk = word_terms(x, heads, lo, hi, size, attrs, buf)
        for j in range(nk):
            out[k] = np.int64(buf[j] & np.uint64(mask))
            k += 1
    return out[:k]
