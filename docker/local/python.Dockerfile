# Python 3.11 from Debian's packages, for docker/Dockerfile's PYTHON_IMAGE build argument
# where Docker Hub (python:3.11-slim-bookworm) cannot be reached. Built by images.sh.
ARG DEBIAN_IMAGE=deptree-local/debian:bookworm
FROM ${DEBIAN_IMAGE}
# python3-venv brings ensurepip's pip wheel: `python3 -m venv` gives a venv with pip
# bookworm's current packages, unpinned: a point release replaces the old versions
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && apt-get clean && rm -rf /var/lib/apt/lists/*
CMD ["python3"]
