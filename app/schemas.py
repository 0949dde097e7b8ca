"""Request and response bodies of the HTTP API, with the examples shown at /docs.

Budget fields are not declared here: any extra field of a `ParseRequest` is a
budget field of the chosen decoder, checked against the decoder's field list the
workers report (GET /models), so a decoder added in `models/` needs no change here.
"""
from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import JSONResponse

PARSE_EXAMPLES = [
    {"sentences": ["The cat sat on the mat.", ["Pre", "tokenized", "words"]]},
    {"sentences": ["The cat sat on the mat."], "model": "en_ewt", "decoder": "greedy",
     "restarts": 50, "converge": 20, "seed": 0, "deadline_ms": 2000, "output": "json"},
    {"sentences": ["The cat sat on the mat."], "decoder": "greedy", "tagger": "accurate"},
    {"sentences": ["The cat sat on the mat."], "decoder": "mst", "neural": 0.3},
    {"text": "The cat sat on the mat. It was happy.", "decoder": "mst", "output": "conllu"},
]


class ParseRequest(BaseModel):
    """Sentences (raw strings or token lists) or a whole `text`; optional model,
    decoder, output and the decoder's budget fields (e.g. `restarts`, `converge`,
    `init`, `seed`, `deadline_ms` for greedy; see GET /models). `neural` weighs the
    model's tag-free neural arc scores (for selectional: their power in each move's
    probability): 0 turns them off, unset means the model's weight with the accurate
    tagger and off with the fast one. A model of several neural analysers gives every
    decoder `analysers` (how many it uses)."""

    model_config = ConfigDict(extra="allow", strict=True,
                              json_schema_extra={"examples": PARSE_EXAMPLES})

    sentences: list[str | list[str]] | None = Field(
        None, description="each a raw sentence (tokenized and tagged by the model) or a list "
        "of token strings")
    text: str | None = Field(None, description="a whole document, split into sentences by the "
                             "model, and always at a blank line (instead of `sentences`)")
    model: str | None = Field(None, description="model name (default from settings)")
    decoder: str | None = Field(None, description="greedy, mst, ... (default from settings)")
    tagger: str | None = Field(
        None, description='POS tagger of raw strings, token lists and `text`: "fast" (linear) '
        'or "accurate" (+ BiLSTM, slower; where the model has it, see `taggers` in GET '
        '/models; with it the decoders also use neural arc scores, see the budget '
        'field `neural`) or "contextual" (the same BiLSTM also reading a pretrained '
        'multilingual encoder: slower again, more accurate; where the model has it); '
        'default from settings (auto: the most accurate the model has); the answer '
        'says which tagged')
    output: Literal["json", "conllu"] | None = Field(
        None, description='"conllu" returns CoNLL-U text (also with Accept: text/x-conllu)')


class Token(BaseModel):
    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    head: int
    deprel: str
    feats: str = "_"
    start: int | None = Field(None, description="character offset (raw input only)")
    end: int | None = None
    space_after: bool | None = Field(None, description="whitespace follows the word's "
                                     "token in the text (raw input only)")


class MultiwordToken(BaseModel):
    first: int = Field(description="id of its first word")
    last: int = Field(description="id of its last word")
    form: str
    start: int
    end: int


class ParsedSentence(BaseModel):
    tokens: list[Token] = Field(description="the syntactic words")
    multiword: list[MultiwordToken] = Field(
        default_factory=list, description='surface tokens of several words ("don\'t" = '
        '"do" + "n\'t"), from raw input')
    score: float | None = Field(description="the tree's model score; null when not finite")
    stats: dict[str, Any] = Field(description="restarts_used, best_restart, seconds, "
                                  "seconds_per_token, deadline_hit, ...")
    cached: bool
    text: str | None = None


class ParseResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "model": "en_ewt", "version": "1+3f2a9c0d1e2b", "decoder": "greedy", "tagger": "fast",
        "budget": {"restarts": 100, "converge": 20, "init": "first_order", "seed": 0},
        "sentences": [{"text": "The cat sat.", "score": 7.31, "cached": False,
                       "stats": {"restarts_used": 21, "best_restart": 1, "deadline_hit": False,
                                 "seconds": 0.0012, "seconds_per_token": 0.0003},
                       "tokens": [
                           {"id": 1, "form": "The", "lemma": "the", "upos": "DET", "xpos": "DT",
                            "head": 2, "deprel": "det", "start": 0, "end": 3},
                           {"id": 2, "form": "cat", "lemma": "cat", "upos": "NOUN",
                            "xpos": "NN", "head": 3, "deprel": "nsubj", "start": 4, "end": 7},
                           {"id": 3, "form": "sat", "lemma": "sit", "upos": "VERB",
                            "xpos": "VBD", "head": 0, "deprel": "root", "start": 8, "end": 11},
                           {"id": 4, "form": ".", "lemma": ".", "upos": "PUNCT", "xpos": ".",
                            "head": 3, "deprel": "punct", "start": 11, "end": 12}]}]}]})

    model: str
    version: str = Field(description="the version of the model that made the trees (two, "
                                     "comma-separated, while workers of two versions serve)")
    decoder: str
    tagger: str | None = Field(None, description="the tagger that tagged the input; null when "
                               "the model has none")
    budget: dict[str, Any] = Field(description="the effective budget: defaults + request")
    sentences: list[ParsedSentence]


class ErrorBody(BaseModel):
    code: str
    message: str
    limit: str | None = None
    value: Any = None
    got: Any = None


class ErrorResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"error": {
        "code": "too_many_sentences", "message": "the request exceeds max_sentences=256 "
        "(got 300)", "limit": "max_sentences", "value": 256, "got": 300}}]})

    error: ErrorBody


class ProcessResponse(BaseModel):
    """The UDPipe REST answer."""

    model: str
    acknowledgements: list[str]
    result: str


class ProcessRequest(BaseModel):
    """The UDPipe /process fields, sent form-encoded, as multipart, as JSON or in the
    query string (documentation only: the route reads them itself)."""

    data: str = Field(description="the input: CoNLL-U, horizontal or vertical tokens, or "
                      "raw text when `tokenizer` is present")
    model: str | None = Field(None, description="model name or a prefix of one")
    tokenizer: str | None = Field(None, description='present: `data` is raw text; '
                                  '"presegmented": one sentence a line')
    tagger: str | None = Field(None, description='present: re-tag CoNLL-U input; "accurate", '
                               '"contextual" or "fast": with that tagger (where the model '
                               'has it), any other value: the default tagger')
    parser: str | None = Field(None, description='deptree options, e.g. '
                               '"decoder=greedy;restarts=50"')
    input: Literal["conllu", "horizontal", "vertical"] | None = Field(
        None, description="format of `data` without `tokenizer` (default conllu)")
    output: str | None = Field(None, pattern="^(conllu|$)",
                               description="conllu (the default, also when empty)")


class SafeJSONResponse(JSONResponse):
    """JSON that renders whatever its strings hold: UTF-8 as usual, `\\u` escapes when one
    carries a lone surrogate (UTF-8 cannot encode it; Starlette's rendering would raise)."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False,
                              separators=(",", ":")).encode("ascii")
