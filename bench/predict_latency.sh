#!/usr/bin/env bash
# GET /v1/best?predict=1 latency on shapes nobody tuned: kerntuned (no GPU needed) fitted on the
# committed recorded spaces, then per family REQUESTS untuned shapes drawn at random (fixed seed:
# odd, prime and skinny dims among them; kt-predict-bench --shapes-only draws them, so the
# in-process bench ranks the same shapes) asked over one kept-alive connection, so the figures are
# the daemon's, not TCP set-up. Prints and writes latency percentiles and how many feasible configs
# each family's answers ranked, the ten slowest, and the same connection's GET /v1/health floor.
#
#   OUT=/some/dir bash bench/predict_latency.sh        (KERNTUNE_BIN_DIR: build/bin by default)
# Files in $OUT: latency.log, latency.json, daemon.log.
set -uo pipefail
out=${OUT:?set OUT}
bin=${KERNTUNE_BIN_DIR:-build/bin}
port=${KERNTUNE_BENCH_PORT:-18083}
requests=${REQUESTS:-1000}
url=http://127.0.0.1:$port
mkdir -p "$out"
exec > >(tee -a "$out/latency.log") 2>&1
echo "== predicted-answer latency, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n)"
lscpu | grep -E '^(Model name|CPU\(s\))' || true
work=$(mktemp -d)
"$bin/kerntuned" --listen "127.0.0.1:$port" --db "$work/kerntune.db" \
  --predictor-spaces tests/data/spaces-2026-12 --predictor-spaces tests/data/spaces \
  >"$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/daemon_ready.sh"
wait_for_daemon "$url" "$bin" "$out/daemon.log"

"$bin/kt-predict-bench" --shapes-only --requests "$requests" >"$work/shapes.json" ||
  { echo "kt-predict-bench --shapes-only failed (build it: the kt-predict-bench target)"; exit 1; }

python3 - "$port" "$out/latency.json" "$work/shapes.json" <<'PY'
import http.client, json, sys, time
port, path = int(sys.argv[1]), sys.argv[2]
shapes = json.load(open(sys.argv[3]))  # per family: a warm-up shape, then the timed ones
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

def get(target):
    conn.request("GET", target)
    r = conn.getresponse()
    return r.status, json.loads(r.read() or b"null")

summary = {}
# The floor: the same connection's round trip for GET /v1/health (no ranking, no store), so a
# tail the host adds (other work on its cores) shows apart from the answers' own.
requests = len(shapes["gemm"]) - 1
floor = []
for _ in range(requests):
    t = time.perf_counter()
    get("/v1/health")
    floor.append((time.perf_counter() - t) * 1e3)
floor.sort()
summary["health_floor"] = {"p50_ms": round(floor[len(floor) // 2], 3),
                           "p99_ms": round(floor[min(len(floor) - 1, int(len(floor) * 0.99))], 3),
                           "max_ms": round(floor[-1], 3)}
print("GET /v1/health", json.dumps(summary["health_floor"]))
for family in ("gemm", "dual_gemm_silu", "attention_fwd"):
    warm_up, timed = shapes[family][0], shapes[family][1:]
    query = lambda shape: "/v1/best?family=%s&dtype=bf16&predict=1&%s" % (
        family, "&".join("%s=%d" % kv for kv in shape.items()))
    # The daemon fits its predictors in the background after it starts.
    deadline = time.monotonic() + 120
    while get(query(warm_up))[0] != 200:
        if time.monotonic() > deadline:
            sys.exit(f"{family}: no predicted answer within 120 s")
        time.sleep(0.5)
    lat, ranked, slow, refused = [], [], [], 0
    for shape in timed:
        t = time.perf_counter()
        status, body = get(query(shape))
        ms = (time.perf_counter() - t) * 1e3
        if status != 200:  # no feasible config for the drawn shape: reported, not timed
            refused += 1
            print(family, shape, status, body)
            continue
        assert body["source"] == "predicted", body
        lat.append(ms)
        ranked.append(body["model"]["candidates_ranked"])
        slow.append((ms, body["model"]["candidates_ranked"], shape))
    lat.sort()
    ranked.sort()
    q = lambda xs, p: xs[min(len(xs) - 1, int(len(xs) * p))]
    summary[family] = {"answered": len(lat), "not_answered": refused, "p50_ms": round(q(lat, 0.5), 2),
                       "p90_ms": round(q(lat, 0.9), 2), "p99_ms": round(q(lat, 0.99), 2),
                       "max_ms": round(lat[-1], 2), "candidates_ranked_median": q(ranked, 0.5),
                       "candidates_ranked_max": ranked[-1],
                       # The ten slowest: a tail of big candidate counts is the ranking's, one of
                       # small counts is the host's (other work on its cores).
                       "slowest": [{"ms": round(ms, 2), "candidates_ranked": n, "shape": shape}
                                   for ms, n, shape in sorted(slow, key=lambda s: s[0])[-10:]]}
    print(family, json.dumps({k: v for k, v in summary[family].items() if k != "slowest"}))
    print("  slowest:", ", ".join("%.2f ms (%d ranked)" % (s["ms"], s["candidates_ranked"])
                                  for s in summary[family]["slowest"]))
json.dump(summary, open(path, "w"), indent=1)
PY
