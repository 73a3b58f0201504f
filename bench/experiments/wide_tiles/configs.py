#!/usr/bin/env python3
"""The pinned set for the 176- and 192-wide wgmma tiles on a large shape: every config of
wgmma_tma_ws and wgmma_pingpong with BN 176 or 192 and a ring of 4 or more stages (what the
narrower tile is for) that the manifest keeps (GROUP 8, forward K order: those axes moved nothing
at 4096^3 and 8192^3), plus the given incumbent configs, so that
one job times them all and compares its best against cublasLt in its interleaved final round.
Usage: configs.py M N K [INCUMBENT.json] > configs.json  (stdlib only)"""
import json, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "one_wave"))
from one_wave_configs import MANIFEST, kept_configs  # noqa: E402


def wanted(config):
    return (config["BN"] in (176, 192) and config["STAGES"] >= 4 and config["GROUP"] == 8
            and not config.get("K_ORDER", 0))


def main():
    m, n, k = map(int, sys.argv[1:4])
    configs = json.load(open(sys.argv[4])) if len(sys.argv) > 4 else []
    for template in json.load(open(MANIFEST))["templates"]:
        if template["name"] in ("wgmma_tma_ws", "wgmma_pingpong"):
            configs += [{"template": template["name"], **config}
                        for config, _ in kept_configs(template, m, n, k, wanted)]
    print(f"{m}x{n}x{k}: {len(configs)} configs", file=sys.stderr)
    json.dump(configs, sys.stdout, indent=0)


if __name__ == "__main__":
    main()
