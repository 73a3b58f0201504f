# Sourced by the bench scripts that start a kerntuned: wait_for_daemon URL BIN_DIR LOG waits up
# to 60 s for the daemon at URL to answer (`kerntune devices`); if it does not, prints the end of
# its LOG and exits 1.
wait_for_daemon() {
  local url=$1 bin=$2 log=$3
  for _ in $(seq 300); do
    "$bin/kerntune" --server "$url" devices >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "kerntuned at $url did not start; the end of $log:" >&2
  tail -20 "$log" >&2
  exit 1
}
