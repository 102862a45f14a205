#!/usr/bin/env bash
# Installs the Debian packages of harness/debian-packages.txt (as root): what
# .ci/run and the workflows' debian:12 jobs need to run the project's tests
# and regressions.
#
#   scripts/install-debian-packages.sh          apt-get update, then install them
#   scripts/install-debian-packages.sh --list   print them, one line, install nothing
set -euo pipefail
list="$(cd "$(dirname "$0")/.." && pwd)/harness/debian-packages.txt"
read -r -a packages <<< "$(sed -e 's/#.*//' -e '/^[[:space:]]*\[/d' "$list" | tr -s ' \t\n' ' ')"
if [ "${1:-}" = --list ]; then
    echo "${packages[*]}"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-debian-packages: run as root (or: sudo $0)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${packages[@]}"
