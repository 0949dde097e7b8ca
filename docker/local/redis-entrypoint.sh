#!/bin/sh
# Debian's redis-server refuses clients from other hosts when it runs without a config
# file and without a password ("protected mode"); the official redis image turns that
# off, as the container's network is the boundary. Do the same, first, so that
# compose's `command: [redis-server, ...]` flags still apply after it.
set -e
if [ "$1" = "redis-server" ]; then
    shift
    exec redis-server --protected-mode no "$@"
fi
exec "$@"
