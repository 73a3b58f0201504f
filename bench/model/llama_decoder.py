#!/usr/bin/env python3
"""A Llama-style decoder stack in plain torch (hidden 4096, gated-SiLU MLP 14336, 32 heads of
128, random weights, bf16) run with plain torch, with TunableOp and with kerntune, in one process
on one GPU, interleaved: prefill (batch 1, 2048 tokens, eager) and decode steps (batch 1 and 16
over a 1024-token cache, each captured in a CUDA graph).

The three steps a user takes, in order: `kerntune.torch.record` over one prefill and
`--decode-steps` decode steps of each batch (so each problem's share is its share of a serving
mix), `kerntune tune-all` on a running kerntuned (`--budget-per-shape`, `--minutes`), then
`kerntune.torch.enable(server=...)`. TunableOp (`torch.cuda.tunable`) is tuned on the same ops
beforehand. Each variant's output is checked against plain torch's; each routed op's first call
is timed against torch's own op by the router (its report is written out).

    python3 bench/model/llama_decoder.py --server http://127.0.0.1:8080 --kerntune build/bin/kerntune \
        --out DIR [--layers 4] [--budget-per-shape 16] [--minutes 6] [--rounds 30]

Writes DIR/llama-decoder.json (every sample, the routes, the tune-all summary) and
DIR/llama-decoder.md (the table).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "client", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import kerntune.torch as kt  # noqa: E402


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * self.weight


class Layer(torch.nn.Module):
    def __init__(self, hidden: int, mlp: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.norm1, self.norm2 = RMSNorm(hidden), RMSNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.o = torch.nn.Linear(hidden, hidden, bias=False)
        self.gate = torch.nn.Linear(hidden, mlp, bias=False)
        self.up = torch.nn.Linear(hidden, mlp, bias=False)
        self.down = torch.nn.Linear(mlp, hidden, bias=False)

    def attention(self, x, cache=None):
        b, s, h = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if cache is None:  # prefill: causal self-attention over the prompt, [B,H,S,D]
            q, k, v = qkv.contiguous().unbind(0)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # decode: the new token's query over the cached keys and values
            q = qkv[0]
            a = F.scaled_dot_product_attention(q, cache[0], cache[1])
        return self.o(a.transpose(1, 2).reshape(b, s, h))

    def forward(self, x, cache=None):
        x = x + self.attention(self.norm1(x), cache)
        y = self.norm2(x)
        return x + self.down(kt.gated_mlp(y, self.gate.weight, self.up.weight))


class Decoder(torch.nn.Module):
    def __init__(self, layers: int, hidden: int, mlp: int, heads: int):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer(hidden, mlp, heads) for _ in range(layers))

    def forward(self, x, caches=None):
        for i, layer in enumerate(self.layers):
            x = layer(x, caches[i] if caches is not None else None)
        return x


def rel_l2(got, want) -> float:
    return float((got.float() - want.float()).norm() / want.float().norm())


def graph_of(run: Callable[[], Any]):
    """run captured in a CUDA graph (after a warm-up on the capture stream): (graph, output)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = run()
    return graph, out


