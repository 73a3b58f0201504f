#!/usr/bin/env bash
# Packs Debian's PostgreSQL server (initdb, postgres, pg_ctl, the modules initdb loads, the share
# folder, and every library they need beyond glibc and libstdc++) into .device/pg.tar.xz, for a
# fleet run on a GPU machine that has no PostgreSQL (bench/fleet_gpu_run.sh). The layout keeps
# PostgreSQL's relative paths (bin/../share), so the binaries find their share folder there:
#   tar xJf .device/pg.tar.xz -C /tmp/pg; LD_LIBRARY_PATH=/tmp/pg/libs /tmp/pg/lib/postgresql/15/bin/initdb ...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(ls /usr/lib/postgresql | sort -n | tail -1)
src=/usr/lib/postgresql/$version
[ -x "$src/bin/postgres" ] || { echo "no PostgreSQL server in $src (apt-get install postgresql)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib/postgresql/$version/bin" "$stage/lib/postgresql/$version/lib" \
  "$stage/share/postgresql" "$stage/libs"
cp "$src/bin/"{postgres,initdb,pg_ctl} "$stage/lib/postgresql/$version/bin/"
# What initdb and a plain server load: PL/pgSQL, the snowball dictionaries, the encoding
# conversions. No LLVM JIT (llvmjit.so pulls in libLLVM) and no contrib modules.
cp "$src/lib/"{plpgsql,dict_snowball}.so "$src/lib/"*_and_*.so "$stage/lib/postgresql/$version/lib/"
cp -r "/usr/share/postgresql/$version" "$stage/share/postgresql/"
for exe in "$stage/lib/postgresql/$version/bin/"* "$stage/lib/postgresql/$version/lib/"*.so; do
  ldd "$exe" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
    *) cp -L "$lib" "$stage/libs/" ;;
  esac
done
mkdir -p "$root/.device"
tar cJf "$root/.device/pg.tar.xz" -C "$stage" .
echo "PostgreSQL $version: $(du -h "$root/.device/pg.tar.xz" | cut -f1) in .device/pg.tar.xz"
