#!/usr/bin/env python3
"""Screenshots of the history page for docs/, in headless Chromium through Selenium (the browser
test's tools: python3-selenium, chromium, chromium-driver), against a running kerntuned.

    scripts/page-screenshots.py URL OUT.png FRAGMENT [ELEMENT_ID]

FRAGMENT is the page's route (/jobs/2, /compare?a=1&b=2); with ELEMENT_ID the shot is scrolled
so that element is at the top (the variant table: variant-table)."""

from __future__ import annotations

import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait


def main() -> int:
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    url, out, fragment = sys.argv[1:4]
    element = sys.argv[4] if len(sys.argv) == 5 else None
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1900,1000", "--hide-scrollbars"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        browser.get(f"{url}/#{fragment}")
        WebDriverWait(browser, 30).until(
            lambda b: b.execute_script("return document.body.dataset.ready") in (f"#{fragment}", "error"))
        if element:
            browser.execute_script(
                f"const e = document.getElementById('{element}'); window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY - 60)")
        time.sleep(1.0)  # the plots' transitions
        browser.save_screenshot(out)
    finally:
        browser.quit()
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
