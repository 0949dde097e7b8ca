# redis-server and redis-cli from Debian's packages: docker-compose.local.yml's stand-in
# for redis:7.2-alpine where Docker Hub cannot be reached. Built by images.sh.
ARG DEBIAN_IMAGE=deptree-local/debian:bookworm
FROM ${DEBIAN_IMAGE}
# bookworm's current packages, unpinned: a point release replaces the old versions
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server \
    && apt-get clean && rm -rf /var/lib/apt/lists/*
COPY redis-entrypoint.sh /usr/local/bin/
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]
CMD ["redis-server"]
