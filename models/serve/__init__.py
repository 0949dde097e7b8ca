"""The serving layer: a loaded model and how one sentence is parsed with it.

- `registry.py`: finding models (directories, installed packages) and checking them;
- `pipeline_config.py`: `pipeline.json`, read and checked;
- `pipeline.py`: `Pipeline`, the one object a worker holds per model;
- `components.py`: its parts (front-end, analysers, graph and transition parsers);
- `tagging.py`: the fast, accurate and contextual taggers;
- `parse_policy.py`: a request's budget checked once, and how the parts' scores mix;
- `parsed.py`: what a parse returns;
- `warmup.py`: compiling the kernels before the first request.

`worker/` imports only this package (and the shared leaf modules of `models/`).
"""
