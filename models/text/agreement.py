"""Person and Number of finite verbs from their subject, once the tree is known.

UD EWT gives a finite verb in the past or the plural present (VBD, VBP) the
Person and Number of its subject ("I left" Person=1, "they left" Number=Plur).
The FEATS guesser (`feats`) sees only a word and its left neighbour, so it guesses
them from the verb alone; with the parse, the subject is known: the verb's own
nsubj / nsubj:pass, else (for an aux, aux:pass or cop, and for a conjoined verb)
its head's. A subject without Person is third person. Left alone, as EWT annotates
them by their form: VBZ verbs (third person singular) and the forms of "be"
("I was" is Person=3 there). Only Person and Number values the guesser already
gave are changed; no feature is added or dropped.
"""
from __future__ import annotations

from collections.abc import Sequence

SUBJECTS = ("nsubj", "nsubj:pass")
SHARES_HEAD_SUBJECT = ("aux", "aux:pass", "cop", "conj")
BE_FORMS = frozenset({"am", "are", "was", "were", "'re", "'m", "r"})  # where lemmas are "_"


def _parse(feats: str) -> dict[str, str]:
    return dict(f.split("=", 1) for f in feats.split("|") if "=" in f)


def _format(d: dict[str, str]) -> str:
    return "|".join(f"{k}={d[k]}" for k in sorted(d, key=str.lower)) or "_"


def _is_be(lemma: str, form: str) -> bool:
    if lemma not in ("", "_"):
        return lemma.lower() == "be"
    return form.lower() in BE_FORMS


def agree_with_subjects(feats: Sequence[str], heads: Sequence[int], deprels: Sequence[str],
                        forms: Sequence[str], lemmas: Sequence[str] | None,
                        xpos: Sequence[str]) -> list[str]:
    """FEATS of words 1..n (list index 0 = word 1) with finite verbs agreeing with
    their subjects; heads are 1-based (0 = root); lemmas may be None or "_"."""
    n = len(feats)
    parsed = [_parse(f) for f in feats]
    subject = [-1] * (n + 1)       # subject[h] = first subject child of h (1-based), -1 none
    for i in range(1, n + 1):
        h = heads[i - 1]
        if deprels[i - 1] in SUBJECTS and subject[h] < 0:
            subject[h] = i
    out = list(feats)
    for i in range(1, n + 1):
        d = parsed[i - 1]
        if (d.get("VerbForm") != "Fin" or not ("Person" in d or "Number" in d)
                or xpos[i - 1] == "VBZ"
                or _is_be(lemmas[i - 1] if lemmas else "_", forms[i - 1])):
            continue
        s = subject[i]
        if s < 0 and deprels[i - 1] in SHARES_HEAD_SUBJECT and heads[i - 1] > 0:
            s = subject[heads[i - 1]]
        if s < 0:
            continue
        sf = parsed[s - 1]
        new = dict(d)
        if "Person" in new:
            new["Person"] = sf.get("Person", "3")
        if "Number" in new and "Number" in sf:
            new["Number"] = sf["Number"]
        if new != d:
            out[i - 1] = _format(new)
    return out
