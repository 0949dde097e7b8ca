"""`deptree parse`: stream sentences from a text stream through a pipeline.

Input formats: CoNLL-U (HEAD/DEPREL filled, everything else kept), `text`
(free text, split by the model's splitter; a blank line ends a paragraph) and
`tokens` (one pre-tokenized sentence per line, tokens separated by spaces).
Output is always CoNLL-U.
"""
from __future__ import annotations

import logging
import time
from typing import IO

from .conllu import Sentence, Word, format_sentence, read_conllu
from .pipeline import ParsedTree, Pipeline

logger = logging.getLogger(__name__)


def _with_misc(misc: str, item: str) -> str:
    return item if misc in ("", "_") else f"{misc}|{item}"


def _add_confidence(sent: Sentence, tree: ParsedTree) -> None:
    """Per-arc confidence (when asked for) into MISC as HeadConf=0.97."""
    conf = tree.stats.get("confidence")
    if conf:
        for w, c in zip(sent.words, conf):
            w.misc = _with_misc(w.misc, f"HeadConf={c:.3f}")


def _tree_to_sentence(tree: ParsedTree, text: str | None, sent_id: int) -> Sentence:
    words = []
    for t in tree.tokens:
        misc = "_"
        if t.start is not None:
            misc = f"TokenRange={t.start}:{t.end}"
        words.append(Word(t.id, t.form, t.lemma, t.upos, t.xpos, t.feats, t.head, t.deprel, "_",
                          misc))
    comments = [f"# sent_id = {sent_id}"]
    if text is not None:
        comments.append(f"# text = {text}")
    sent = Sentence.from_words(words, comments)
    _add_confidence(sent, tree)
    return sent


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
                target.write(format_sentence(_tree_to_sentence(tree, " ".join(forms), sid)))
                n_tok += len(forms)
        else:
            for para in [p for p in text.split("\n\n") if p.strip()]:
                base = text.index(para)
                for tree in pipe.parse_text(para, decoder, budget, tagger=tagger):
                    sid += 1
                    a, b = tree.tokens[0].start, tree.tokens[-1].end
                    for t in tree.tokens:
                        t.start += base
                        t.end += base
                    target.write(format_sentence(_tree_to_sentence(tree, para[a:b], sid)))
                    n_tok += len(tree.tokens)
        n_sent = sid
    secs = time.perf_counter() - t0
    logger.info("parsed %d sentences, %d tokens in %.2fs (%.0f tokens/s)", n_sent, n_tok, secs,
                n_tok / max(secs, 1e-9))
    return {"sentences": n_sent, "tokens": n_tok, "seconds": secs}
