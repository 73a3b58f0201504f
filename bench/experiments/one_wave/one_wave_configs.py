#!/usr/bin/env python3
"""Every config of a GEMM template whose grid fills the GPU in one wave (LOW..SM_COUNT blocks) on a
shape: the pinned set for testing whether a skinny shape loses to cuBLAS by its tail wave (the
2026-11-27 H200 profiles showed our M=64 winners at 192 blocks on 132 SMs, cuBLAS at <= 132).
Evaluates the manifest's constraints and launch grid in Python, with Hopper's limits; the daemon
checks every pinned config again and names any it refuses.
Usage: one_wave_configs.py TEMPLATE M N K [LOW] > configs.json  (stdlib only)"""
import itertools, json, re, sys
from pathlib import Path

MANIFEST = Path(__file__).resolve().parents[3] / "kernel_templates/gemm/manifest.json"
HOPPER = dict(sm_count=132, smem_optin=232448, max_cluster=8, elem_bytes=2, max_threads=1024, max_regs_per_thread=255,
              regs_per_block=65536, sm=90)
FUNCTIONS = dict(cdiv=lambda a, b: -(-a // b), min=min, max=max,
                 pow2=lambda x: x > 0 and float(x).is_integer() and (int(x) & (int(x) - 1)) == 0)


def to_python(expr):
    """The manifest's C-like expressions as Python: && ||, and c ? a : b (innermost first)."""
    expr = expr.replace("&&", " and ").replace("||", " or ")
    ternary = re.compile(r"\(([^()?]+)\?((?:[^():]|\([^()]*\))+):((?:[^()]|\([^()]*\))+)\)")
    while True:
        expr, count = ternary.subn(r"((\2) if (\1) else (\3))", expr)
        if not count:
            return expr


def template_named(name):
    return next(t for t in json.load(open(MANIFEST))["templates"] if t["name"] == name)


def kept_configs(template, m, n, k, wanted=lambda config: True):
    """Every config of the template that `wanted` accepts and the manifest's constraints keep on a
    Hopper GPU, with the scope its expressions were evaluated in."""
    constraints = [compile(to_python(c), c, "eval") for c in template["constraints"]]
    axes = template["axes"]
    for values in itertools.product(*(axis["values"] for axis in axes.values())):
        config = dict(zip(axes, values))
        if not wanted(config):
            continue
        scope = dict(HOPPER, **FUNCTIONS, M=m, N=n, K=k, **config)
        if all(eval(c, {}, scope) for c in constraints):
            yield config, scope


def main():
    name, m, n, k = sys.argv[1], *map(int, sys.argv[2:5])
    low = int(sys.argv[5]) if len(sys.argv) > 5 else 100
    template = template_named(name)
    grid = [compile(to_python(g), g, "eval") for g in template["launch"]["grid"]]
    configs = []
    for config, scope in kept_configs(template, m, n, k):
        blocks = 1
        for g in grid:
            blocks *= int(eval(g, {}, scope))
        if low <= blocks <= HOPPER["sm_count"]:
            configs.append({"template": name, **config})
    print(f"{name} {m}x{n}x{k}: {len(configs)} one-wave configs", file=sys.stderr)
    json.dump(configs, sys.stdout, indent=0)


if __name__ == "__main__":
    main()
