"""Train the text front-end (tokenizer + splitter, tagger, lemmatizer) on a treebank.

`train_frontend(train_path, dev_path, out_dir)` writes out_dir/tokenizer/,
out_dir/tagger/, out_dir/lemmatizer/, out_dir/feats/ and out_dir/metrics.json,
and returns the metrics (dev figures under "dev_metrics"). The CLI calls these
functions; nothing here parses flags.
"""
from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Sequence

from models.progress import progress_bar
from models.text._conllu import Sentence, documents, read_conllu
from models.text.feats import FeatsGuesser
from models.text.joiner import SpaceJoiner
from models.text.lemmatizer import Lemmatizer
from models.text.lexicon import learn_lexicon
from models.text.multiword_choice import MultiwordChooser
from models.text.scoring import accuracy, span_f1
from models.text.segmenter import WordSegmenter
from models.text.splitter import SentenceSplitter, render_document
from models.text.tagger import Tagger, wants_upos
from models.text.tokenizer import Tokenizer
from models.text.wordclasses import WordClasses

logger = logging.getLogger(__name__)

# The tokenizer's share of the front-end's progress bar, in steps of about a tagger
# epoch: en_ewt's took 17 s (lexicon to joiner 2, running text tokenized 6, splitter 9)
# where a tagger epoch took 2-3 s, and a 50,000-sentence treebank's 85 s against 3 s.
TOKENIZER_STEPS = 6


class _Parts:
    """The parts of a front-end already saved, recorded in a checkpoint directory (or
    nowhere: then every part is trained)."""

    def __init__(self, directory: str | None):
        self.directory = directory
        if directory:
            os.makedirs(directory, exist_ok=True)

    def has(self, name: str) -> bool:
        found = bool(self.directory) and os.path.exists(os.path.join(self.directory, name))
        if found:
            logger.info("front-end: %s done before, loaded", name)
        return found

    def add(self, name: str) -> None:
        if self.directory:
            with open(os.path.join(self.directory, name), "w", encoding="utf-8") as f:
                f.write("saved\n")


def tag_tuples(sentences: Sequence[Sentence]) -> list[list[tuple[str, str, str, str, str]]]:
    """(form, upos, xpos, lemma, feats) per word: the input of Tagger/Lemmatizer.train."""
    return [[(w.form, w.upos, w.xpos, w.lemma, w.feats) for w in s.words] for s in sentences]


def running_texts(sentences: Sequence[Sentence], par_sep: str = "\n\n"
                  ) -> list[tuple[str, list[tuple[int, int]]]]:
    """Each document as running text with its gold sentence spans."""
    out = []
    for doc in documents(list(sentences)):
        out.append(render_document([[s.text or "" for s in p] for p in doc], par_sep))
    return out


def train_tokenizer(sentences: Sequence[Sentence], epochs: int = 10, seed: int = 0,
                    par_seps: Sequence[str] = ("\n\n", " "),
                    progress: Callable[[int], object] | None = None) -> Tokenizer:
    """Lexicon (with the punctuation kept in words), segmenter and joiner where the
    treebank needs them, and sentence splitter; the splitter learns from every document
    rendered once per paragraph separator in `par_seps`. progress(k) is told of k of
    its TOKENIZER_STEPS as they end (1 to the joiner, 2 the running text, 3 the splitter)."""
    def step(k: int) -> None:
        if progress is not None:
            progress(k)

    lexicon = learn_lexicon(list(sentences))
    aligned = [(s.text, spans) for s in sentences if (spans := s.token_spans()) is not None]
    segmenter = WordSegmenter.train([(text, {a for a, _ in spans}) for text, spans in aligned],
                                    epochs=epochs, seed=seed)
    tokenizer = Tokenizer(lexicon, segmenter=segmenter,
                          chooser=MultiwordChooser.train(sentences, lexicon.multiword,
                                                         epochs=epochs, seed=seed))
    tokenizer.learn_punctuation(list(sentences))
    tokenizer.joiner = SpaceJoiner.train(
        [(text, list(tokenizer.pieces(text)), spans) for text, spans in aligned],
        epochs=epochs, seed=seed)
    step(1)
    docs = []
    for sep in par_seps:
        for text, spans in running_texts(sentences, sep):
            docs.append((text, tokenizer.tokenize_sentence(text), {e for _, e in spans}))
    step(2)
    splitter = SentenceSplitter(abbreviations=lexicon.abbreviations)
    splitter.train(docs, epochs=epochs, seed=seed)
    tokenizer.splitter = splitter
    step(TOKENIZER_STEPS - 3)
    return tokenizer


def evaluate_tokenizer(tokenizer: Tokenizer, sentences: Sequence[Sentence],
                       par_sep: str = "\n\n") -> dict[str, float]:
    """Token F1 per `# text` sentence and sentence F1 on running text.

    (Token F1 on running text is about the same: tokens never cross a line break, and a
    joiner's tokens with spaces inside, `joiner.py`, hardly ever a sentence's end.)
    """
    gold, pred, off = [], [], 0
    for s in sentences:
        spans = s.word_spans()
        if spans is None:
            continue
        gold += [(a + off, b + off) for a, b in spans]
        pred += [(t.start + off, t.end + off) for t in tokenizer.tokenize_sentence(s.text)]
        off += len(s.text) + 1
    g_sent, p_sent, off = [], [], 0
    for text, spans in running_texts(sentences, par_sep):
        g_sent += [(a + off, b + off) for a, b in spans]
        p_sent += [(s[0].start + off, s[-1].end + off) for s in tokenizer.tokenize(text)]
        off += len(text) + 1
    return {"token_f1": span_f1(gold, pred)["f1"], "sentence_f1": span_f1(g_sent, p_sent)["f1"]}


