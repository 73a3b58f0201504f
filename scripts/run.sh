#!/usr/bin/env bash
# The run command: installs dependencies, builds, and starts kerntuned in the foreground on
# 127.0.0.1:8080 with ./kerntune.db. Extra arguments go to kerntuned (see kerntuned --help).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
exec "${KERNTUNE_BUILD_DIR:-$root/build}/bin/kerntuned" "$@"
