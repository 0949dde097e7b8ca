# Prometheus from Debian's packages: docker-compose.local.yml's stand-in for
# prom/prometheus where Docker Hub cannot be reached. Like that image, the entry point is
# the server, so compose's `command:` gives only its flags; wget is for the healthcheck.
# Built by images.sh.
ARG DEBIAN_IMAGE=deptree-local/debian:bookworm
FROM ${DEBIAN_IMAGE}
# bookworm's current packages, unpinned: a point release replaces the old versions
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends prometheus wget \
    && apt-get clean && rm -rf /var/lib/apt/lists/*
WORKDIR /prometheus
EXPOSE 9090
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