def evaluate_tagger(tagger: Tagger, lemmatizer: Lemmatizer | None,
                    sentences: Sequence[Sentence], feats: FeatsGuesser | None = None
                    ) -> dict[str, float]:
    """UPOS/XPOS accuracy with gold tokens; lemma and FEATS accuracy on predicted tags."""
    forms = [[w.form for w in s.words] for s in sentences]
    tags = [tagger.tag(f) for f in forms]
    out = {"upos": accuracy([[w.upos for w in s.words] for s in sentences], [t[0] for t in tags]),
           "xpos": accuracy([[w.xpos for w in s.words] for s in sentences], [t[1] for t in tags])}
    if lemmatizer is not None:
        lemmas = [lemmatizer.lemmatize(f, u, x) for f, (u, x) in zip(forms, tags)]
        out["lemma"] = accuracy([[w.lemma for w in s.words] for s in sentences], lemmas)
    if feats is not None:
        pred = [feats.predict(f, u, x) for f, (u, x) in zip(forms, tags)]
        out["feats"] = accuracy([[w.feats for w in s.words] for s in sentences], pred)
    return out


def train_frontend(train_path: str, dev_path: str | None, out_dir: str, *, epochs: int = 12,
                   seed: int = 0, stack_folds: int = 0, bidirectional: bool = True,
                   word_classes: WordClasses | None | str = "spacy-lookups-data",
                   checkpoints: str | None = None) -> dict:
    """Train all three models on train_path, write them under out_dir, return metrics.

    word_classes: cluster and WordNet features of the tagger; the default reads them
    from the installed spacy-lookups-data (`pip install -e '.[train]'`), None trains
    without them (0.5 UPOS less on en_ewt dev). checkpoints: a directory that records
    each part saved, so that a rerun loads the parts an interrupted run finished."""
    if isinstance(word_classes, str):
        if word_classes != "spacy-lookups-data":
            raise ValueError(f"word_classes={word_classes!r}: give 'spacy-lookups-data', "
                             "a WordClasses or None")
        word_classes = WordClasses.from_spacy_lookups()
    train = read_conllu(train_path)
    dev = read_conllu(dev_path) if dev_path else []
    logger.info("training front-end on %d sentences (%s)", len(train), train_path)
    metrics: dict = {"train": train_path, "dev": dev_path, "epochs": epochs, "seed": seed,
                     "stack_folds": stack_folds, "bidirectional": bidirectional,
                     "word_classes": None if word_classes is None else word_classes.source}
    tuples = tag_tuples(train)
    tagger_steps = epochs * (2 if bidirectional else 1) * (2 if wants_upos(tuples) else 1)
    steps = TOKENIZER_STEPS + tagger_steps + 2 + bool(dev)
    bar = progress_bar(steps, "front-end", "step")
    done = _Parts(checkpoints)

    def part(name: str, train_fn, load_fn, units: int = 1, reports: bool = False):
        """The part `name`: loaded if an earlier run saved it, else trained and saved;
        `units` steps of the bar (which the training itself moves if it `reports`)."""
        path = os.path.join(out_dir, name)
        if done.has(name):
            bar.update(units)
            return load_fn(path)
        model = train_fn()
        model.save(path)
        done.add(name)
        if not reports:
            bar.update(units)
        return model

    t0 = time.perf_counter()
    tokenizer = part("tokenizer", lambda: train_tokenizer(train, seed=seed, progress=bar.update),
                     Tokenizer.load, TOKENIZER_STEPS, reports=True)
    t1 = time.perf_counter()
    part("tagger", lambda: Tagger.train(tuples, epochs=epochs, seed=seed,
                                        stack_folds=stack_folds, bidirectional=bidirectional,
                                        word_classes=word_classes, progress=lambda: bar.update(1)),
         Tagger.load, tagger_steps, reports=True)
    tagger = Tagger.load(os.path.join(out_dir, "tagger"))  # dev figures of the pruned model
    t2 = time.perf_counter()
    lemmatizer = part("lemmatizer", lambda: Lemmatizer.train(tuples),
                      lambda p: Lemmatizer.load(p, word_classes))
    lemmatizer.dictionary = word_classes  # as `Pipeline.load` wires it
    feats = part("feats", lambda: FeatsGuesser.train(tuples), FeatsGuesser.load)
    metrics["seconds"] = {"tokenizer": round(t1 - t0, 1), "tagger": round(t2 - t1, 1),
                          "lemmatizer+feats": round(time.perf_counter() - t2, 1)}
    if dev:
        metrics["dev_metrics"] = {**evaluate_tokenizer(tokenizer, dev),
                                  **evaluate_tagger(tagger, lemmatizer, dev, feats)}
        bar.update(1)
        logger.info("dev: %s", metrics["dev_metrics"])
    bar.close()
    with open(os.path.join(out_dir, "metrics.json"), "w", encoding="utf-8") as f:
        json.dump(metrics, f, indent=1)
    return metrics
