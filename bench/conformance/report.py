"""The conformance sweep's Markdown: what ran where (device, driver, date, commit, seed), a summary
of the counts the targets are stated in, a table with one row per case, and every failure with
its reason. Rendered from the run header and the per-case records alone, so results.md can be
rebuilt from results.jsonl (`sweep.py --render DIR`)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Dict, Iterable, List, Optional

CHECK_ORDER = ["job_done", "cli_exit", "shape_as_asked", "best_answers", "launch_params", "kernel_correct",
               "not_slower", "no_crash_hang", "compiled", "kernel_download"]


def failed_checks(record: Dict[str, Any]) -> List[str]:
    return [name for name in CHECK_ORDER if (record.get("checks") or {}).get(name, {}).get("result") == "fail"]


def summarize(records: List[Dict[str, Any]]) -> Dict[str, Any]:
    ran = [r for r in records if r.get("status") not in ("not_run", "cut")]
    summary = {
        "cases_planned": len(records),
        "cases_run": len(ran),
        "cases_cut_or_not_run": len(records) - len(ran),
        "cases_passed": sum(1 for r in ran if not failed_checks(r)),
        "failed_jobs": sum(1 for r in ran if "job_done" in failed_checks(r)),
        "wrong_answers": sum(1 for r in ran if "kernel_correct" in failed_checks(r)),
        "slower_than_baseline": sum(1 for r in ran if "not_slower" in failed_checks(r)),
        "crash_or_hang_cases": sum(1 for r in ran if "no_crash_hang" in failed_checks(r)),
        "other_failures": sum(1 for r in ran if set(failed_checks(r)) - {"job_done", "kernel_correct", "not_slower",
                                                                       "no_crash_hang"}),
        "answers": dict(Counter((r.get("answer") or {}).get("source", "none") for r in ran)),
        "below_baseline_low": sum(1 for r in ran if (r.get("answer") or {}).get("at_least_baseline_low") is False),
        "space_empty": sum(1 for r in ran if r.get("space_empty")),
    }
    by_family: Dict[str, Dict[str, int]] = {}
    for r in records:
        row = by_family.setdefault(r["family"], {"planned": 0, "run": 0, "passed": 0, "failed_jobs": 0,
                                                 "wrong": 0, "slower": 0, "crash_hang": 0})
        row["planned"] += 1
        if r in ran:
            row["run"] += 1
            failed = failed_checks(r)
            row["passed"] += not failed
            row["failed_jobs"] += "job_done" in failed
            row["wrong"] += "kernel_correct" in failed
            row["slower"] += "not_slower" in failed
            row["crash_hang"] += "no_crash_hang" in failed
    summary["by_family"] = by_family
    return summary


def _us(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.1f}"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _speedup(answer: Dict[str, Any]) -> str:
    value, low, high = answer.get("speedup"), answer.get("speedup_low"), answer.get("speedup_high")
    if value is None:
        return "—"
    if low is None or high is None:
        return f"{value:.2f}×"
    return f"{value:.2f}× [{low:.2f}, {high:.2f}]"


def _checks_cell(record: Dict[str, Any]) -> str:
    checks = record.get("checks") or {}
    failed = failed_checks(record)
    if failed:
        return "FAIL: " + ", ".join(failed)
    passed = sum(1 for c in checks.values() if c.get("result") == "pass")
    return f"ok ({passed})" if checks else "—"


def render(header: Dict[str, Any], records: List[Dict[str, Any]]) -> str:
    summary = summarize(records)
    lines: List[str] = []
    env = header.get("environment", {})
    lines.append(f"# kerntune conformance sweep, part {header.get('part', '1/1')}")
    lines.append("")
    lines.append(f"- device: {env.get('device', '?')} (driver {env.get('driver', '?')}, {env.get('arch', '?')})")
    lines.append(f"- date: {header.get('started_at', '?')}; git commit: {header.get('commit', '?')}")
    lines.append(f"- seed: {header.get('seed')} (reproduce: `{header.get('reproduce', '')}`)")
    lines.append(f"- mode: {header.get('mode', 'tune')}; shapes per family: {header.get('shapes_per_family')}; "
                 f"caps: {header.get('caps')}; deadline {header.get('deadline_seconds')} s; "
                 f"finished after {header.get('elapsed_seconds', '?')} s"
                 + ("; stopped early: " + header["stopped"] if header.get("stopped") else ""))
    if header.get("torch"):
        lines.append(f"- checker: {header['torch']}")
    lines.append("")
    lines.append("## Summary")
    lines.append("")
    lines.append(f"- cases: {summary['cases_planned']} planned, {summary['cases_run']} run, "
                 f"{summary['cases_cut_or_not_run']} cut by the deadline or not started; "
                 f"{summary['cases_passed']} passed every check")
    lines.append(f"- failed jobs: {summary['failed_jobs']}; wrong answers: {summary['wrong_answers']}; "
                 f"slower than the baseline: {summary['slower_than_baseline']}; cases with crashed/hung variants: "
                 f"{summary['crash_or_hang_cases']}; other failed checks: {summary['other_failures']}")
    answers = ", ".join(f"{k} {v}" for k, v in sorted(summary["answers"].items())) or "none"
    lines.append(f"- answers: {answers}; answers of ours whose time is above the baseline's lower interval "
                 f"bound (the stricter target): {summary['below_baseline_low']}; shapes where every variant "
                 f"of ours was pruned (the baseline answers alone): {summary['space_empty']}")
    lines.append("")
    lines.append("| family | planned | run | passed | failed jobs | wrong answers | slower | crash/hang |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for family, row in summary["by_family"].items():
        lines.append(f"| {family} | {row['planned']} | {row['run']} | {row['passed']} | {row['failed_jobs']} | "
                     f"{row['wrong']} | {row['slower']} | {row['crash_hang']} |")
    findings = header.get("findings") or []
    if findings:
        lines.append("")
        lines.append("## Run-level findings")
        lines.append("")
        for finding in findings:
            lines.append(f"- **{finding.get('result', '?')}** {_cell(finding.get('what', ''))}: "
                         f"{_cell(finding.get('why', ''))}")
    lines.append("")
    lines.append("## Cases")
    lines.append("")
    lines.append("| case | kind | shape | dtype | search | budget | client | job | status | answer | ours µs | "
                 "baseline µs | baseline / ours | user launch µs | max err / bound | checks |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in records:
        answer = r.get("answer") or {}
        correctness = r.get("correctness") or {}
        ratio = correctness.get("max_error_over_bound")
        client = r["client"] + (f" ({r['shape_syntax']})" if r["client"] == "cli" else "")
        shape = "×".join(f"{k}{v}" if k in ("CAUSAL",) else str(v) for k, v in r["shape"].items())
        lines.append("| " + " | ".join(_cell(x) for x in [
            r["id"], r["kind"], shape, r["dtype"], r["search"], r["budget"] or "all", client,
            r.get("job_id") or "—", r.get("status", "?"), answer.get("source", "—"), _us(answer.get("median_us")),
            _us(answer.get("baseline_median_us")), _speedup(answer), _us(r.get("user_launch_us")),
            "—" if ratio is None else f"{ratio:.2f}", _checks_cell(r)]) + " |")
    failures = [r for r in records if failed_checks(r)]
    if failures:
        lines.append("")
        lines.append("## Failures")
        lines.append("")
        for r in failures:
            shape = ",".join(f"{k}={v}" for k, v in r["shape"].items())
            lines.append(f"- `{r['id']}` {r['family']} {shape} {r['dtype']} {r['search']}/{r['budget']} via "
                         f"{r['client']} (job {r.get('job_id')}):")
            for name in failed_checks(r):
                lines.append(f"  - {name}: {_cell(r['checks'][name].get('why', ''))}")
    inspect = [r for r in records if (r.get("variants") or {}).get("findings")]
    if inspect:
        lines.append("")
        lines.append("## Variants to inspect (not measured, not pruned)")
        lines.append("")
        for r in inspect:
            for v in r["variants"]["findings"][:6]:
                lines.append(f"- `{r['id']}` job {r.get('job_id')} variant {v.get('id')} {v.get('status')} "
                             f"({v.get('failed_gate') or '-'}): {v.get('template')} {_cell(v.get('config'))} — "
                             f"{_cell((v.get('reason') or '')[:200])}")
            extra = len(r["variants"]["findings"]) - 6
            if extra > 0:
                lines.append(f"- `{r['id']}`: {extra} more")
    lines.append("")
    return "\n".join(lines)


def read_records(path: str) -> List[Dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def render_files(header: Dict[str, Any], records: Iterable[Dict[str, Any]]) -> str:
    return render(header, list(records))
