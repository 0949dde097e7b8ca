"""Text formats at the HTTP edge: CoNLL-U output and the UDPipe input formats.

Only reading and writing: trees come from workers. CoNLL-U input is read with
`models.conllu` so /process can write back every line it did not change
(comments, multiword tokens, empty nodes) and fill HEAD and DEPREL only.
"""
from __future__ import annotations

import logging
import math
import re
from typing import Any

from models.conllu import Sentence, read_conllu_string
from models.errors import ConlluError
from models.tree_conllu import trees_conllu

from .errors import ServiceError, limit_error
from .service import Item, check_text

logger = logging.getLogger(__name__)


def to_conllu(sentences: list[dict[str, Any]]) -> str:
    """CoNLL-U of the response's sentences (`models.tree_conllu`: multiword tokens,
    SpaceAfter=No, TokenRange, a one-line `# text`)."""
    return trees_conllu(sentences)


# ---- UDPipe /process input ----------------------------------------------------------
# a line break inside a line: \r other than in a \r\n line end, U+2028, U+2029 (the
# other breaks of str.splitlines, \x0b \x0c \x1c-\x1e \x85, are control characters)
_INNER_BREAK = re.compile("\r(?!\n|\\Z)|[\u2028\u2029]")


def read_conllu_items(data: str, keep_tags: bool, s) -> tuple[list[Sentence], list[Item]]:
    """CoNLL-U sentences and their items. The whole of `data` is checked for lone
    surrogates, control characters and line breaks inside a line, not only the forms:
    every column and comment is written back into the answer, where a \r or U+2028 in a
    MISC value would split its line for readers that break on universal newlines."""
    if data.strip():
        check_text(data, "data")
    m = _INNER_BREAK.search(data)
    if m:
        cr = m.group() == "\r"
        line = data.count("\n", 0, m.start()) + 1
        raise ServiceError("control_character" if cr else "line_separator",
                           f"data holds the {'control character' if cr else 'line separator'}"
                           f" U+{ord(m.group()):04X} inside line {line}; CoNLL-U lines end at"
                           " \\n (or \\r\\n) only")
    try:
        sents = read_conllu_string(data, path_name="data")
    except ConlluError as exc:
        raise ServiceError("invalid_conllu", str(exc)) from None
    _check_counts([len(x.words) for x in sents], s)
    items = []
    for i, sent in enumerate(sents):
        forms = [w.form for w in sent.words]
        for j, f in enumerate(forms):
            check_text(f, f"word {j + 1} of sentence {i + 1}", token=True)
        tagged = keep_tags and any(w.upos not in ("_", "") for w in sent.words)
        if tagged:
            items.append(Item("tagged", {"forms": forms, "upos": [w.upos for w in sent.words],
                                         "xpos": [w.xpos for w in sent.words],
                                         "lemmas": [w.lemma for w in sent.words]}, sent.text))
        else:
            items.append(Item("tokens", {"forms": forms}, sent.text))
    return sents, items


def lines(data: str) -> list[str]:
    """The lines of `data` as UDPipe reads them: broken at \\n (a \\r before it dropped)
    only; str.splitlines would also break at U+2028, U+2029, U+0085 and more."""
    return [ln[:-1] if ln.endswith("\r") else ln for ln in data.split("\n")]


def read_horizontal(data: str, s) -> list[Item]:
    """One sentence a line, tokens separated by spaces."""
    sents = [line.split() for line in lines(data) if line.strip()]
    return _token_items(sents, s)


def read_vertical(data: str, s) -> list[Item]:
    """One token a line, an empty line after each sentence."""
    sents, cur = [], []
    for line in lines(data):
        if line.strip():
            cur.append(line.strip())
        elif cur:
            sents.append(cur)
            cur = []
    if cur:
        sents.append(cur)
    return _token_items(sents, s)


def _token_items(sents: list[list[str]], s) -> list[Item]:
    _check_counts([len(x) for x in sents], s)
    for i, toks in enumerate(sents):
        for j, tok in enumerate(toks):
            check_text(tok, f"token {j + 1} of sentence {i + 1}", token=True)
    return [Item("tokens", {"forms": toks}, " ".join(toks)) for toks in sents]


def _check_counts(lengths: list[int], s) -> None:
    if not lengths:
        raise ServiceError("empty_request", "data holds no sentence")
    if len(lengths) > s.max_sentences:
        raise limit_error("too_many_sentences", "max_sentences", s.max_sentences, len(lengths),
                          f"data of {len(lengths)} sentences")
    longest = max(lengths)
    if longest > s.max_tokens_per_sentence:
        raise limit_error("too_many_tokens", "max_tokens_per_sentence",
                          s.max_tokens_per_sentence, longest,
                          f"a sentence of {longest} tokens")


def parse_options(spec: str) -> dict[str, Any]:
    """UDPipe-style options "decoder=greedy;restarts=50" -> {"decoder": "greedy", ...}.

    Values that read as integers or numbers become numbers, `true` and `false` (any
    case) booleans; a bare word is ignored (UDPipe component names such as "parser" are
    sent as empty values too).
    """
    out: dict[str, Any] = {}
    for part in spec.replace(",", ";").split(";"):
        part = part.strip()
        if not part or "=" not in part:
            continue
        k, v = (x.strip() for x in part.split("=", 1))
        out[k] = _BOOLEANS[v.lower()] if v.lower() in _BOOLEANS else _number(v)
    return out


_BOOLEANS = {"true": True, "false": False}


def _number(v: str) -> Any:
    """int, else a finite float, else the string itself: "1e309" or a 5,000-digit number
    stays as written, so the refusal quotes it rather than an `inf` nobody sent."""
    try:
        return int(v)
    except ValueError:
        pass
    try:
        f = float(v)
    except ValueError:
        return v
    return f if math.isfinite(f) else v
