"""The whole loop on a GPU, as a user runs it: a small model recorded with kerntune.torch.record,
its problems tuned with `kerntune tune-all` on a real kerntuned, run with kerntune.torch.enable
from the daemon and from a bundle `kerntune export --bundle` wrote, eagerly and captured in a CUDA
graph; a bundle with a planted wrong kernel and one from another driver fall back to torch's op
and still return the right tensor. Skips (exit 0, "skipped") without a CUDA GPU.

    KERNTUNED=build/bin/kerntuned KERNTUNE=build/bin/kerntune KERNTUNE_FAMILIES=kernel_templates \
        python3 tests/gpu/torch_routing_test.py [--out DIR] [--budget 12]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "client", "python"))
sys.path.insert(0, os.path.join(ROOT, "client", "python", "tests"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

FAILURES = []


def expect(condition: bool, what: str) -> None:
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        FAILURES.append(what)


class Model(torch.nn.Module):
    """One block of each family: a projection, a gated MLP, causal self-attention."""

    def __init__(self, hidden: int, mlp: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = torch.nn.Linear(hidden, hidden, bias=False)
        self.w1 = torch.nn.Parameter(torch.randn(mlp, hidden) / hidden ** 0.5)
        self.w2 = torch.nn.Parameter(torch.randn(mlp, hidden) / hidden ** 0.5)
        self.down = torch.nn.Linear(mlp, hidden, bias=False)

    def forward(self, x):
        import kerntune.torch as kt
        b, s, h = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4).contiguous().unbind(0)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, s, h))
        return x + self.down(kt.gated_mlp(x, self.w1, self.w2))


def relative_error(got, want) -> float:
    return float((got.float() - want.float()).norm() / want.float().norm())


def run(args) -> None:
    import kerntune.torch as kt
    from daemon import Daemon

    torch.manual_seed(0)
    model = Model(args.hidden, args.mlp, args.heads).to("cuda", torch.bfloat16).eval()
    x = torch.randn(1, args.tokens, args.hidden, device="cuda", dtype=torch.bfloat16)
    folder = tempfile.mkdtemp(prefix="kerntune-torch-gpu-")
    shapes = os.path.join(folder, "shapes.jsonl")

    with torch.no_grad():
        want = model(x)
        with kt.record(shapes):
            model(x)
    lines = [json.loads(line) for line in open(shapes)]
    families = sorted({line["family"] for line in lines if line["supported"]})
    expect(families == ["attention_fwd", "dual_gemm_silu", "gemm"], f"recorded the three families: {families}")
    expect(all(line["device"].startswith("NVIDIA") for line in lines), "recorded on the GPU")
    # The rest of the time: norms, copies, adds, and the GPU waiting on launches of a small model.
    total = sum(line["share"] for line in lines)
    expect(0 < total <= 1.0 and all(line["share"] > 0 for line in lines), f"shares sum to {total:.3f}")

    daemon = Daemon(seed=False, compile_threads=max(2, (os.cpu_count() or 2) - 2))
    try:
        cli = [os.environ["KERNTUNE"], "--server", daemon.url]
        started = time.time()
        tune = subprocess.run(cli + ["--json", "tune-all", shapes, "--budget-per-shape", str(args.budget)],
                              capture_output=True, text=True, timeout=900)
        print(tune.stderr[-3000:])
        expect(tune.returncode == 0, f"tune-all exit {tune.returncode} after {time.time() - started:.0f} s")
        batch = json.loads(tune.stdout) if tune.stdout.strip() else {"problems": []}
        for problem in batch["problems"]:
            print(f"      {problem['family']} {problem['shape']}: {problem['state']} {problem['answer']}")
        again = subprocess.run(cli + ["--json", "tune-all", shapes], capture_output=True, text=True, timeout=120)
        expect(again.returncode == 0 and all(p["state"] == "tuned" for p in json.loads(again.stdout)["problems"]),
               "a second tune-all skips every problem as tuned")

        with torch.no_grad(), kt.enable(server=daemon.url) as router:
            first = model(x)   # resolves, checks and times each routed problem
            second = model(x)  # the routes as they stand
        report = router.report()
        for row in report:
            print(f"      {row['problem']}: {row['route']} ({row['reason']}) first call {row['first_call_us']}")
        ours = [row for row in report if row["route"] == "ours"]
        expect(len(report) == len({row["problem"] for row in report}), "one report row per problem")
        expect(all(row["first_call_error"] is None or row["route"] == "torch" or
                   row["first_call_error"]["rel_l2"] < 0.01 for row in report), "routed first calls within tolerance")
        expect(relative_error(first, want) < 0.02 and relative_error(second, want) < 0.02,
               f"enabled model output vs torch: rel L2 {relative_error(second, want):.2e}")
        print(f"      {len(ours)} of {len(report)} problems run kerntune's kernels")

        bundle = os.path.join(folder, "bundle")
        export = subprocess.run(cli + ["export", "--bundle", bundle, "--shapes", shapes], capture_output=True,
                                text=True, timeout=120)
        print(export.stdout)
        expect(export.returncode == 0, "export --bundle")
        # Last (it leaves partly tuned retunes in the store): a batch cut short: --minutes cancels the daemon's batch, whose own jobs end cancelled.
        cut = subprocess.run(cli + ["--json", "tune-all", shapes, "--retune", "--budget-per-shape", "200",
                                    "--minutes", "0.05"], capture_output=True, text=True, timeout=300)
        states = [p["state"] for p in json.loads(cut.stdout)["problems"]] if cut.stdout.strip() else []
        expect(cut.returncode == 2 and "cancelled" in states and "reached: cancelling what is left" in cut.stderr,
               f"--minutes cancels the batch: exit {cut.returncode}, states {states}")
        shown = subprocess.run(cli + ["--json", "batch"], capture_output=True, text=True, timeout=60)
        listed = json.loads(shown.stdout)["batches"] if shown.returncode == 0 else []
        expect(len(listed) == 3 and listed[0]["status"] == "cancelled" and listed[0]["cancel_requested"],
               f"the daemon keeps the three batches, the newest cancelled: {[b['status'] for b in listed]}")
    finally:
        daemon.stop()

    # From the bundle, no daemon running: the same routes, eager and in a CUDA graph.
    with torch.no_grad(), kt.enable(bundle=bundle) as router:
        eager = model(x)
        static_x = x.clone()
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            model(static_x)  # warm-up on the capture stream
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(graph):
            captured = model(static_x)
        graph.replay()
        torch.cuda.synchronize()
    bundle_report = router.report()
    bundle_ours = sorted(row["problem"] for row in bundle_report if row["route"] == "ours")
    expect(relative_error(eager, want) < 0.02, f"bundle-enabled output vs torch: {relative_error(eager, want):.2e}")
    expect(relative_error(captured, eager) < 1e-3, f"graph replay vs eager: {relative_error(captured, eager):.2e}")
    calls = {row["problem"]: row["calls_ours"] for row in bundle_report}
    expect(all(calls[p] >= 3 for p in bundle_ours), f"routed problems ran ours eagerly and in the graph: {calls}")

    # A wrong kernel: the first routed entry's first scalar halved (a K, an S: a wrong answer,
    # never out of bounds). Its shape falls back with a warning, the tensor stays right.
    index = json.load(open(os.path.join(bundle, "bundle.json")))
    planted = copy.deepcopy(index)
    target = next((e for e in planted["entries"] if e.get("route") == "ours"), None)
    if target is None:
        expect(False, "no problem routed to kerntune's kernel: nothing to plant a wrong kernel in")
    else:
        for param in target["answer"]["launch"]["params"]:
            if param["type"] in ("i32", "f32") and param["value"] > 1:
                param["value"] = param["value"] // 2 if param["type"] == "i32" else param["value"] * 0.5
                break
        json.dump(planted, open(os.path.join(bundle, "bundle.json"), "w"))
        with warnings.catch_warnings(record=True) as caught, torch.no_grad(), \
                kt.enable(bundle=bundle, check_speed=False) as router:
            warnings.simplefilter("always")
            planted_out = model(x)
        wrong = [row for row in router.report() if "wrong result" in row["reason"]]
        expect(len(wrong) == 1, f"the planted kernel was caught on its first call: {[r['reason'] for r in wrong]}")
        expect(any("wrong result" in str(w.message) for w in caught), "with one warning")
        expect(relative_error(planted_out, want) < 0.02, "and the output is still right")

    # Another driver: refused shape by shape, with the reason.
    other = copy.deepcopy(index)
    for entry in other["entries"]:
        entry["answer"].setdefault("keys", {})["driver_version"] = 1
    json.dump(other, open(os.path.join(bundle, "bundle.json"), "w"))
    with torch.no_grad(), kt.enable(bundle=bundle) as router:
        model(x)
    reasons = [row["reason"] for row in router.report() if row["family"] in families]
    expect(all(row["route"] == "torch" for row in router.report()), "a bundle from another driver routes nothing")
    expect(any("tuned under driver 1" in r for r in reasons), f"and says why: {reasons[:1]}")

    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "torch-routing.json"), "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "budget": args.budget,
                       "shapes": lines, "batch": batch, "server_routes": report, "bundle_routes": bundle_report,
                       "failures": FAILURES}, f, indent=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="folder for torch-routing.json")
    parser.add_argument("--budget", type=int, default=12, help="variants measured per problem")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--mlp", type=int, default=2816)
    parser.add_argument("--heads", type=int, default=8)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU (torch.cuda.is_available() is False)")
        return 0
    run(args)
    print(f"{len(FAILURES)} failed" if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