def timed_us(run: Callable[[], Any]) -> float:
    """GPU time of one step: queued behind a spin kernel, so the events time the GPU's work and
    not a gap while the CPU starts the step (the same for every variant)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(2_000_000)
    start.record()
    run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3


def ratio_interval(base: List[float], other: List[float], draws: int = 2000) -> Dict[str, float]:
    """median(base) / median(other) with a bootstrap 95% interval (rounds resampled)."""
    rng = random.Random(7)
    value = statistics.median(base) / statistics.median(other)
    ratios = []
    for _ in range(draws):
        b = [rng.choice(base) for _ in base]
        o = [rng.choice(other) for _ in other]
        ratios.append(statistics.median(b) / statistics.median(o))
    ratios.sort()
    return {"value": value, "low": ratios[int(0.025 * draws)], "high": ratios[int(0.975 * draws) - 1]}


def tunable(on: bool) -> None:
    torch.cuda.tunable.enable(on)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--kerntune", required=True, help="the kerntune CLI")
    parser.add_argument("--out", required=True)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--mlp", type=int, default=14336)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--prompt", type=int, default=2048)
    parser.add_argument("--context", type=int, default=1024, help="cached tokens a decode step attends to")
    parser.add_argument("--decode-batches", default="1,16")
    parser.add_argument("--decode-steps", type=int, default=64, help="decode steps per batch in the recording")
    parser.add_argument("--budget-per-shape", type=int, default=16)
    parser.add_argument("--minutes", type=float, default=6)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--skip-tune", action="store_true", help="use what the daemon has tuned")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    device = torch.cuda.get_device_name(0)
    batches = [int(b) for b in args.decode_batches.split(",")]
    model = Decoder(args.layers, args.hidden, args.mlp, args.heads).to("cuda", torch.bfloat16).eval()
    for p in model.parameters():
        if p.dim() == 2:
            torch.nn.init.normal_(p, std=args.hidden ** -0.5)
    head_dim = args.hidden // args.heads
    prompt = torch.randn(1, args.prompt, args.hidden, device="cuda", dtype=torch.bfloat16)
    tokens = {b: torch.randn(b, 1, args.hidden, device="cuda", dtype=torch.bfloat16) for b in batches}
    caches = {b: [(torch.randn(b, args.heads, args.context, head_dim, device="cuda", dtype=torch.bfloat16),
                   torch.randn(b, args.heads, args.context, head_dim, device="cuda", dtype=torch.bfloat16))
                  for _ in range(args.layers)] for b in batches}
    report: Dict[str, Any] = {"device": device, "torch": torch.__version__, "args": vars(args),
                              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

    with torch.inference_mode():
        # 1. Record.
        shapes = os.path.join(args.out, "shapes.jsonl")
        with kt.record(shapes):
            model(prompt)
            for b in batches:
                for _ in range(args.decode_steps):
                    model(tokens[b], caches[b])
        report["shapes"] = [json.loads(line) for line in open(shapes)]
        # 2. Tune them all.
        if not args.skip_tune:
            started = time.time()
            tune = subprocess.run([args.kerntune, "--server", args.server, "--json", "tune-all", shapes,
                                   "--budget-per-shape", str(args.budget_per_shape), "--minutes", str(args.minutes)],
                                  capture_output=True, text=True)
            print(tune.stderr[-4000:], flush=True)
            report["tune_all"] = {"exit": tune.returncode, "seconds": time.time() - started,
                                  "summary": json.loads(tune.stdout) if tune.stdout.strip() else None}
        with open(os.path.join(args.out, "llama-decoder.json"), "w") as f:
            json.dump(report, f, indent=1, default=str)  # replaced at the end
        # TunableOp, tuned on the same ops.
        torch.cuda.tunable.set_filename(os.path.join(args.out, "tunableop_results.csv"))
        tunable(True)
        torch.cuda.tunable.tuning_enable(True)
        started = time.time()
        model(prompt)
        for b in batches:
            model(tokens[b], caches[b])
        torch.cuda.synchronize()
        torch.cuda.tunable.tuning_enable(False)
        report["tunableop_tuning_seconds"] = time.time() - started
        tunable(False)

        # 3. Run with them. The router is a mode entered for kerntune's runs only: plain torch and
        # TunableOp run with no mode at all, so they pay nothing for it.
        router = kt.Router(kt.ServerSource(args.server))

        def with_router(run):
            def go():
                with router:
                    return run()
            return go

        def with_tunable(run):
            def go():
                tunable(True)
                try:
                    return run()
                finally:
                    tunable(False)
            return go

        steps = {"prefill b1 s%d" % args.prompt: lambda: model(prompt)}
        for b in batches:
            steps[f"decode b{b}"] = (lambda b=b: model(tokens[b], caches[b]))
        variants: Dict[str, Dict[str, Callable[[], Any]]] = {}
        outputs: Dict[str, Dict[str, Any]] = {}
        for name, run in steps.items():
            runs = {"torch": run, "tunableop": with_tunable(run), "kerntune": with_router(run)}
            runs["kerntune"]()  # each routed problem's first call: resolved, checked, timed vs torch
            if name.startswith("decode"):  # one CUDA graph per variant
                captured = {v: graph_of(go) for v, go in runs.items()}
                variants[name] = {v: (lambda g=g: g.replay()) for v, (g, _) in captured.items()}
                for graph, _ in captured.values():
                    graph.replay()
                torch.cuda.synchronize()
                outputs[name] = {v: out for v, (_, out) in captured.items()}
            else:
                variants[name] = runs
                outputs[name] = {v: go() for v, go in runs.items()}

        # Interleaved timing: every round times each variant of each step once, in a shuffled order.
        samples: Dict[str, Dict[str, List[float]]] = {n: {v: [] for v in vs} for n, vs in variants.items()}
        for name, vs in variants.items():
            for go in vs.values():
                go()
                go()
        rng = random.Random(11)
        for _ in range(args.rounds):
            for name, vs in variants.items():
                order = list(vs)
                rng.shuffle(order)
                for v in order:
                    samples[name][v].append(timed_us(vs[v]))

    # The same model in fp32: how far each bf16 variant is from the exact answer, plain torch's
    # own bf16 error beside ours.
    with torch.inference_mode():
        exact = copy.deepcopy(model).float()
        reference = {"prefill b1 s%d" % args.prompt: exact(prompt.float())}
        for b in batches:
            reference[f"decode b{b}"] = exact(tokens[b].float(), [(k.float(), v.float()) for k, v in caches[b]])
        del exact
    rows = []
    for name in variants:
        torch_out = outputs[name]["torch"]
        row = {"step": name, "median_us": {v: statistics.median(s) for v, s in samples[name].items()},
               "kerntune_over_torch": ratio_interval(samples[name]["torch"], samples[name]["kerntune"]),
               "kerntune_over_tunableop": ratio_interval(samples[name]["tunableop"], samples[name]["kerntune"]),
               "tunableop_over_torch": ratio_interval(samples[name]["torch"], samples[name]["tunableop"]),
               "rel_l2_vs_torch": {v: rel_l2(o, torch_out) for v, o in outputs[name].items()},
               "rel_l2_vs_fp32": {v: rel_l2(o, reference[name]) for v, o in outputs[name].items()}}
        rows.append(row)
    report["steps"] = rows
    report["samples_us"] = samples
    report["routes"] = router.report()
    router.close()
    with open(os.path.join(args.out, "llama-decoder.json"), "w") as f:
        json.dump(report, f, indent=1, default=str)

    def interval(r):
        return f"{r['value']:.3f}x [{r['low']:.3f}, {r['high']:.3f}]"

    lines = [f"{device}, torch {torch.__version__}, {args.layers} layers, hidden {args.hidden}, MLP {args.mlp}, "
             f"{args.heads} heads; {args.rounds} interleaved rounds; tune-all budget {args.budget_per_shape} "
             f"per shape, at most {args.minutes} min", "",
             "| step | torch | TunableOp | kerntune | kerntune / torch | kerntune / TunableOp | rel L2 vs torch | rel L2 vs fp32: torch, kerntune |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        m = row["median_us"]
        lines.append(f"| {row['step']} | {m['torch']:.1f} us | {m['tunableop']:.1f} us | {m['kerntune']:.1f} us | "
                     f"{interval(row['kerntune_over_torch'])} | {interval(row['kerntune_over_tunableop'])} | "
                     f"{row['rel_l2_vs_torch']['kerntune']:.1e} | {row['rel_l2_vs_fp32']['torch']:.1e}, "
                     f"{row['rel_l2_vs_fp32']['kerntune']:.1e} |")
    lines += ["", "| problem | route | why | first call: ours / torch us |", "| --- | --- | --- | --- |"]
    for route in report["routes"]:
        t = route["first_call_us"]
        lines.append(f"| {route['problem']} | {route['route']} | {route['reason']} | "
                     f"{'%.1f / %.1f' % (t['ours'], t['torch']) if t else '-'} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "llama-decoder.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
