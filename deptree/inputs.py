"""The three inputs of `parse` (raw text, token lists, CoNLL-U) as one of two kinds."""
from __future__ import annotations

from collections.abc import Sequence

from models.conllu import read_conllu_string


def read_inputs(text: str | None, tokens: Sequence[Sequence[str]] | None,
                conllu: str | None) -> tuple[str, str | list[list[str]]]:
    """("text", the text) or ("tokens", one list of forms a sentence). Exactly one input
    is given. CoNLL-U gives its syntactic words (multiword tokens' parts, no empty
    nodes), which the model then tags and parses as token lists."""
    given = [name for name, v in (("text", text), ("tokens", tokens), ("conllu", conllu))
             if v is not None]
    if len(given) != 1:
        raise TypeError("parse() takes exactly one of text=, tokens= or conllu=, got "
                        + (", ".join(given) or "none"))
    if text is not None:
        if not isinstance(text, str):
            raise TypeError(f"text is a str, not {type(text).__name__}: pass token lists"
                            " as tokens=[[...], ...]")
        return "text", text
    if conllu is not None:
        return "tokens", [[w.form for w in s.words] for s in read_conllu_string(conllu)]
    if isinstance(tokens, str) or any(isinstance(s, str) for s in tokens):
        raise TypeError("tokens is a list of sentences, each a list of token strings:"
                        " tokens=[['The', 'cat', 'sat', '.']]")
    return "tokens", [list(s) for s in tokens]
