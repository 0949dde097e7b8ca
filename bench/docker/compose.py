"""One Compose project on the repository's compose files: up, ps, down, config.

Uses the `docker compose` plugin (v2) where it exists, else Debian's `docker-compose`
(v1.29), which rejects the top-level `name:` of docker-compose.yml: it gets a copy
without that key, and `-p` names the project either way.
"""
from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

import yaml

logger = logging.getLogger(__name__)


def _plugin() -> bool:
    docker = shutil.which("docker")
    return bool(docker) and subprocess.run([docker, "compose", "version"], capture_output=True,
                                           check=False).returncode == 0


class Compose:
    def __init__(self, root: Path, project: str, files: list[Path], env_file: Path,
                 profiles: tuple[str, ...] = ()) -> None:
        self.root, self.project = root, project
        self._tmp = tempfile.TemporaryDirectory(prefix="deptree-compose-")
        if _plugin():
            self.base = ["docker", "compose"]
        elif shutil.which("docker-compose"):
            self.base = ["docker-compose"]
            first = yaml.safe_load(files[0].read_text(encoding="utf-8"))
            first.pop("name", None)
            copy = Path(self._tmp.name) / files[0].name
            copy.write_text(yaml.safe_dump(first, sort_keys=False), encoding="utf-8")
            files = [copy, *files[1:]]
        else:
            raise RuntimeError("neither `docker compose` nor `docker-compose` is installed")
        self.base += ["-p", project, "--project-directory", str(root),
                      "--env-file", str(env_file)]
        for f in files:
            self.base += ["-f", str(f)]
        for p in profiles:
            self.base += ["--profile", p]

    def version(self) -> str:
        return self.run("version", capture=True).stdout.strip().splitlines()[0]

    def run(self, *args: str, capture: bool = False, check: bool = True,
            timeout: float = 900) -> subprocess.CompletedProcess:
        cmd = [*self.base, *args]
        logger.debug("%s", " ".join(cmd))
        return subprocess.run(cmd, cwd=self.root, capture_output=capture, text=True,
                              check=check, timeout=timeout)

    def config(self) -> dict:
        """The merged configuration, variables filled in."""
        return yaml.safe_load(self.run("config", capture=True).stdout)

    def ids(self, service: str) -> list[str]:
        """Container ids of `service` (running or not)."""
        out = self.run("ps", "-q", service, capture=True).stdout
        return [line.strip() for line in out.splitlines() if line.strip()]

    def down(self) -> None:
        self.run("down", "-v", "--remove-orphans", "-t", "10", check=False)

    def close(self) -> None:
        self._tmp.cleanup()
