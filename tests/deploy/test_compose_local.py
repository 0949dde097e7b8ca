"""docker-compose.local.yml only swaps images and build arguments of docker-compose.yml,
and the Dockerfile's build context holds what its COPY lines name (checked without a
Docker engine; bench/docker/e2e.py runs the real build and stack)."""
from __future__ import annotations

import re
import shlex
import subprocess

import pytest
from deploy_files import COMPOSE, DOCKER, DOCKERFILE, dockerfile_arg, load_yaml

LOCAL = COMPOSE.parent / "docker-compose.local.yml"
LOCAL_KEYS = {"image", "build", "profiles"}


def _args_declared(dockerfile) -> set[str]:
    return set(re.findall(r"^ARG (\w+)", dockerfile.read_text(), re.MULTILINE))


def test_local_override_is_additive():
    main, local = load_yaml(COMPOSE)["services"], load_yaml(LOCAL)["services"]
    assert "name" not in load_yaml(LOCAL)          # Debian's docker-compose 1.29 reads it too
    assert set(local) <= set(main)
    for name, svc in local.items():
        assert set(svc) <= LOCAL_KEYS, (name, set(svc) - LOCAL_KEYS)
        if "build" in svc:
            assert {k: svc["build"][k] for k in ("context", "dockerfile")} == \
                {k: main[name]["build"][k] for k in ("context", "dockerfile")}, name
            assert set(svc["build"]["args"]) <= _args_declared(DOCKERFILE), name
    # only Grafana, which has no Debian package, is left out
    assert [n for n, s in local.items() if "profiles" in s] == ["grafana"]


def test_local_images_are_built_by_images_sh():
    """Each image the override names comes from docker/local/images.sh, and the Python
    base it passes to the Dockerfile too."""
    script = (DOCKER / "local" / "images.sh").read_text()
    built = set(re.findall(r'"\$prefix/([\w.-]+:[\w.-]+)"', script))
    local = load_yaml(LOCAL)["services"]
    named = {s["image"] for s in local.values() if "image" in s}
    named |= {s["build"]["args"]["PYTHON_IMAGE"] for s in local.values() if "build" in s}
    assert named and {n.removeprefix("deptree-local/") for n in named} <= built
    for dockerfile in re.findall(r"build \S+ (\S+\.Dockerfile)", script):
        assert (DOCKER / "local" / dockerfile).exists(), dockerfile


def _copy_sources(dockerfile) -> list[str]:
    """Build-context paths of COPY lines (not --from=stage), ${ARG}s left out."""
    out = []
    for line in dockerfile.read_text().splitlines():
        words = shlex.split(line) if line.startswith("COPY ") else []
        if words and not any(w.startswith("--from") for w in words):
            out += [w for w in words[1:-1] if not w.startswith(("--", "$"))]
    return out


WITH_COPY = [f for f in [DOCKERFILE, *sorted((DOCKER / "local").glob("*.Dockerfile"))]
             if re.search(r"^COPY ", f.read_text(), re.MULTILINE)]


@pytest.mark.parametrize("dockerfile", WITH_COPY, ids=lambda p: p.name)
def test_copy_sources_exist(dockerfile):
    context = COMPOSE.parent if dockerfile == DOCKERFILE else dockerfile.parent
    sources = _copy_sources(dockerfile)
    assert sources
    for src in sources:        # in a fresh clone: tracked by git, not only on this disk
        tracked = subprocess.run(["git", "ls-files", "--", str(context / src)], cwd=context,
                                 capture_output=True, text=True, check=True).stdout.split()
        assert tracked, f"{dockerfile.name}: COPY {src} is not in a clone's build context"
    ignored = (COMPOSE.parent / ".dockerignore").read_text().split()
    if dockerfile == DOCKERFILE:
        assert not set(sources) & set(ignored)


def test_requirements_arg_names_a_file():
    """REQUIREMENTS (the pinned requirements the image installs first) is in the context;
    an empty one would COPY the whole context under BuildKit."""
    req = dockerfile_arg("REQUIREMENTS")
    assert req and (COMPOSE.parent / req).is_file(), req
