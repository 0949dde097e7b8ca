"""Graph-based parser: features, scoring, decoders, labeler, training."""
from .. import compile_log  # noqa: F401  (kernels live here: it logs their compiles)
