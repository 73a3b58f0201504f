#!/usr/bin/env bash
# Faults in a fleet (issue 17): a throw-away PostgreSQL cluster in a temporary folder, two kerntuned
# on it (compile mode, no GPU needed) sharing compile-mode sweeps; one of the two, at random, is
# killed with kill -9 at a random time, KILLS times, and started again each time. Then it waits for
# every job to end and checks in the database that every planned variant has exactly one outcome:
# none left pending or leased, none duplicated (two rows of one job, template and config), and
# counts those recorded as faults (db/lease_store.cpp: a variant whose lease expired three times
# with its work begun, under at least two daemons) and those whose begun work expired once or twice
# (planned again), and the expiries not counted (claimed in a batch, the daemon killed before it
# began the variant). No variant code runs in a daemon, so every fault here is an innocent one.
#
#   bench/fleet_kills.sh [BIN_DIR] [KILLS] [OUT_DIR]
# BIN_DIR default build/bin; KILLS default 20; OUT_DIR default bench/results/<date>-fleet-kills.
# Output: OUT_DIR/summary.json, the daemons' logs and the kill schedule (kills.log).
# Run as root, PostgreSQL runs as the user nobody (initdb and postgres refuse root).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:-$here/build/bin}" && pwd)
kills=${2:-20}
out=${3:-$here/bench/results/$(date -u +%Y-%m-%d)-fleet-kills}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/daemon-*.log "$out"/kills.log "$out"/summary.json

source "$here/bench/fleet_cluster.sh"
cluster_start
trap 'stop_daemons; cluster_stop' EXIT

declare -A pid port
start_daemon() {  # name
  local name=$1
  [ -n "${port[$name]:-}" ] || port[$name]=$(free_port)
  echo "=== start $(date -u +%H:%M:%S.%N)" >>"$out/daemon-$name.log"
  "$bin/kerntuned" --listen "127.0.0.1:${port[$name]}" --db "$KT_DB" \
    --families "$here/kernel_templates" --work-dir "$KT_TMP/work-$name" --compile-threads 1 \
    --lease-seconds 2 --heartbeat-seconds 0.4 >>"$out/daemon-$name.log" 2>&1 &
  pid[$name]=$!
  wait_for_daemon "http://127.0.0.1:${port[$name]}" "$bin" "$out/daemon-$name.log"
}
stop_daemons() {
  for name in "${!pid[@]}"; do
    kill "${pid[$name]}" 2>/dev/null || true
    wait "${pid[$name]}" 2>/dev/null || true
  done
}

start_daemon a
start_daemon b

# Compile-mode sweeps of the GEMM space, one job per shape; another is submitted whenever every
# job ended before the kills are through, so there is always work to lose.
shapes=("M=256,N=256,K=256" "M=512,N=384,K=640" "M=1024,N=256,K=2048" "M=128,N=4096,K=512"
        "M=768,N=768,K=768" "M=64,N=2048,K=4096")
