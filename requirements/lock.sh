#!/usr/bin/env bash
# Regenerate the lock files in requirements/ from pyproject.toml: every direct and
# transitive dependency pinned to one version, with the sha256 of each of its files,
# for Python >= 3.11 on any platform (one version per package: --fork-strategy fewest).
#
#   requirements/runtime.txt   [project.dependencies]: what `deptree serve` needs (Docker)
#   requirements/test.txt      runtime + the `test` extra (JAX and optax included)
#   requirements/contextual.txt  runtime + the `contextual` extra: serving with the encoder
#
# Versions already pinned are kept unless pyproject.toml rules them out; pass
# --upgrade (or --upgrade-package NAME) to move to newer releases. To lock another
# extra, add a line at the end (e.g. `lock bench --extra bench`). Needs uv (`pip install
# uv`); install from a lock with `pip install -r requirements/NAME.txt` (see README).
set -euo pipefail
cd "$(dirname "$0")/.."

if command -v uv >/dev/null 2>&1; then
    UV=(uv)
else
    UV=(python -m uv)
fi

lock() {   # lock NAME [uv pip compile flags...]
    local name=$1
    shift
    "${UV[@]}" pip compile pyproject.toml --quiet --universal --fork-strategy fewest \
        --python-version 3.11 --generate-hashes \
        --custom-compile-command "requirements/lock.sh" \
        --output-file "requirements/$name.txt" "$@"
}

lock runtime "$@"
lock test --extra test "$@"
lock contextual --extra contextual "$@"
