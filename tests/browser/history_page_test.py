#!/usr/bin/env python3
"""The history page in a real headless browser (Debian's Chromium, driven by Selenium through
chromedriver) against a real kerntuned on loopback whose store kt_seed_store filled with
finished jobs and measured variants, plus one live compile job submitted here.

Checks: every page loads with nothing logged at SEVERE in the browser console; the job page's
plots have one point per measured variant (scatter, convergence) and one bar per outcome; the
variant table lists every variant that reached the gates, sorts, and a click opens a variant
with its compile log; the jobs list filters by GPU model and follows the live job to `done`;
the shape browser lists every tuned problem; a live job's progress reaches the job page and the
jobs list over its event stream (GET /v1/jobs/{id}/events).

Run by ctest (HistoryPage.Browser), which sets KERNTUNED, KT_SEED_STORE and KERNTUNE_FAMILIES.
KERNTUNE_SCREENSHOT=FILE also saves the job page as a PNG (see the README).
"""

from __future__ import annotations

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "client", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "client", "python", "tests"))

import kerntune  # noqa: E402
from daemon import Daemon  # noqa: E402

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as error:  # scripts/install-deps.sh installs python3-selenium
    sys.exit(f"history page test: {error}; run scripts/install-deps.sh (python3-selenium, chromium, chromium-driver)")

