"""Headless Chromium over every page of the built site: math typeset, images loaded, no console
errors. Screenshots are saved under _build/screenshots/ for a person to look at."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from test_site import toc_pages

from conftest import ROOT

pytestmark = [pytest.mark.build, pytest.mark.browser]

CHROMIUM = (
    shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
)
DRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser(site):
    if not (CHROMIUM and DRIVER):
        missing = " and ".join(
            name
            for name, found in (("chromium", CHROMIUM), ("chromium-driver", DRIVER))
            if not found
        )
        message = (
            f"the browser check needs the Debian packages chromium and chromium-driver ({missing} "
            f"missing: apt-get install chromium chromium-driver)"
        )
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(message + "; CI=true makes it required")
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--window-size=1280,1600",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


def page_has_math(page: str) -> bool:
    text = (ROOT / f"{page}.md").read_text()
    return "$" in text.replace("$$", "$") and page != "chapters/api"


WAIT_FOR_MATHJAX = """
const done = arguments[arguments.length - 1];
const start = Date.now();
(function poll() {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(() => done(true)).catch(e => done('error: ' + e));
  } else if (Date.now() - start > 20000) { done(false); }
  else { setTimeout(poll, 100); }
})();
"""

VISIBLE_PROSE = """
const article = document.querySelector('article') || document.body;
const copy = article.cloneNode(true);
copy.querySelectorAll('pre, code, .cell_input, details, script, style, mjx-container')
    .forEach(e => e.remove());
return copy.textContent;
"""


@pytest.mark.parametrize("page", toc_pages())
def test_page_renders(browser, site, page):
    browser.get((site / f"{page}.html").as_uri())
    loads_mathjax = browser.execute_script(
        "return !!document.querySelector('script[src*=mathjax]')"
    )
    assert loads_mathjax or not page_has_math(page), "a page with math does not load MathJax"
    if loads_mathjax:
        assert browser.execute_async_script(WAIT_FOR_MATHJAX) is True, "MathJax did not start"
        assert "cdn." not in browser.execute_script(
            "return document.querySelector('script[src*=mathjax]').src"
        ), "MathJax from a CDN"
    if page_has_math(page):
        assert (
            browser.execute_script("return document.querySelectorAll('mjx-container').length") > 0
        )
    prose = browser.execute_script(VISIBLE_PROSE)
    assert "$$" not in prose and "\\(" not in prose and "\\[" not in prose, (
        "raw TeX left on the page"
    )
    deadline = time.time() + 20
    while time.time() < deadline:  # images load lazily: give them time
        broken = browser.execute_script(
            "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.src)"
        )
        if not broken:
            break
        browser.execute_script(
            "document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading='eager')"
        )
        time.sleep(0.2)
    assert not broken, f"images not loaded: {broken}"
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    shots = ROOT / "_build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1280, min(max(height, 800), 16000))
    browser.save_screenshot(str(shots / f"{page.replace('/', '__')}.png"))
    browser.set_window_size(1280, 1600)


SLIDER_STATE = """
const box = arguments[0];
const plot = box.querySelector('.book-interactive-plot');
return {frame: box.dataset.frame, ms: box.dataset.drawMs,
        data: JSON.stringify((plot.data || []).map(t => [t.x, t.y, t.z]))};
"""


@pytest.mark.parametrize("page", [p for p in toc_pages() if p.split("/")[-1][:2].isdigit()])
def test_every_slider_moves_its_figure(browser, site, page):
    """Each interactive figure goes live from the site's own plotly.js (the page is opened from
    disk, with no network), and the keyboard moves its slider and redraws other data."""
    from selenium.webdriver.common.keys import Keys

    browser.get((site / f"{page}.html").as_uri())
    expected = (site / f"{page}.html").read_text(encoding="utf8").count('class="book-interactive"')
    assert expected, f"{page}: no interactive figure"
    deadline = time.time() + 15
    boxes = browser.find_elements("css selector", ".book-interactive")
    while len(boxes) < expected and time.time() < deadline:  # the page may still be loading
        time.sleep(0.1)
        boxes = browser.find_elements("css selector", ".book-interactive")
    assert len(boxes) == expected, f"{page}: {len(boxes)} of {expected} figures in the page"
    deadline = time.time() + 30
    while time.time() < deadline:
        live = browser.execute_script(
            "return document.querySelectorAll('.book-interactive[data-frame]').length"
        )
        if live == len(boxes):
            break
        time.sleep(0.2)
    assert live == len(boxes), f"{page}: {live} of {len(boxes)} figures went live"
    for box in boxes:
        before = browser.execute_script(SLIDER_STATE, box)
        slider = box.find_element("css selector", "input[type=range]")
        at_end = slider.get_attribute("value") == slider.get_attribute("max")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
        slider.send_keys(Keys.ARROW_LEFT if at_end else Keys.ARROW_RIGHT)
        deadline = time.time() + 10
        while time.time() < deadline:
            after = browser.execute_script(SLIDER_STATE, box)
            if after["frame"] != before["frame"]:
                break
            time.sleep(0.05)
        assert after["frame"] != before["frame"], f"{box.get_attribute('id')}: slider did nothing"
        assert after["data"] != before["data"], f"{box.get_attribute('id')}: data unchanged"
        assert box.find_element("css selector", "output").text != ""
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
