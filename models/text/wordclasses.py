"""Word classes from outside the treebank: Brown clusters and WordNet parts of speech.

One dev word in twelve never occurs in en_ewt train, and the tagger gets ~81% of
those right from spelling alone. Two resources learned elsewhere say more about
such words, and both ship in spaCy's `spacy-lookups-data` package (PyPI, MIT; the
WordNet tables under the WordNet 3.0 licence), read once at training time and
saved beside the tagger, so nothing is fetched at run time:

- `clusters`: Brown et al. (1992) hierarchical clusters of ~190k word forms from
  a large unlabelled web corpus, 1000 leaves; features are path prefixes of
  4, 6 and 10 bits and the full path (Koo, Carreras & Collins 2008, Section 3).
  spaCy stores each path as an int with its bits reversed, so a k-bit prefix is
  `path & (2**k - 1)`.
- `wordnet`: which of noun, verb, adjective and adverb WordNet lists the word
  under, directly, as an irregular form, or through an inflection rule
  ("hassled" -> verb by "-ed"), as a string such as "n0|ved".
"""
from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

FORMAT_VERSION = 2
FILE = "wordclasses.npz"
PACKAGE = "spacy-lookups-data"
FEATURES = ("c4", "c6", "c10", "cluster", "wordnet")
_POS = ("noun", "verb", "adj", "adv")


def word_key(word: str) -> int:
    """crc32 of the word: words are kept as sorted 32-bit keys, not strings (2 MB
    instead of 44 MB of Python objects per process). Two words in the tables share a
    key about once in 2**32 / 190k draws, an unknown word hits one with probability
    ~4e-5; either only lends a word another word's class."""
    return zlib.crc32(word.encode("utf-8", "surrogatepass"))


def sorted_unique(keys: np.ndarray) -> np.ndarray:
    """np.unique of 32-bit keys by a sort: numpy 2.4's np.unique hashes them first and
    took 0.30 s on the 287k keys of en_ewt's tables (this, 2.3 ms), 0.6 s of a load."""
    a = np.sort(np.asarray(keys, np.uint32))
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if len(a) else a


def _keys(words: Iterable[str]) -> np.ndarray:
    return sorted_unique(np.fromiter((word_key(w) for w in words), np.uint32))


