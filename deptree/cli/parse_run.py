"""`deptree parse`: stream sentences from a text stream through a pipeline.

Input formats: CoNLL-U (HEAD/DEPREL filled, and the model's UPOS, XPOS, LEMMA and
FEATS unless `gold_tags`; everything else kept), `text` (free text, split by the
model's splitter; a blank line ends a paragraph) and `tokens` (one pre-tokenized
sentence per line, tokens separated by spaces). Output is always CoNLL-U, written by
`tree_conllu` for text and tokens.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import asdict
from typing import IO

from models.conllu import Sentence, format_sentence, read_conllu
from models.serve.pipeline import ParsedTree, Pipeline
from models.text.tokenizer import PARAGRAPH_BREAK
from models.tree_conllu import tree_sentence, with_misc

logger = logging.getLogger(__name__)


def _add_confidence(sent: Sentence, tree: ParsedTree) -> None:
    """Per-arc confidence (when asked for) into MISC as HeadConf=0.97."""
    conf = tree.stats.get("confidence")
    if conf:
        for w, c in zip(sent.words, conf):
            w.misc = with_misc(w.misc, f"HeadConf={c:.3f}")


def _record(tree: ParsedTree) -> dict:
    """The tree as a worker replies it, which `tree_conllu` writes."""
    return {"tokens": [asdict(t) for t in tree.tokens],
            "multiword": [asdict(m) for m in tree.multiword], "stats": tree.stats}


def paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(offset, paragraph) of the paragraphs of `text`, which blank lines separate (the
    tokenizer's `PARAGRAPH_BREAK`, where it always ends a sentence too)."""
    pos = 0
    for m in PARAGRAPH_BREAK.finditer(text):
        if text[pos:m.start()].strip():
            yield pos, text[pos:m.start()]
        pos = m.end()
    if text[pos:].strip():
        yield pos, text[pos:]


def parse_stream(source: IO[str], target: IO[str], *, model: str, decoder: str, budget: dict,
                 input_format: str = "conllu", gold_tags: bool = False,
                 tagger: str = "fast") -> dict:
    """Parse everything in `source`, write CoNLL-U to `target`; return totals."""
    pipe = Pipeline.load(model)
    t0 = time.perf_counter()
    n_sent = n_tok = 0
    if input_format == "conllu":
        for sent in read_conllu(source, path_name=getattr(source, "name", "<stdin>")):
            tree = pipe.parse_conllu(sent, decoder, budget, gold_tags=gold_tags, tagger=tagger)
            _add_confidence(sent, tree)
            target.write(format_sentence(sent))
            n_sent += 1
            n_tok += len(sent.words)
    else:
        text = source.read()
        sid = 0
        if input_format == "tokens":
            for line in text.splitlines():
                forms = line.split()
                if not forms:
                    continue
                sid += 1
                tree = pipe.parse_words(forms, decoder, budget, tagger=tagger)
                target.write(format_sentence(tree_sentence(_record(tree), sid)))
                n_tok += len(forms)
        else:
            for base, para in paragraphs(text):
                for tree in pipe.parse_text(para, decoder, budget, tagger=tagger):
                    sid += 1
                    for t in [*tree.tokens, *tree.multiword]:   # offsets into the whole input
                        t.start += base
                        t.end += base
                    target.write(format_sentence(tree_sentence(_record(tree), sid)))
                    n_tok += len(tree.tokens)
        n_sent = sid
    secs = time.perf_counter() - t0
    logger.info("parsed %d sentences, %d tokens in %.2fs (%.0f tokens/s)", n_sent, n_tok, secs,
                n_tok / max(secs, 1e-9))
    return {"sentences": n_sent, "tokens": n_tok, "seconds": secs}
