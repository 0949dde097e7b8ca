#!/usr/bin/env bash
# Build, from Debian's packages only, the base images docker-compose.local.yml names, for
# machines that reach a Debian mirror but not Docker Hub:
#   deptree-local/debian:bookworm       debootstrap --variant=minbase, then `docker import`
#   deptree-local/python:3.11-bookworm  python3 + python3-venv  (docker/Dockerfile's PYTHON_IMAGE)
#   deptree-local/redis:bookworm        redis-server            (for redis:7.2-alpine)
#   deptree-local/prometheus:bookworm   prometheus + wget       (for prom/prometheus)
# Needs root, debootstrap and a running Docker engine. An image that exists is kept;
# --force builds all again. DEBIAN_MIRROR overrides the mirror.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
prefix=deptree-local
force=0
[[ "${1:-}" == "--force" ]] && force=1

have() { [[ $force == 0 ]] && docker image inspect "$1" >/dev/null 2>&1; }

if ! have "$prefix/debian:bookworm"; then
    root="$(mktemp -d)"
    trap 'rm -rf "$root"' EXIT
    echo "images.sh: debootstrap bookworm from $mirror" >&2
    debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
    cat > "$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${mirror%/debian}/debian-security bookworm-security main
SOURCES
    # no package caches or lists in the image; apt-get update in each image that installs
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -c . | docker import --change 'CMD ["bash"]' - "$prefix/debian:bookworm"
    rm -rf "$root"
    trap - EXIT
fi

build() {   # build TAG DOCKERFILE
    have "$1" && return 0
    echo "images.sh: building $1" >&2
    docker build -q -t "$1" -f "$here/$2" \
        --build-arg DEBIAN_IMAGE="$prefix/debian:bookworm" "$here" >/dev/null
}
build "$prefix/python:3.11-bookworm" python.Dockerfile
build "$prefix/redis:bookworm" redis.Dockerfile
build "$prefix/prometheus:bookworm" prometheus.Dockerfile
docker image ls "$prefix/*"
