"""The shipped model's trees, pinned: every decoder at its default budget on the first
200 en_ewt dev sentences, gold tags and the model's own tags, against a recorded digest
(issue 21: a refactor must not change the outputs). A change that means to change them
(a retrained model, a new default) records the new digests with
`python tests/models/serve/test_output_digest.py` and says so in its commit."""
from __future__ import annotations

import hashlib
import json
import sys
from itertools import islice
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EWT_DEV = ROOT.parent / "shared" / "data" / "en_ewt" / "dev.conllu"
RECORDED = Path(__file__).with_name("output_digests.json")
N = 200


def digests() -> dict[str, str]:
    """{"<decoder>/<gold|own>": sha256/16 of every sentence's heads, relations and tags}."""
    from models.conllu import read_conllu
    from models.serve.pipeline import Pipeline

    pipe = Pipeline.load("en_ewt")
    sents = list(islice(read_conllu(str(EWT_DEV)), N))
    out = {}
    for decoder in pipe.decoders():
        for tags in ("gold", "own"):
            h = hashlib.sha256()
            for s in sents:
                forms = [w.form for w in s.words]
                if tags == "gold":
                    tree = pipe.parse_words(forms, decoder, {}, upos=[w.upos for w in s.words],
                                            xpos=[w.xpos for w in s.words],
                                            lemmas=[w.lemma for w in s.words])
                else:
                    tree = pipe.parse_words(forms, decoder, {})
                h.update(json.dumps([(t.head, t.deprel, t.upos, t.xpos, t.lemma)
                                     for t in tree.tokens]).encode())
            out[f"{decoder}/{tags}"] = h.hexdigest()[:16]
    return out


def test_every_decoder_gives_the_recorded_trees():
    if not EWT_DEV.exists():
        pytest.skip(f"no EWT dev data at {EWT_DEV}")
    assert digests() == json.loads(RECORDED.read_text())


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    RECORDED.write_text(json.dumps(digests(), indent=1, sort_keys=True) + "\n")
    sys.stdout.write(RECORDED.read_text())
