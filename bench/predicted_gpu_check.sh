#!/usr/bin/env bash
# The predicted searcher on a GPU: for each shape, a budget-12 job searched by the shape
# predictor and a budget-96 job searched by the local searcher (the default), then a pinned
# job that times both winners in the same job, interleaved (its final comparison), REPEATS times
# (default 5), so the ratio is not two jobs' clocks and carries the repeats' range. kerntuned
# fits its predictors on the committed recorded spaces less the checked
# shapes (tests/data/spaces*, the shape left out on every GPU), as a daemon that never tuned
# them would. Also times GET /v1/best?predict=1 for an untuned shape (latency percentiles).
#
#   OUT=/some/dir bash bench/predicted_gpu_check.sh [SHAPE ...]   (gemm bf16 MxNxK; default the
#   three of the predicted-answers target: 4096x4096x4096 128x4096x7168 2048x2048x2048)
# Files in $OUT: check.log, summary.json, daemon.log.
set -uo pipefail
out=${OUT:?set OUT}
bin=${KERNTUNE_BIN_DIR:-.device/bin}
port=${KERNTUNE_BENCH_PORT:-18082}
url=http://127.0.0.1:$port
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(4096x4096x4096 128x4096x7168 2048x2048x2048)
log=$out/check.log
exec > >(tee -a "$log") 2>&1
echo "== predicted searcher check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true

work=$(mktemp -d)
mkdir -p "$work/spaces"
for f in tests/data/spaces/*.json tests/data/spaces-2026-12/*.json.gz; do
  name=$(basename "$f")
  skip=0
  for s in "${shapes[@]}"; do case "$name" in gemm-bf16-$s-*) skip=1 ;; esac; done
  [ $skip = 1 ] || cp "$f" "$work/spaces/"
done
echo "predictor spaces: $(ls "$work/spaces" | wc -l) (the checked shapes left out)"
"$bin/kerntuned" --listen "127.0.0.1:$port" --db "$work/kerntune.db" \
  --predictor-spaces "$work/spaces" >"$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/daemon_ready.sh"
wait_for_daemon "$url" "$bin" "$out/daemon.log"
cli=("$bin/kerntune" --server "$url")

python3 - "$url" "$out/summary.json" "${REPEATS:-5}" "${shapes[@]}" <<'EOF'
import json, sys, time, urllib.request, urllib.error
url, summary_path, repeats, shapes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]

def call(method, path, body=None):
    req = urllib.request.Request(url + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")

def run(body):
    status, job = call("POST", "/v1/jobs", body)
    assert status in (200, 201, 202), (status, job)
    while True:
        _, j = call("GET", "/v1/jobs/%d" % job["id"])
        if j["status"] not in ("queued", "running"):
            return j
        time.sleep(2)

def dims(shape):
    m, n, k = (int(x) for x in shape.split("x"))
    return {"M": m, "N": n, "K": k}

# The predicted answer's latency, on an untuned shape (the first call fits nothing: the models
# were fitted at start).
# The daemon fits its predictors in the background after it starts (a few seconds).
for _ in range(300):
    status, body = call("GET", "/v1/best?family=gemm&dtype=bf16&M=333&N=4096&K=4096&predict=1")
    if status == 200:
        break
    time.sleep(0.2)
lat = []
for i in range(200):
    t = time.perf_counter()
    status, body = call("GET", "/v1/best?family=gemm&dtype=bf16&M=%d&N=4096&K=4096&predict=1" % (333 + i))
    lat.append((time.perf_counter() - t) * 1e3)
    assert status == 200 and body["source"] == "predicted", (status, body)
lat.sort()
latency = {"requests": len(lat), "p50_ms": lat[len(lat) // 2], "p99_ms": lat[int(len(lat) * 0.99) - 1],
           "max_ms": lat[-1], "candidates_ranked": body["model"]["candidates_ranked"]}
print("GET /v1/best?predict=1:", json.dumps(latency))

results = []
for shape in shapes:
    d = dims(shape)
    _, predicted = call("GET", "/v1/best?family=gemm&dtype=bf16&M=%d&N=%d&K=%d&predict=1" % (d["M"], d["N"], d["K"]))
    row = {"shape": shape, "predicted_answer": {k: predicted.get(k) for k in ("template", "config", "expected_us", "expected_interval_us", "validated_elsewhere")}}
    jobs = {}
    for name, search, budget in (("predicted_12", "predicted", 12), ("local_96", "local", 96)):
        j = run({"family": "gemm", "dtype": "bf16", "shape": d, "budget": budget, "search": search})
        best = j.get("best") or {}
        jobs[name] = j
        row[name] = {"job": j["id"], "status": j["status"], "best_us": best.get("median_us"),
                     "template": best.get("template"), "config": best.get("config"),
                     "measured": j["progress"]["by_status"].get("measured")}
        print(shape, name, json.dumps(row[name]))
    picked = [(row[n]["template"], row[n]["config"]) for n in ("predicted_12", "local_96")]
    if all(c for _, c in picked) and picked[0] != picked[1]:
        # The two winners timed in one job, interleaved round by round (its final comparison),
        # REPEATS times: the ratio is the repeats' median with their range (for 5 repeats the
        # range holds the population median with 94% probability, order statistics).
        configs = [dict(c, template=t) for t, c in picked]
        key = lambda t, c: t + json.dumps(c, sort_keys=True)
        ratios, pins = [], []
        for _ in range(repeats):
            j = run({"family": "gemm", "dtype": "bf16", "shape": d, "configs": configs})
            _, page = call("GET", "/v1/jobs/%d/variants?limit=10" % j["id"])
            ids = {key(v["template"], v["config"]): v["id"] for v in page["variants"]}
            first = {key(v["template"], v["config"]): v.get("median_us") for v in page["variants"]}
            final = (j.get("comparison") or {}).get("final") or {}
            interleaved = {vid: t.get("median_us") for vid, t in
                           zip(final.get("variant_ids", []), final.get("timings", []))}
            ka, kb = key(*picked[0]), key(*picked[1])
            a = interleaved.get(ids.get(ka)) or first.get(ka)
            b = interleaved.get(ids.get(kb)) or first.get(kb)
            pins.append({"job": j["id"], "predicted_12_us": a, "local_96_us": b,
                         "interleaved": bool(interleaved)})
            if a and b:
                ratios.append(a / b)
        ratios.sort()
        row["pinned"] = {"repeats": pins,
                         "predicted_12_over_local_96": ratios[len(ratios) // 2] if ratios else None,
                         "range": [ratios[0], ratios[-1]] if ratios else None}
    else:
        row["pinned"] = {"same_config": True, "predicted_12_over_local_96": 1.0}
    print(shape, "pinned", json.dumps(row["pinned"]))
    results.append(row)
json.dump({"latency": latency, "shapes": results}, open(summary_path, "w"), indent=1)
EOF
echo "check exit $?"
"${cli[@]}" history --limit 20