CHROMIUM = os.environ.get("KERNTUNE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("KERNTUNE_CHROMEDRIVER", "/usr/bin/chromedriver")
H100 = "NVIDIA H100 80GB HBM3"


def start_browser() -> "webdriver.Chrome":
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1500,1100", "--disable-extensions", "--no-first-run"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


class HistoryPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.daemon = Daemon()
        cls.seed = cls.daemon.seed
        cls.client = kerntune.Client(cls.daemon.url)
        cls.browser = start_browser()
        cls.browser.set_page_load_timeout(60)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.browser.quit()
        cls.daemon.stop()

    # ---- helpers --------------------------------------------------------------------------

    def open(self, fragment: str) -> None:
        """Loads the page at #fragment and waits until its view has drawn."""
        self.js("if (document.body) delete document.body.dataset.ready")  # a hash change keeps the page
        if self.js("return location.hash") == f"#{fragment}":
            self.browser.refresh()  # the same URL again fires no hash change: nothing would redraw
        else:
            self.browser.get(f"{self.daemon.url}/#{fragment}")
        WebDriverWait(self.browser, 30).until(
            lambda b: b.execute_script("return document.body.dataset.ready") in (f"#{fragment}", "error"))
        self.assertEqual(self.browser.execute_script("return document.body.dataset.ready"), f"#{fragment}",
                         self.browser.find_element(By.ID, "view").text)

    def js(self, script: str):
        return self.browser.execute_script(script)

    def assert_console_clean(self) -> None:
        severe = [e for e in self.browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        self.assertEqual(severe, [], "browser console errors")

    def rendered_points(self, plot: str, layer: str = "scatterlayer") -> int:
        return self.js(f"return document.querySelectorAll('#{plot} .{layer} .point').length")

    # ---- the pages ------------------------------------------------------------------------

    def test_job_page_plots_table_and_details(self) -> None:
        outcomes = self.seed["main_job_outcomes"]
        self.open(f"/jobs/{self.seed['main_job']}")
        measured = outcomes["measured"]
        self.assertEqual(self.rendered_points("plot-scatter"), measured)
        self.assertEqual(self.rendered_points("plot-convergence"), measured)
        # The Pareto front is its own trace, non-empty and a strict subset.
        front = self.js("return document.getElementById('plot-scatter').data[1].x.length")
        self.assertTrue(0 < front < measured, front)
        # Marker size follows the footprint: not all equal.
        sizes = self.js("return document.getElementById('plot-scatter').data[0].marker.size")
        self.assertGreater(len(set(sizes)), 1)
        # The baseline: a reference line at the job's reference time.
        self.assertEqual(self.js("return document.getElementById('plot-scatter').layout.shapes[0].x0"), 909.1)
        # Convergence: best so far never rises.
        best = self.js("return document.getElementById('plot-convergence').data[0].y")
        self.assertEqual(best, sorted(best, reverse=True))
        # One bar per outcome, with the seeded counts.
        self.assertEqual(self.rendered_points("plot-outcomes", "barlayer"), len(outcomes))
        bars = self.js("const d = document.getElementById('plot-outcomes').data[0]; return [d.x, d.y]")
        self.assertEqual(dict(zip(bars[0], bars[1])), outcomes)

        # No final comparison in this job: the Best card gives the first pass's ratio as such.
        self.assertIn("in the first pass (no final comparison, no interval)",
                      self.browser.find_element(By.ID, "job-best").text)

        # Staleness: the job was tuned with other family sources than the daemon serves now.
        staleness = self.browser.find_element(By.ID, "job-staleness")
        self.assertEqual(staleness.text, "stale")
        summary = self.browser.find_element(By.ID, "job-summary").text
        self.assertIn(self.seed["main_job_stale_key"] + " aaaaaaaaaaaa…", summary)
        # The warm start names the shape it came from and links to that job.
        warm = self.browser.find_element(By.ID, "job-warm-start")
        self.assertIn("1 seed(s) from", warm.text)
        link = warm.find_element(By.TAG_NAME, "a")
        self.assertTrue(link.get_attribute("href").endswith(f"#/jobs/{self.seed['main_job_warm_start_from']}"))
        self.assertIn("M=2048", link.text)

        # The table: every variant that reached the gates.
        rows = self.browser.find_elements(By.CSS_SELECTOR, "#variant-table tbody tr")
        self.assertEqual(len(rows), self.seed["main_job_total"] - outcomes["pruned"])
        # Sorting by median puts the fastest first; again, last (unknowns stay last).
        header = [th for th in self.browser.find_elements(By.CSS_SELECTOR, "#variant-table th") if th.text.startswith("median")][0]
        header.click()
        medians = [td.text for td in self.browser.find_elements(By.CSS_SELECTOR, "#variant-table tbody tr td:nth-child(5)")]
        numbers = [float(m) for m in medians if m != "–"]
        self.assertEqual(len(numbers), measured)
        self.assertEqual(numbers, sorted(numbers))
        self.assertTrue(all(m == "–" for m in medians[measured:]))

        # A click on a failed variant opens it, with its gate, reason and compile log.
        failed = [r for r in self.browser.find_elements(By.CSS_SELECTOR, "#variant-table tbody tr") if "compile_error" in r.text][0]
        failed.click()
        WebDriverWait(self.browser, 10).until(lambda b: b.find_elements(By.ID, "compile-log"))
        details = self.browser.find_element(By.ID, "variant-details").text
        self.assertIn("failed gate compile", details)
        self.assertIn("wgmma_fence", self.browser.find_element(By.ID, "compile-log").text)
        if os.environ.get("KERNTUNE_SCREENSHOT"):
            self.browser.find_element(By.ID, "close-details").click()
            self.browser.save_screenshot(os.environ["KERNTUNE_SCREENSHOT"])
        self.assert_console_clean()

    def test_the_variant_table_analyses_a_job(self) -> None:
        job = self.seed["main_job"]
        outcomes = self.seed["main_job_outcomes"]
        self.open(f"/jobs/{job}")
        gated = self.seed["main_job_total"] - outcomes["pruned"]
        # One column per config parameter, after the fixed ones.
        headers = [th.text.replace(" ▲", "").replace(" ▼", "")
                   for th in self.browser.find_elements(By.CSS_SELECTOR, "#variant-table th")]
        variants = self.client.variants(job, exclude_pruned=True)
        parameters = []
        for v in variants:
            parameters += [n for n in v.config if n not in parameters]
        self.assertEqual(headers[-len(parameters):], parameters)
        # Sorting by a parameter orders its column.
        column = headers.index(parameters[0]) + 1
        self.browser.find_elements(By.CSS_SELECTOR, "#variant-table th")[column - 1].click()
        cells = [td.text for td in self.browser.find_elements(
            By.CSS_SELECTOR, f"#variant-table tbody tr td:nth-child({column})")]
        known = [float(c) for c in cells if c != "–"]
        self.assertEqual(known, sorted(known))
        # The filter keeps the rows with every word: here the measured ones.
        box = self.browser.find_element(By.ID, "variant-filter")
        box.send_keys("measured\n")
        WebDriverWait(self.browser, 30).until(lambda b: len(b.find_elements(
            By.CSS_SELECTOR, "#variant-table tbody tr")) == outcomes["measured"])
        self.assertIn(f"{gated} that reached the gates", self.browser.find_element(By.ID, "variant-count").text)
        # The CSV download holds the rows shown, a column per parameter.
        csv_text = self.js("return fetch(document.getElementById('variants-csv').href).then(r => r.text())")
        lines = csv_text.strip().split("\n")
        self.assertEqual(len(lines), outcomes["measured"] + 1)
        for name in parameters:
            self.assertIn(name, lines[0].split(","))
        # Columns can be chosen: an unchecked one leaves the table, and stays out when it redraws.
        self.browser.find_element(By.CSS_SELECTOR, "#variant-columns summary").click()
        self.browser.find_element(By.CSS_SELECTOR, '#variant-columns input[data-column="footprint B"]').click()
        # The table redraws while this looks at it: a header cell that went away is looked up again.
        WebDriverWait(self.browser, 30, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda b: "footprint B" not in [th.text for th in b.find_elements(By.CSS_SELECTOR, "#variant-table th")])
        self.assertIn(parameters[0], [th.text.replace(" ▲", "").replace(" ▼", "")
                                      for th in self.browser.find_elements(By.CSS_SELECTOR, "#variant-table th")])
        # Which parameters matter: median time by the chosen parameter, a point per measured variant.
        self.assertEqual(self.js("return document.getElementById('plot-parameter').data[0].y.length"), outcomes["measured"])
        # The outcome chart is on a log scale (a large pruned count would hide the rest).
        self.assertEqual(self.js("return document.getElementById('plot-outcomes').layout.yaxis.type"), "log")
        # The progress bar counts the configs that ran, the pruned apart.
        progress = self.browser.find_element(By.ID, "job-progress").text
        self.assertIn(f"{gated - outcomes.get('unsupported_arch', 0)}/{gated - outcomes.get('unsupported_arch', 0)}", progress)
        self.assertIn(f"({outcomes['pruned'] + outcomes.get('unsupported_arch', 0)} pruned)", progress)
        # Times in the browser's time zone, the UTC text on hover.
        self.open("/")
        created = self.browser.find_elements(By.CSS_SELECTOR, "#jobs-table tbody tr td:last-child .time")
        self.assertTrue(created)
        self.assertRegex(created[0].get_attribute("title"), r"^\d{4}-\d\d-\d\dT")
        self.assertNotIn("T", created[0].text.split(",")[0])
        self.assert_console_clean()

    def test_a_compile_only_job_shows_its_compiles(self) -> None:
        job = self.client.submit("gemm", {"M": 96, "N": 96, "K": 96}, "bf16", mode="compile", arch="sm_90a", budget=3)
        self.client.wait(job.id, progress=False, timeout=240)
        self.open(f"/jobs/{job.id}")
        self.assertIn("nothing is measured", self.browser.find_element(By.ID, "compile-only-note").text)
        self.assertIn("Compile time vs registers",
                      self.js("return document.getElementById('plot-scatter').layout.title.text"))
        compiled = self.client.job(job.id).progress.by_status.get("compiled", 0)
        self.assertEqual(self.js("return document.getElementById('plot-scatter').data[0].x.length"), compiled)
        self.assertGreater(min(self.js("return document.getElementById('plot-scatter').data[0].y")), 0)  # registers
        self.assertIn("Spilled bytes", self.js("return document.getElementById('plot-convergence').layout.title.text"))
        self.assert_console_clean()

    def test_two_jobs_side_by_side(self) -> None:
        a, b = self.seed["main_job"], self.seed["small_job"]
        self.open(f"/jobs/{a}")
        self.browser.find_element(By.ID, "compare-with").send_keys(str(b) + "\n")
        WebDriverWait(self.browser, 30).until(
            lambda b_: b_.execute_script("return document.body.dataset.ready") in (f"#/compare?a={a}&b={b}", "error"))
        self.assertEqual(self.js("return document.body.dataset.ready"), f"#/compare?a={a}&b={b}",
                         self.browser.find_element(By.ID, "view").text)
        rows = self.browser.find_elements(By.CSS_SELECTOR, "#compare-table tbody tr")
        best = {}
        for job in (a, b):
            for v in self.client.variants(job, status=["measured"]):
                if v.median_us is not None:
                    best.setdefault(job, {})
                    if v.template not in best[job] or v.median_us < best[job][v.template]:
                        best[job][v.template] = v.median_us
        templates = set(best[a]) | set(best[b])
        self.assertEqual(len(rows), len(templates) + 1)  # and the best of all
        last = rows[-1].text
        self.assertIn("best of all", last)
        ratio = min(best[b].values()) / min(best[a].values())
        self.assertIn(f"{ratio:.3f}", last)
        for row in rows[:-1]:
            template = row.find_element(By.CSS_SELECTOR, "td").text
            self.assertIn(template, templates)
            if template in best[a] and template in best[b]:
                self.assertIn(f"{best[b][template] / best[a][template]:.3f}", row.text)
        self.assert_console_clean()

    def test_the_best_card_gives_the_final_comparison_with_its_interval(self) -> None:
        job = self.seed["small_job"]
        final = self.client.best("gemm", {"M": 2048, "N": 2048, "K": 2048}, "bf16", device=H100)
        self.open(f"/jobs/{job}")
        text = WebDriverWait(self.browser, 10).until(lambda b: b.find_element(By.ID, "best-final")).text
        raw = self.js(f"return fetch('/v1/jobs/{job}').then(r => r.json()).then(j => j.best.final)")
        self.assertIn(f"{raw['speedup']:.3f}× [{raw['speedup_low']:.3f}, {raw['speedup_high']:.3f}] (95% interval)", text)
        self.assertIn(f"vs the baseline's {raw['baseline_median_us']:.1f} µs", text)
        self.assertIn("ours is faster", text)
        self.assertEqual(final.variant_id, self.js(f"return fetch('/v1/jobs/{job}').then(r => r.json()).then(j => j.best.id)"))
        self.assert_console_clean()

    def test_jobs_list_filters_and_follows_a_live_job(self) -> None:
        live = self.client.submit("gemm", {"M": 128, "N": 128, "K": 128}, "bf16", mode="compile", arch="sm_90a", budget=2)
        self.open("/")
        ids = self.js("return [...document.querySelectorAll('#jobs-table tbody tr td:first-child')].map(td => td.textContent)")
        self.assertIn(str(live.id), ids)
        self.assertGreaterEqual(len(ids), 5)
        # Live progress: the list polls until the compile job is done.
        # (Rows read in one script: the poll redraws the table between WebDriver calls.)
        row_texts = "return [...document.querySelectorAll('#jobs-table tbody tr')].map(r => r.innerText)"
        WebDriverWait(self.browser, 180, poll_frequency=0.5).until(lambda b: any(
            t.split("\t")[0].strip() == str(live.id) and "\tdone" in t for t in b.execute_script(row_texts)))
        self.open("/?device=NVIDIA%20B200")
        rows = self.browser.find_elements(By.CSS_SELECTOR, "#jobs-table tbody tr")
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0].find_element(By.CSS_SELECTOR, "td").text, str(self.seed["other_gpu_job"]))
        self.open("/?status=failed")
        rows = self.browser.find_elements(By.CSS_SELECTOR, "#jobs-table tbody tr")
        self.assertEqual([r.find_element(By.CSS_SELECTOR, "td").text for r in rows], [str(self.seed["failed_job"])])
        # A row click opens the job.
        rows[0].click()
        WebDriverWait(self.browser, 30).until(lambda b: b.execute_script("return document.body.dataset.ready") == f"#/jobs/{self.seed['failed_job']}")
        self.assertIn("worker could not start", self.browser.find_element(By.ID, "job-summary").text)
        # Tuned before the keys were recorded: nothing to call it stale on, and no warm start.
        self.assertEqual(self.browser.find_element(By.ID, "job-staleness").text, "current")
        self.assertEqual(self.browser.find_element(By.ID, "job-warm-start").text, "none")
        self.assert_console_clean()

    def test_live_progress_arrives_over_the_event_stream(self) -> None:
        # Enough variants that the job is still compiling while both pages watch it.
        live = self.client.submit("gemm", {"M": 256, "N": 256, "K": 256}, "bf16", mode="compile", arch="sm_90a", budget=40)
        self.js("if (document.body) delete document.body.dataset.liveProgress")
        self.open(f"/jobs/{live.id}")
        progress_events = "return Number(document.body.dataset.liveProgress || 0)"
        bar_text = "const e = document.getElementById('job-progress'); return e ? e.innerText : ''"
        # Progress events from GET /v1/jobs/{id}/events redraw the job's bar as variants finish.
        WebDriverWait(self.browser, 120, poll_frequency=0.2).until(
            lambda b: b.execute_script(progress_events) >= 2 and not b.execute_script(bar_text).startswith("0/"))
        # The jobs list follows the same job over its own stream, in place.
        heard = self.js(progress_events)
        self.open("/")
        row_texts = "return [...document.querySelectorAll('#jobs-table tbody tr')].map(r => r.innerText)"
        WebDriverWait(self.browser, 120, poll_frequency=0.2).until(lambda b: b.execute_script(progress_events) > heard)
        try:
            self.client.cancel(live.id)
        except kerntune.ApiError:
            pass  # it finished first
        # The job's end reaches the list through the stream: its row shows the final status.
        WebDriverWait(self.browser, 120, poll_frequency=0.5).until(lambda b: any(
            t.split("\t")[0].strip() == str(live.id) and ("\tcancelled" in t or "\tdone" in t)
            for t in b.execute_script(row_texts)))
        self.assert_console_clean()

    def test_shape_browser_lists_tuned_problems(self) -> None:
        self.open("/shapes")
        headings = [h.text for h in self.browser.find_elements(By.CSS_SELECTOR, "#view h2")
                    if h.text != "Look up a shape"]
        self.assertEqual(sorted(headings), ["gemm on NVIDIA B200", f"gemm on {H100}"])
        rows = self.browser.find_elements(By.CSS_SELECTOR, ".shapes-table tbody tr")
        self.assertEqual(len(rows), 3)
        best = self.client.best("gemm", {"M": 4096, "N": 4096, "K": 4096}, "bf16", device=H100)
        self.assertTrue(any(f"{best.median_us:.1f}" in r.text for r in rows))
        rows[0].click()
        WebDriverWait(self.browser, 10).until(lambda b: b.find_elements(By.ID, "compile-log"))
        self.open("/shapes?device=NVIDIA%20B200")
        rows = self.browser.find_elements(By.CSS_SELECTOR, ".shapes-table tbody tr")
        self.assertEqual(len(rows), 1)
        self.assertIn("M=4096 N=4096", rows[0].text)
        self.assert_console_clean()

    def lookup(self, shape: dict, device: str = "") -> str:
        """Looks a gemm bf16 shape up in the shape browser's form; returns the answer's text."""
        self.open("/shapes")
        for name, value in shape.items():
            field = self.browser.find_element(By.CSS_SELECTOR, f"#lookup-dims input[name='{name}']")
            field.clear()
            field.send_keys(str(value))
        if device:
            self.js(f"document.getElementById('lookup-device').value = {device!r}")
        self.browser.find_element(By.CSS_SELECTOR, "#lookup-form button").click()
        WebDriverWait(self.browser, 30).until(lambda b: b.find_elements(By.ID, "lookup-source"))
        return self.browser.find_element(By.ID, "lookup-answer").text

    def test_shape_lookup_labels_tuned_and_untuned_answers(self) -> None:
        # The form asks for the family's dims in the family's order.
        self.open("/shapes")
        names = [e.get_attribute("name") for e in self.browser.find_elements(By.CSS_SELECTOR, "#lookup-dims input")]
        self.assertEqual(names[:3], ["M", "N", "K"])
        # A tuned shape: its own answer, labelled tuned, with the store's figure and job.
        best = self.client.best("gemm", {"M": 4096, "N": 4096, "K": 4096}, "bf16", device=H100)
        text = self.lookup({"M": 4096, "N": 4096, "K": 4096}, H100)
        self.assertEqual(self.browser.find_element(By.ID, "lookup-source").text, "tuned")
        self.assertIn("M=4096 N=4096 K=4096", text)
        self.assertIn(f"{best.median_us:.1f} µs", text)
        self.assertIn(f"job {best.job_id}", text)
        # A shape nobody tuned: the page says the answer is predicted (never measured) or, where
        # no model fits, borrowed from the nearest tuned shape; never "tuned".
        reply = self.client.best("gemm", {"M": 333, "N": 4096, "K": 4096}, "bf16", device=H100,
                                 predict=True, nearest=True)
        text = self.lookup({"M": 333, "N": 4096, "K": 4096}, H100)
        source = self.browser.find_element(By.ID, "lookup-source").text
        if getattr(reply, "predicted", False) or type(reply).__name__ == "Prediction":
            self.assertEqual(source, "predicted")
            self.assertIn("for M=333 N=4096 K=4096: never measured for this shape", text)
            self.assertIn("compile check (compile-only)", text)
        else:
            self.assertEqual(source, "nearest tuned shape")
            self.assertIn("for M=333 N=4096 K=4096", text)
        # A family with no tuned shape and no model: a plain "not tuned", in the form's answer, not
        # as a page error.
        self.open("/shapes")
        self.js("const s = document.getElementById('lookup-family'); s.value = 'attention_fwd';"
                " s.dispatchEvent(new Event('change'))")
        self.browser.find_element(By.CSS_SELECTOR, "#lookup-form button").click()
        WebDriverWait(self.browser, 30).until(lambda b: b.find_elements(By.ID, "lookup-source"))
        self.assertEqual(self.browser.find_element(By.ID, "lookup-source").text, "not tuned")
        self.assertTrue(self.browser.find_element(By.ID, "error-banner").get_attribute("hidden"))
        # The browser logs that miss's 404 as a failed resource load; nothing else may be logged.
        severe = [e["message"] for e in self.browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        self.assertTrue(all("/v1/best?" in m and "404" in m for m in severe), severe)

    def test_batches_list_and_a_batch_problem_by_problem(self) -> None:
        batch = self.client.submit_batch(
            [{"family": "gemm", "shape": {"M": 2048, "N": 2048, "K": 2048}, "dtype": "bf16", "share": 0.25},
             {"family": "gemm", "shape": {"M": 77, "N": 4096, "K": 4096}, "dtype": "bf16", "share": 0.5}],
            device="H100", label="browser-batch")
        self.open("/batches")
        rows = [r for r in self.browser.find_elements(By.CSS_SELECTOR, "#batches-table tbody tr")
                if "browser-batch" in r.text]
        self.assertEqual(len(rows), 1)
        self.assertIn("failed", rows[0].text)  # ended: one problem this host cannot tune
        self.assertIn(H100, rows[0].text)
        rows[0].click()
        WebDriverWait(self.browser, 30).until(
            lambda b: b.execute_script("return location.hash") == f"#/batches/{batch.id}")
        WebDriverWait(self.browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#batch-problems tbody tr"))
        problems = self.browser.find_elements(By.CSS_SELECTOR, "#batch-problems tbody tr")
        self.assertEqual(len(problems), 2)
        self.assertIn("M=77", problems[0].text)  # the largest share first
        self.assertIn("refused", problems[0].text)
        self.assertIn("no GPU on this host", problems[0].text)
        self.assertIn("tuned", problems[1].text)
        answer = batch.problems[1]["answer"]
        self.assertIn(f"{answer['answer']} {answer['median_us']:.1f} µs", problems[1].text)
        self.assertEqual(self.browser.find_element(By.ID, "batch-answered").text, "1")
        problems[1].click()  # to the job that tuned it
        WebDriverWait(self.browser, 30).until(
            lambda b: b.execute_script("return location.hash") == f"#/jobs/{batch.problems[1]['job_id']}")
        self.assert_console_clean()


if __name__ == "__main__":
    started = time.monotonic()
    result = unittest.main(exit=False, verbosity=2).result
    print(f"history page test: {time.monotonic() - started:.1f} s")
    sys.exit(0 if result.wasSuccessful() else 1)
