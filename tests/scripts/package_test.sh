#!/usr/bin/env bash
# The Debian package, installed as a user would and started with no paths: `cpack -G DEB` in the
# build folder, the package unpacked into a scratch root (dpkg-deb -x: what dpkg would install,
# without touching this machine's /usr), then its kerntuned started from an empty folder with only
# a free port. It must find its families and its page by itself; GET / and GET /v1/families are
# checked, and the Python client it installs is imported from where Debian's python3 looks.
#
#   tests/scripts/package_test.sh BUILD_DIR [PYTHON]
set -euo pipefail
build=$(cd "$1" && pwd)
python=${2:-/usr/bin/python3}
scratch=$(mktemp -d /tmp/kerntune-package-XXXXXX)
daemon=
cleanup() {
  [[ -n $daemon ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

(cd "$build" && cpack -G DEB -B "$scratch/package" >"$scratch/cpack.log" 2>&1) ||
  { cat "$scratch/cpack.log"; echo "package test: cpack failed"; exit 1; }
deb=$(ls "$scratch"/package/kerntune_*.deb)
info=$(dpkg-deb --info "$deb")
[[ $info == *"Package: kerntune"* ]] || { echo "package test: $deb is not kerntune"; exit 1; }
dpkg-deb -x "$deb" "$scratch/root"
for file in usr/bin/kerntuned usr/bin/kerntune usr/bin/kerntune-worker \
            usr/share/kerntune/kernel_templates/gemm/manifest.json usr/share/kerntune/web/index.html \
            usr/lib/python3/dist-packages/kerntune/__init__.py; do
  [[ -e $scratch/root/$file ]] || { echo "package test: the package lacks /$file"; exit 1; }
done

port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir "$scratch/run"
(cd "$scratch/run" && exec "$scratch/root/usr/bin/kerntuned" --listen "127.0.0.1:$port") \
  >"$scratch/daemon.log" 2>&1 &
daemon=$!
PYTHONPATH="$scratch/root/usr/lib/python3/dist-packages" "$python" - "$port" "$scratch/daemon.log" <<'PY'
import sys, time, urllib.request
import kerntune
port, log = sys.argv[1], sys.argv[2]
assert kerntune.__file__.startswith(log.rsplit("/", 1)[0]), kerntune.__file__  # the package's copy
client = kerntune.Client(f"http://127.0.0.1:{port}")
for _ in range(300):
    try:
        client.health()
        break
    except kerntune.DaemonUnreachable:
        time.sleep(0.1)
else:
    sys.exit("package test: the installed daemon did not come up:\n" + open(log).read())
names = sorted(f.name for f in client.families())
assert {"attention_fwd", "dual_gemm_silu", "gemm"} <= set(names), names
page = urllib.request.urlopen(f"http://127.0.0.1:{port}/").read().decode()
assert "<title>kerntune</title>" in page, page[:200]
script = urllib.request.urlopen(f"http://127.0.0.1:{port}/ui/app.js").read()
assert script, "no /ui/app.js"
print(f"package test: installed kerntuned served {len(names)} families and the page")
PY
[[ -e $scratch/run/kerntune.db ]] || { echo "package test: no store in the folder it was started in"; exit 1; }
echo "package test: passed ($(du -h "$deb" | cut -f1) package)"
