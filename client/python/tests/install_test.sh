#!/usr/bin/env bash
# The client installs with Debian's Python tooling alone and no package index: pip builds it
# with the system setuptools (--no-build-isolation), offline (--no-index), into a folder; the
# installed package imports and has no dependency. A copy is built, so the source tree stays clean.
set -euo pipefail
python=${1:?usage: install_test.sh PYTHON SOURCE_DIR}
source_dir=${2:?usage: install_test.sh PYTHON SOURCE_DIR}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$source_dir" "$scratch/src"
rm -rf "$scratch/src/build" "$scratch/src"/*.egg-info
env -u PIP_FIND_LINKS -u PIP_INDEX_URL PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$python" -m pip install --quiet --no-build-isolation --no-index --no-deps \
  --target "$scratch/site" "$scratch/src" 2>&1 | grep -v "Running pip as the 'root' user" || true
cd "$scratch"
PYTHONPATH="$scratch/site" "$python" - "$scratch/site" <<'PY'
import importlib.metadata, os, sys
import kerntune
site = sys.argv[1]
assert os.path.dirname(kerntune.__file__) == os.path.join(site, "kerntune"), kerntune.__file__
dist = importlib.metadata.distribution("kerntune")
assert dist.version == kerntune.__version__, (dist.version, kerntune.__version__)
assert not dist.requires, dist.requires  # standard library only
print("installed kerntune", dist.version, "at", site)
PY
