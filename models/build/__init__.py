"""The building layer: a complete model from one treebank (`deptree train`), and what
judges and ships it.

- `stages.py`: `build_model`, the stages in order (front-end, jackknife, neural,
  contextual, graph, transition, calibrate) and what each writes;
- `run_state.py`: a build's options, its resumable state and its train/dev split;
- `children.py`: the child processes the long stages train in;
- `calibrate.py`: how the pipeline combines its parts, chosen on the dev split;
- `evaluate.py`, `word_alignment.py`: the CoNLL 2018 scorer's figures;
- `package.py`: a model directory as a pip-installable wheel (`deptree package`).

The serving layer (`models/serve/`) never imports this package.
"""
from .run_state import BuildOptions
from .stages import build_model, jackknifed

__all__ = ["BuildOptions", "build_model", "jackknifed"]
