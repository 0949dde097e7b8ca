"""A job's items as sentences to parse: raw text tokenized (and split, for a document),
tokens and tagged sentences as they are; the size limits checked before and after
tokenizing, so that no text costs more than the limits allow."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .protocol import JobError, LimitError

if TYPE_CHECKING:
    from models.serve.pipeline import Pipeline


def prepare_item(pipe: Pipeline, item: dict, max_tokens: int, max_sents: int) -> list[tuple]:
    """[(forms, tags or None, words of raw text or None)] for one item, limits
    checked."""
    kind = item.get("kind") if isinstance(item, dict) else None
    if kind in ("sentence", "document"):
        # every run of non-space characters is at least one token: refuse what is
        # certainly over the limits before paying for tokenizing it; the tokenizer
        # then stops past the cap, so a text without spaces costs no more
        pieces = len(item["text"].split())
        cap = max_tokens if kind == "sentence" else max_tokens * max_sents
        what = ("max_tokens_per_sentence" if kind == "sentence"
                else "max_sentences x max_tokens_per_sentence")
        if pieces > cap:
            raise LimitError("too_many_tokens", f"the text has at least {pieces} tokens,"
                             f" more than {what}={cap}", limit=what,
                             value=cap, got=pieces)
        sents = pipe.tokenize(item["text"], split=kind == "document", limit=cap)
        n = sum(len(s) for s in sents)
        if n > cap:
            raise LimitError("too_many_tokens", f"the text has at least {n} tokens, more"
                             f" than {what}={cap} (tokenizing stopped there)",
                             limit=what, value=cap, got=n)
        if kind == "sentence":
            sents = [[t for s in sents for t in s]]
        out = []
        for s in sents:
            if not s:
                raise JobError("empty_sentence", "the sentence has no tokens")
            out.append(([t.form for t in s], None, s))
    elif kind == "tokens":
        out = [(list(item["forms"]), None, None)]
    elif kind == "tagged":
        out = [(list(item["forms"]), (item["upos"], item["xpos"], item["lemmas"]), None)]
    else:
        raise JobError("invalid_input", f"unknown item kind {kind!r}")
    for forms, _, _ in out:
        if len(forms) > max_tokens:
            raise LimitError("too_many_tokens",
                             f"a sentence has {len(forms)} tokens, more than"
                             f" max_tokens_per_sentence={max_tokens}",
                             limit="max_tokens_per_sentence", value=max_tokens,
                             got=len(forms))
    return out
