"""Parsed sentences as CoNLL-U that the UD validator accepts (levels 1 and 2).

One writer for every output path (`deptree parse`, POST /parse with output=conllu,
POST /process). It takes a tree as the workers reply it (`worker/protocol.py`): words
with id, form, lemma, upos, xpos, feats, head, deprel and, from raw text, start, end and
space_after; `multiword` tokens (first, last, form, start, end); `stats`. As UDPipe
does, it writes

- a range line "1-2 don't" before the words of each multiword token;
- `SpaceAfter=No` where no whitespace follows a token, and `TokenRange=start:end`
  (offsets into the input text), both on the token's line: the range line of a
  multiword token, the word's own line otherwise;
- `# text` rebuilt from the token forms and their spaces, so it matches them and never
  holds a line break, a tab or a run of spaces (the input's whitespace is one space);
- `HeadConf=0.97` on each word when the decoder returned per-arc confidence.

Values are put in Unicode NFC with whitespace runs as one space (the validator's
level-1 rules); an empty value is written "_".
"""
from __future__ import annotations

import logging
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from .conllu import Sentence, Word, format_sentence

logger = logging.getLogger(__name__)

NO_SPACE = "SpaceAfter=No"


def clean(value: str | None) -> str:
    """A column value as CoNLL-U wants it: NFC, single inner spaces, "_" if empty."""
    v = " ".join(unicodedata.normalize("NFC", value or "").split())
    return v or "_"


def with_misc(misc: str, item: str) -> str:
    """MISC with one more attribute."""
    return item if misc in ("", "_") else f"{misc}|{item}"


def _token_misc(space_after: bool | None, start: int | None, end: int | None) -> str:
    misc = NO_SPACE if space_after is False else "_"
    if start is not None:
        misc = with_misc(misc, f"TokenRange={start}:{end}")
    return misc


def tree_sentence(tree: Mapping[str, Any], sent_id: int | str) -> Sentence:
    """The CoNLL-U sentence of one parsed tree (see the module docstring)."""
    toks = tree["tokens"]
    mwts = {int(m["first"]): m for m in tree.get("multiword") or ()}
    conf = (tree.get("stats") or {}).get("confidence")
    words: list[Word] = []
    lines: list[int | str] = []
    surface: list[tuple[str, bool]] = []   # (form, space after) of each token
    inside = 0                              # last word id of the open multiword token
    for k, t in enumerate(toks):
        wid = int(t["id"])
        m = mwts.get(wid)
        if m is not None:
            last = toks[int(m["last"]) - 1]
            form = clean(m["form"])
            misc = _token_misc(last.get("space_after"), m.get("start"), m.get("end"))
            lines.append(f"{wid}-{int(m['last'])}\t{form}" + "\t_" * 7 + f"\t{misc}")
            surface.append((form, last.get("space_after") is not False))
            inside = int(m["last"])
        form = clean(t["form"])
        misc = "_"
        if wid > inside:
            misc = _token_misc(t.get("space_after"), t.get("start"), t.get("end"))
            surface.append((form, t.get("space_after") is not False))
        if conf:
            misc = with_misc(misc, f"HeadConf={conf[k]:.3f}")
        lines.append(len(words))
        words.append(Word(wid, form, clean(t.get("lemma")), clean(t.get("upos")),
                          clean(t.get("xpos")), clean(t.get("feats")), int(t["head"]),
                          clean(t.get("deprel")), "_", misc))
    text = "".join(f + (" " if space and i + 1 < len(surface) else "")
                   for i, (f, space) in enumerate(surface))
    comments = [f"# sent_id = {sent_id}", f"# text = {text}"]
    return Sentence(words, comments, [*comments, *lines], start_line=0)


def trees_conllu(trees: Iterable[Mapping[str, Any]], first_id: int = 1) -> str:
    """CoNLL-U text of trees, numbered from `first_id`."""
    return "".join(format_sentence(tree_sentence(t, i)) for i, t in enumerate(trees, first_id))
