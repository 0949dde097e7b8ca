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
from dataclasses import dataclass, field

FORMAT_VERSION = 1
FILE = "wordclasses.json.gz"
PACKAGE = "spacy-lookups-data"
FEATURES = ("c4", "c6", "c10", "cluster", "wordnet")
_POS = ("noun", "verb", "adj", "adv")


@dataclass
class WordClasses:
    clusters: dict[str, int] = field(default_factory=dict)
    lemmas: dict[str, frozenset[str]] = field(default_factory=dict)      # pos -> lemmas
    irregular: dict[str, frozenset[str]] = field(default_factory=dict)   # pos -> forms
    rules: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # pos -> (old, new)
    source: str = ""

    def cluster(self, form: str) -> int:
        """Brown path of the form, else of its lowercase; 0 if neither is clustered."""
        return self.clusters.get(form) or self.clusters.get(form.lower(), 0)

    def wordnet(self, low: str) -> str:
        """WordNet parts of speech of a lowercased form ("none" if it has none);
        a hyphenated form is looked up by its last part."""
        if "-" in low.strip("-"):
            low = low.rsplit("-", 1)[1]
        tags = set()
        for pos in _POS:
            if low in self.lemmas.get(pos, ()):
                tags.add(pos[0] + "0")
            if low in self.irregular.get(pos, ()):
                tags.add(pos[0] + "x")
            for old, new in self.rules.get(pos, ()):
                if old and low.endswith(old) and low[:-len(old)] + new in self.lemmas[pos]:
                    tags.add(pos[0] + old)
        return "|".join(sorted(tags)) or "none"

    def strings(self, form: str) -> list[str]:
        """The values of `FEATURES` for one form."""
        c = self.cluster(form)
        if c:
            paths = [str(c & 15), str(c & 63), str(c & 1023), str(c)]
        else:
            paths = ["none"] * 4
        return paths + [self.wordnet(form.lower())]

    # -- persistence -------------------------------------------------------------
    def _json(self) -> dict:
        return {"format_version": FORMAT_VERSION, "source": self.source,
                "clusters": dict(sorted(self.clusters.items())),
                "lemmas": {p: sorted(v) for p, v in sorted(self.lemmas.items())},
                "irregular": {p: sorted(v) for p, v in sorted(self.irregular.items())},
                "rules": {p: [list(r) for r in v] for p, v in sorted(self.rules.items())}}

    def save(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        with gzip.open(os.path.join(directory, FILE), "wt", encoding="utf-8",
                       compresslevel=9) as f:
            json.dump(self._json(), f, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def load(cls, directory: str) -> WordClasses:
        with gzip.open(os.path.join(directory, FILE), "rt", encoding="utf-8") as f:
            data = json.load(f)
        if data.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"word classes format {data.get('format_version')} "
                             f"!= {FORMAT_VERSION}")
        return cls({k: int(v) for k, v in data["clusters"].items()},
                   {p: frozenset(v) for p, v in data["lemmas"].items()},
                   {p: frozenset(v) for p, v in data["irregular"].items()},
                   {p: [(a, b) for a, b in v] for p, v in data["rules"].items()},
                   data.get("source", ""))

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

        clusters = {w: int(c) for w, c in table("lexeme_cluster").items() if c}
        index, exc, rules = table("lemma_index"), table("lemma_exc"), table("lemma_rules")
        return cls(clusters,
                   {p: frozenset(index.get(p, ())) for p in _POS},
                   {p: frozenset(exc.get(p, {})) for p in _POS},
                   {p: [(a, b) for a, b in rules.get(p, ())] for p in _POS},
                   f"{PACKAGE} {pkg_version}")