next_shape=0
jobs=()
submit() {
  local shape=${shapes[$next_shape]}
  next_shape=$(( (next_shape + 1) % ${#shapes[@]} ))
  local m n k
  IFS=, read -r m n k <<<"$shape"
  local body
  body=$(printf '{"family":"gemm","shape":{"M":%d,"N":%d,"K":%d},"dtype":"bf16","mode":"compile","arch":"sm_90a","budget":%d}' \
    "${m#M=}" "${n#N=}" "${k#K=}" "${KT_BUDGET:-120}")
  local id
  id=$(curl -sf -X POST -H 'Content-Type: application/json' -d "$body" \
    "http://127.0.0.1:${port[a]}/v1/jobs" | jq -r .id)
  jobs+=("$id")
  echo "$(date -u +%H:%M:%S) submitted job $id ($shape)" | tee -a "$out/kills.log"
}
unfinished() {
  psql_value "SELECT COUNT(*) FROM jobs WHERE status IN ('queued','running')"
}
submit
started=$(date +%s.%N)
for i in $(seq 1 "$kills"); do
  sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.5 + 3.5 * r / 32767 }')"
  [ "$(unfinished)" -gt 0 ] || submit
  victim=$([ $((RANDOM % 2)) -eq 0 ] && echo a || echo b)
  held=$(psql_value "SELECT COUNT(*) FROM variants v JOIN daemons d ON d.id = v.lease_owner
                     WHERE d.pid = ${pid[$victim]} AND v.status = 'pending'")
  kill -9 "${pid[$victim]}"
  wait "${pid[$victim]}" 2>/dev/null || true
  echo "=== kill -9 $(date -u +%H:%M:%S.%N)" >>"$out/daemon-$victim.log"
  echo "$(date -u +%H:%M:%S) kill $i: daemon $victim (pid ${pid[$victim]}, holding $held leases)" |
    tee -a "$out/kills.log"
  sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", r / 32767 }')"
  start_daemon "$victim"
done
killed_for=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

# Every job ends: the dead daemons' leases expire (2 s) and are claimed again.
deadline=$(( $(date +%s) + ${KT_FINISH_SECONDS:-600} ))
while [ "$(unfinished)" -gt 0 ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 1; done

ids=$(IFS=,; echo "${jobs[*]}")
jobs_not_done=$(psql_value "SELECT COUNT(*) FROM jobs WHERE id IN ($ids) AND status <> 'done'")
rows=$(psql_value "SELECT COUNT(*) FROM variants WHERE job_id IN ($ids)")
pending=$(psql_value "SELECT COUNT(*) FROM variants WHERE job_id IN ($ids) AND status = 'pending'")
leased=$(psql_value "SELECT COUNT(*) FROM variants WHERE job_id IN ($ids) AND lease_owner IS NOT NULL")
cancelled=$(psql_value "SELECT COUNT(*) FROM variants WHERE job_id IN ($ids) AND status = 'cancelled'")
faulted=$(psql_value "SELECT COUNT(*) FROM variants WHERE job_id IN ($ids) AND status = 'crashed'")
duplicated=$(psql_value "SELECT COALESCE(SUM(n - 1), 0) FROM (SELECT COUNT(*) AS n FROM variants
                         WHERE job_id IN ($ids) GROUP BY job_id, template_name, config_key) g")
expired_once=$(psql_value "SELECT COUNT(*) FROM variants WHERE job_id IN ($ids) AND lease_expiries = 1")
expired_twice=$(psql_value "SELECT COUNT(*) FROM variants WHERE job_id IN ($ids) AND lease_expiries = 2")
# Expiries of leases whose work had not begun: in the lease history only, marked as such.
not_begun=" before beginning it"
uncounted=$(psql_value "SELECT COALESCE(SUM((LENGTH(lease_history)
                        - LENGTH(REPLACE(lease_history, '$not_begun', ''))) / LENGTH('$not_begun')), 0)
                        FROM variants WHERE job_id IN ($ids)")
uncounted_variants=$(psql_value "SELECT COUNT(*) FROM variants WHERE job_id IN ($ids)
                                 AND lease_history LIKE '%$not_begun%'")
by_status=$(psql_value "SELECT COALESCE(json_object_agg(status, n), '{}') FROM
                        (SELECT status, COUNT(*) AS n FROM variants WHERE job_id IN ($ids)
                         GROUP BY status) s")
# Late writes a daemon's store refused (it had lost the lease): work done twice, recorded once.
refused=$(cat "$out"/daemon-*.log | grep -c "no longer holds its lease" || true)

jq -n --argjson kills "$kills" --argjson killed_for "$killed_for" --argjson jobs "[$ids]" \
  --argjson jobs_not_done "$jobs_not_done" --argjson rows "$rows" --argjson pending "$pending" \
  --argjson leased "$leased" --argjson cancelled "$cancelled" --argjson faulted "$faulted" \
  --argjson duplicated "$duplicated" --argjson expired_once "$expired_once" \
  --argjson expired_twice "$expired_twice" \
  --argjson by_status "$by_status" --argjson refused "${refused:-0}" \
  --argjson uncounted "$uncounted" --argjson uncounted_variants "$uncounted_variants" \
  --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --arg postgres "$(postgres_version)" --arg commit "$(git -C "$here" rev-parse --short HEAD)" '{
    date: $date, commit: $commit, postgresql: $postgres, kills: $kills,
    seconds_of_kills: $killed_for, lease_seconds: 2, heartbeat_seconds: 0.4,
    jobs: $jobs, jobs_not_done: $jobs_not_done, planned_variants: $rows,
    by_status: $by_status, lost: ($pending + $leased + $cancelled), pending: $pending,
    leased: $leased, cancelled: $cancelled, duplicated: $duplicated,
    fault_rule: "3 expiries of begun work under 2+ daemons", faulted: $faulted,
    returned_after_one_expiry: $expired_once, returned_after_two_expiries: $expired_twice,
    expiries_before_work_began: $uncounted, variants_with_such_expiries: $uncounted_variants,
    late_writes_refused: $refused, load_average_after: $load,
    ok: ($jobs_not_done == 0 and $pending + $leased + $cancelled == 0 and $duplicated == 0)
  }' | tee "$out/summary.json"