class WordClasses:
    """Cluster paths and WordNet lemma lists keyed by `word_key`; see `build`."""

    def __init__(self, cluster_keys: np.ndarray, cluster_paths: np.ndarray,
                 lemmas: Mapping[str, np.ndarray], irregular: Mapping[str, np.ndarray],
                 rules: Mapping[str, list[tuple[str, str]]], source: str = ""):
        order = np.argsort(cluster_keys, kind="stable")
        self.cluster_keys = np.asarray(cluster_keys, np.uint32)[order]
        self.cluster_paths = np.asarray(cluster_paths, np.int32)[order]
        self.lemmas = {p: sorted_unique(lemmas.get(p, ())) for p in _POS}
        self.irregular = {p: sorted_unique(irregular.get(p, ())) for p in _POS}
        self.rules = {p: [(a, b) for a, b in rules.get(p, ())] for p in _POS}
        self.source = source
        # one sorted index over all tables, so that one searchsorted answers all the
        # lookups of a word (a call per table made a new word type cost ~170 us)
        self._keys = sorted_unique(np.concatenate([self.cluster_keys, *self.lemmas.values(),
                                                   *self.irregular.values()]))
        self._paths = np.zeros(len(self._keys), np.int32)
        self._paths[np.searchsorted(self._keys, self.cluster_keys)] = self.cluster_paths
        self._flags = np.zeros(len(self._keys), np.uint8)  # bit i: lemma, 4 + i: irregular
        for i, pos in enumerate(_POS):
            self._flags[np.searchsorted(self._keys, self.lemmas[pos])] |= 1 << i
            self._flags[np.searchsorted(self._keys, self.irregular[pos])] |= 16 << i

    @classmethod
    def build(cls, clusters: Mapping[str, int], lemmas: Mapping[str, Iterable[str]],
              irregular: Mapping[str, Iterable[str]],
              rules: Mapping[str, Iterable[tuple[str, str]]], source: str = "") -> WordClasses:
        """From word -> Brown path (spaCy's bit-reversed ints; 0 = unclustered), and per
        part of speech the WordNet lemmas, irregular forms and (suffix, replacement) rules."""
        kept = {word_key(w): int(c) for w, c in sorted(clusters.items()) if c}
        keys = np.fromiter(kept.keys(), np.uint32, len(kept))
        paths = np.fromiter(kept.values(), np.int32, len(kept))
        return cls(keys, paths, {p: _keys(v) for p, v in lemmas.items()},
                   {p: _keys(v) for p, v in irregular.items()},
                   {p: list(v) for p, v in rules.items()}, source)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WordClasses):
            return NotImplemented
        return (np.array_equal(self.cluster_keys, other.cluster_keys)
                and np.array_equal(self.cluster_paths, other.cluster_paths)
                and all(np.array_equal(self.lemmas[p], other.lemmas[p])
                        and np.array_equal(self.irregular[p], other.irregular[p]) for p in _POS)
                and self.rules == other.rules and self.source == other.source)

    def __len__(self) -> int:
        """Number of clustered word forms."""
        return len(self.cluster_keys)

    def _find(self, words: list[str]) -> np.ndarray:
        """Position of each word in the merged index, -1 where it is in no table."""
        keys = np.fromiter((word_key(w) for w in words), np.uint32, len(words))
        if not len(self._keys):
            return np.full(len(words), -1)
        i = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        return np.where(self._keys[i] == keys, i, -1)

    def _classes(self, form: str) -> tuple[int, str]:
        """(Brown path of the form, else of its lowercase, 0 if neither is clustered;
        WordNet classes of the lowercase form, "none" if it has none), one lookup."""
        low = form.lower()
        wn = low.rsplit("-", 1)[1] if "-" in low.strip("-") else low  # hyphenated: last part
        cands = [(i, old, wn[:-len(old)] + new) for i, pos in enumerate(_POS)
                 for old, new in self.rules[pos] if old and wn.endswith(old)]
        at = self._find([form, low, wn] + [c[2] for c in cands])
        path = 0
        for j in at[:2]:
            if j >= 0 and self._paths[j]:
                path = int(self._paths[j])
                break
        tags = set()
        flags = int(self._flags[at[2]]) if at[2] >= 0 else 0
        for i, pos in enumerate(_POS):
            if flags & (1 << i):
                tags.add(pos[0] + "0")
            if flags & (16 << i):
                tags.add(pos[0] + "x")
        for (i, old, _), j in zip(cands, at[3:]):
            if j >= 0 and self._flags[j] & (1 << i):
                tags.add(_POS[i][0] + old)
        return path, "|".join(sorted(tags)) or "none"

    def cluster(self, form: str) -> int:
        """Brown path of the form, else of its lowercase; 0 if neither is clustered."""
        return int(self.clusters([form])[0])

    def clusters(self, forms: Sequence[str]) -> np.ndarray:
        """int64 Brown path of each form (else of its lowercase, else 0): one lookup
        for a whole sentence, the same paths as `strings` uses."""
        n = len(forms)
        if not n or not len(self._keys):
            return np.zeros(n, np.int64)
        at = self._find(list(forms) + [f.lower() for f in forms])
        paths = np.where(at >= 0, self._paths[np.maximum(at, 0)], 0).astype(np.int64)
        return np.where(paths[:n] != 0, paths[:n], paths[n:])

    def is_lemma(self, low: str, pos: str) -> bool:
        """Whether WordNet lists the lowercased word as a lemma of pos ("noun", "verb",
        "adj", "adv")."""
        j = self._find([low])[0]
        return bool(j >= 0 and self._flags[j] & (1 << _POS.index(pos)))

    def wordnet(self, low: str) -> str:
        """WordNet parts of speech of a lowercased form ("none" if it has none): listed
        as a lemma ("n0"), as an irregular form ("vx"), or reached by an inflection rule
        ("ved"); a hyphenated form is looked up by its last part."""
        return self._classes(low)[1]

    def strings(self, form: str) -> list[str]:
        """The values of `FEATURES` for one form."""
        c, wordnet = self._classes(form)
        if c:
            return [str(c & 15), str(c & 63), str(c & 1023), str(c), wordnet]
        return ["none"] * 4 + [wordnet]

    # -- persistence -------------------------------------------------------------
    def save(self, directory: str) -> None:
        """One npz: sorted keys delta-coded (they compress), paths, rules as JSON text."""
        os.makedirs(directory, exist_ok=True)
        arrays = {"cluster_delta": np.diff(self.cluster_keys, prepend=np.uint32(0)),
                  "cluster_paths": self.cluster_paths}
        for p in _POS:
            arrays[f"lemmas_{p}"] = np.diff(self.lemmas[p], prepend=np.uint32(0))
            arrays[f"irregular_{p}"] = np.diff(self.irregular[p], prepend=np.uint32(0))
        meta = {"format_version": FORMAT_VERSION, "source": self.source, "key": "crc32",
                "rules": {p: [list(r) for r in v] for p, v in self.rules.items()}}
        np.savez_compressed(os.path.join(directory, FILE), meta=np.array(json.dumps(meta)),
                            **arrays)

    @classmethod
    def load(cls, directory: str) -> WordClasses:
        with np.load(os.path.join(directory, FILE), allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            if meta.get("format_version") != FORMAT_VERSION:
                raise ValueError(f"word classes format {meta.get('format_version')} "
                                 f"!= {FORMAT_VERSION}")

            def undelta(name: str) -> np.ndarray:
                return np.cumsum(data[name], dtype=np.uint32)

            return cls(undelta("cluster_delta"), data["cluster_paths"],
                       {p: undelta(f"lemmas_{p}") for p in _POS},
                       {p: undelta(f"irregular_{p}") for p in _POS},
                       {p: [(a, b) for a, b in v] for p, v in meta["rules"].items()},
                       meta.get("source", ""))

    @classmethod
    def from_spacy_lookups(cls, lang: str = "en") -> WordClasses:
        """Read the tables of the installed `spacy-lookups-data` (training time only)."""
        from importlib.metadata import PackageNotFoundError, version
        from importlib.resources import files

        try:
            data = files("spacy_lookups_data") / "data"
            pkg_version = version(PACKAGE)
        except (ModuleNotFoundError, PackageNotFoundError) as e:
            raise ModuleNotFoundError(
                f"word classes need the {PACKAGE} package at training time: "
                f"pip install -e '.[train]' (or train without word classes)") from e

        def table(name: str) -> dict:
            return json.loads(gzip.decompress((data / f"{lang}_{name}.json.gz").read_bytes()))

        index, exc, rules = table("lemma_index"), table("lemma_exc"), table("lemma_rules")
        return cls.build(table("lexeme_cluster"),
                         {p: index.get(p, ()) for p in _POS},
                         {p: exc.get(p, {}).keys() for p in _POS},
                         {p: [(a, b) for a, b in rules.get(p, ())] for p in _POS},
                         f"{PACKAGE} {pkg_version}")
