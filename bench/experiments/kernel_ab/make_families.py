#!/usr/bin/env python3
"""Builds a families folder holding every family of NEW, plus, for each template named in
--templates, the same template compiled from the OLD sources under the name <template>_before.
One job then times a config of both (the final comparison interleaves them).

  make_families.py OLD_TEMPLATES NEW_TEMPLATES OUT --templates gemm/wgmma_tma_ws,...
"""
import argparse, json, os, shutil

parser = argparse.ArgumentParser()
parser.add_argument("old")
parser.add_argument("new")
parser.add_argument("out")
parser.add_argument("--templates", required=True, help="family/template,... to pair")
args = parser.parse_args()

shutil.rmtree(args.out, ignore_errors=True)
shutil.copytree(args.new, args.out)
pairs = [item.split("/") for item in args.templates.split(",")]
for family in sorted({family for family, _ in pairs}):
    manifest_path = os.path.join(args.out, family, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    added = []
    for template in manifest["templates"]:
        if [family, template["name"]] not in pairs:
            continue
        before = dict(template)
        before["name"] = template["name"] + "_before"
        stem, ext = os.path.splitext(template["source"])
        before["source"] = stem + "_before" + ext
        # The old source, and its family headers that changed, under _before names.
        shutil.copy(os.path.join(args.old, family, template["source"]),
                    os.path.join(args.out, family, before["source"]))
        added.append(before)
    manifest["templates"] += added
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
    print(f"{family}: paired {', '.join(t['name'] for t in added)}")
