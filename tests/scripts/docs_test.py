#!/usr/bin/env python3
"""The documentation's house rules: the README stays a user's page (at most 350 lines), every
relative Markdown link of README.md and docs/*.md leads to a file that exists (and, into a
Markdown file, to a heading or an explicit anchor there), no text names an internal tracker
number, and the benchmark programs find each pair of table markers exactly once (they rewrite
what lies between them).

    docs_test.py [SOURCE_ROOT]      (default: the repository holding this script)
"""
import glob
import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README_MAX_LINES = 350
TABLE_MARKERS = ("gemm-table", "attention-table", "dual-gemm-table")
ISSUE_NUMBER = re.compile(r"issue ?[0-9]", re.IGNORECASE)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ANCHOR = re.compile(r"""\b(?:id|name)\s*=\s*["']([^"']+)["']""")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text):
    """The lines outside fenced code blocks, with inline code spans blanked: a link or a
    tracker number quoted as code is an example, not a link of the page."""
    out, in_fence = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
            out.append("")
            continue
        out.append("" if in_fence else re.sub(r"`[^`]*`", "``", line))
    return out


def slug(heading):
    """The anchor a heading gets on GitHub: inline markup dropped, lower case, punctuation
    removed (word characters, hyphens and spaces kept), spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    """Every anchor a Markdown file offers: its headings' slugs (a repeated one numbered as
    GitHub numbers it) and explicit id/name attributes."""
    found, seen, in_fence = set(), {}, False
    for line in text.split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        found.update(EXPLICIT_ANCHOR.findall(line))
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def broken_links(path, text, read=read_text):
    """'file:line: target (why)' for each relative link of the file that leads nowhere."""
    problems = []
    for number, line in enumerate(prose_lines(text), 1):
        for target in LINK.findall(line):
            if SCHEME.match(target):
                continue  # http:, https:, mailto: are not this repository's files
            file_part, _, anchor = target.partition("#")
            where = f"{os.path.relpath(path, ROOT)}:{number}: {target}"
            if not file_part:  # an anchor of this page
                if anchor not in anchors(text):
                    problems.append(f"{where} (no heading or anchor '{anchor}' here)")
                continue
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(resolved):
                problems.append(f"{where} (no such file)")
            elif anchor and resolved.endswith(".md") and anchor not in anchors(read(resolved)):
                problems.append(f"{where} (no heading or anchor '{anchor}' there)")
    return problems


def issue_numbers(path, text):
    return [f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}"
            for number, line in enumerate(text.split("\n"), 1) if ISSUE_NUMBER.search(line)]


def marker_problems(texts):
    """texts: {path: text}. Each marker pair must appear exactly once over all the files, begin
    before end in one file."""
    problems = []
    for name in TABLE_MARKERS:
        begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
        begins = [(p, t.count(begin)) for p, t in texts.items() if begin in t]
        ends = [(p, t.count(end)) for p, t in texts.items() if end in t]
        if sum(c for _, c in begins) != 1 or sum(c for _, c in ends) != 1:
            problems.append(f"{name}: begin in {begins or 'no file'}, end in {ends or 'no file'}; "
                            "each must appear exactly once")
            continue
        (begin_path, _), (end_path, _) = begins[0], ends[0]
        if begin_path != end_path:
            problems.append(f"{name}: begin in {begin_path}, end in {end_path}")
        elif texts[begin_path].index(end) < texts[begin_path].index(begin):
            problems.append(f"{name}: end before begin in {begin_path}")
    return problems


def documentation(root):
    paths = [os.path.join(root, "README.md")]
    paths += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    return {p: read_text(p) for p in paths}


class HouseRules(unittest.TestCase):
    """The repository's own README.md and docs/*.md."""

    @classmethod
    def setUpClass(cls):
        cls.texts = documentation(ROOT)

    def test_readme_is_at_most_350_lines(self):
        lines = self.texts[os.path.join(ROOT, "README.md")].count("\n")
        self.assertLessEqual(lines, README_MAX_LINES,
                             "README.md is for users; move depth to docs/")

    def test_every_relative_link_resolves(self):
        problems = [p for path, text in self.texts.items() for p in broken_links(path, text)]
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_no_internal_issue_numbers(self):
        problems = [p for path, text in self.texts.items() for p in issue_numbers(path, text)]
        self.assertEqual(problems, [], "say what is meant instead:\n" + "\n".join(problems))

    def test_each_table_marker_pair_appears_once(self):
        problems = marker_problems(self.texts)
        self.assertEqual(problems, [], "\n" + "\n".join(problems))


class Checker(unittest.TestCase):
    """The checks themselves catch what they are for."""

    def test_a_broken_link_and_a_missing_anchor_are_reported(self):
        page = os.path.join(ROOT, "docs", "page.md")
        text = "# Title\n\nSee [x](nowhere.md), [y](../README.md), [z](#title), [w](#nothing).\n"
        problems = broken_links(page, text, read=lambda p: text)
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("nowhere.md (no such file)", problems[0])
        self.assertIn("#nothing (no heading or anchor 'nothing' here)", problems[1])

    def test_links_in_code_are_not_links(self):
        page = os.path.join(ROOT, "docs", "page.md")
        text = "`[x](nowhere.md)`\n```\n[y](nowhere.md)\n```\n[web](https://example.com/a)\n"
        self.assertEqual(broken_links(page, text), [])

    def test_slugs_follow_github(self):
        self.assertEqual(slug("Registering a family over the API"),
                         "registering-a-family-over-the-api")
        self.assertEqual(slug("`POST /v1/jobs`"), "post-v1jobs")
        self.assertEqual(anchors("# A\n# A\n<a id=\"x\"></a>"), {"a", "a-1", "x"})

    def test_issue_numbers_are_found(self):
        self.assertEqual(len(issue_numbers(ROOT, "as Issue 14 asked\nissue4's set\nissues\n")), 2)

    def test_a_missing_or_doubled_marker_is_reported(self):
        good = "<!-- gemm-table:begin -->\nt\n<!-- gemm-table:end -->\n"
        other = ("<!-- attention-table:begin -->\n<!-- attention-table:end -->\n"
                 "<!-- dual-gemm-table:begin -->\n<!-- dual-gemm-table:end -->\n")
        self.assertEqual(marker_problems({"a": good, "b": other}), [])
        self.assertEqual(len(marker_problems({"a": good, "b": good + other})), 1)
        self.assertEqual(len(marker_problems({"a": other})), 1)
        swapped = "<!-- gemm-table:end -->\n<!-- gemm-table:begin -->\n"
        self.assertIn("end before begin", marker_problems({"a": swapped, "b": other})[0])


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        ROOT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
