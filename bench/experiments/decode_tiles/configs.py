#!/usr/bin/env python3
"""The pinned set for wgmma_tma_ws's decode tiles on a skinny shape (M <= 256): every kept config
with BM 64, BN 32 (M <= 64), 64 or 128 and 4+ stages (two CTAs of a cluster along M can share
one weight tile by multicast, each with its own 64 tokens, as cuBLAS's best M=128 kernels do),
GROUP 8, forward K, plus the given incumbent configs, so that one job times them all and
compares its best against cublasLt.
Usage: configs.py M N K [INCUMBENT.json...] > configs.json  (stdlib only)"""
import json, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "one_wave"))
from one_wave_configs import kept_configs, template_named  # noqa: E402


def wanted(config):
    return (config["BM"] == 64 and config["BN"] in (32, 64, 128) and config["GROUP"] == 8
            and config["STAGES"] >= 4 and not config["K_ORDER"])


def main():
    m, n, k = map(int, sys.argv[1:4])
    configs = []
    for path in sys.argv[4:]:
        configs += [c for c in json.load(open(path)) if c not in configs]
    template = template_named("wgmma_tma_ws")
    configs += [{"template": "wgmma_tma_ws", **config}
                for config, _ in kept_configs(template, m, n, k, wanted)]
    print(f"{m}x{n}x{k}: {len(configs)} configs", file=sys.stderr)
    json.dump(configs, sys.stdout, indent=0)


if __name__ == "__main__":
    main()
