"""Text front-end: tokenizer, sentence splitter, taggers, lemmatizer."""
from .. import compile_log  # noqa: F401  (kernels live here: it logs their compiles)
