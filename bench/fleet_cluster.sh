# Sourced by the fleet benchmarks (bench/fleet_kills.sh, bench/fleet_scaling.sh): a throw-away
# PostgreSQL cluster in a temporary folder, listening on a unix socket there only, as the tests'
# cluster (tests/support/postgres_cluster.cpp) is made. Sets KT_TMP (the folder) and KT_DB (the
# database's URI). Run as root, the server runs as the user nobody (initdb and postgres refuse
# root). Also sources bench/daemon_ready.sh (wait_for_daemon).
source "$(dirname "${BASH_SOURCE[0]}")/daemon_ready.sh"
pg_bindir() {
  local dir
  dir=$(pg_config --bindir 2>/dev/null || true)
  if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ]; then echo "$dir"; return; fi
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}
as_server() {  # runs a command as the cluster's owner
  if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
  else "$@"; fi
}
cluster_start() {
  KT_PG_BIN=$(pg_bindir)
  [ -x "$KT_PG_BIN/initdb" ] || { echo "PostgreSQL's server (initdb, postgres) is not installed" >&2; exit 1; }
  KT_TMP=$(mktemp -d /tmp/kt-fleet.XXXXXX)
  chmod 755 "$KT_TMP"
  mkdir "$KT_TMP/pg"
  [ "$(id -u)" -ne 0 ] || chown nobody "$KT_TMP/pg"
  as_server "$KT_PG_BIN/initdb" -D "$KT_TMP/pg/data" -A trust -U kerntune -N -E UTF8 --no-locale \
    >"$KT_TMP/pg/initdb.log" 2>&1 || { cat "$KT_TMP/pg/initdb.log" >&2; exit 1; }
  as_server "$KT_PG_BIN/pg_ctl" -D "$KT_TMP/pg/data" -l "$KT_TMP/pg/server.log" -w \
    -o "-k $KT_TMP/pg -c listen_addresses= -F -c max_connections=200" start >/dev/null ||
    { cat "$KT_TMP/pg/server.log" >&2; exit 1; }
  psql -q -X "postgresql:///postgres?host=$KT_TMP/pg&user=kerntune" -c "CREATE DATABASE kt" >/dev/null
  KT_DB="postgresql:///kt?host=$KT_TMP/pg&user=kerntune"
}
cluster_stop() {
  [ -n "${KT_TMP:-}" ] || return 0
  as_server "$KT_PG_BIN/pg_ctl" -D "$KT_TMP/pg/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$KT_TMP"
}
psql_value() {  # the first column of the first row
  psql -q -X -t -A "$KT_DB" -c "$1"
}
postgres_version() {
  "$KT_PG_BIN/postgres" --version
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
