"""``make bench``'s redraw times: every interactive figure of the built site, each slider moved by
the keyboard in headless Chromium, the time from the slider's input to the end of plotly's redraw.

Raises ``RuntimeError`` when a page's figures do not all load.

Source: the book's own budget (``tools/bench.py``'s docstring). Used by ``make bench`` and
``make bench --redraw-only``.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from .common import TARGETS


def redraw_times(site: Path, moves: int = 6) -> dict | None:
    """The redraw times (ms) of every interactive figure of the built site, per figure: the
    slowest of ``moves`` keyboard steps; ``None`` without Chromium and its driver."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.keys import Keys

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    times = {}
    try:
        for page in sorted((site / "chapters").glob("*.html")):
            driver.get(page.as_uri())
            expected = page.read_text(encoding="utf8").count('class="book-interactive"')
            deadline = time.time() + 15
            boxes = driver.find_elements("css selector", ".book-interactive")
            while len(boxes) != expected and time.time() < deadline:  # the page still loading
                time.sleep(0.1)
                boxes = driver.find_elements("css selector", ".book-interactive")
            if len(boxes) != expected:
                raise RuntimeError(f"{page.name}: {len(boxes)} of {expected} figures found")
            deadline = time.time() + 30
            while (
                boxes
                and time.time() < deadline
                and driver.execute_script(
                    "return document.querySelectorAll('.book-interactive[data-frame]').length"
                )
                < len(boxes)
            ):
                time.sleep(0.1)
            for box in boxes:
                slider = box.find_element("css selector", "input[type=range]")
                driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
                slowest = 0.0
                for step in range(moves):
                    frame = box.get_attribute("data-frame")
                    slider.send_keys(Keys.ARROW_RIGHT if step < moves // 2 else Keys.ARROW_LEFT)
                    deadline = time.time() + 5
                    while box.get_attribute("data-frame") == frame and time.time() < deadline:
                        time.sleep(0.01)
                    slowest = max(slowest, float(box.get_attribute("data-draw-ms") or "nan"))
                times[f"{page.stem}/{box.get_attribute('id')}"] = slowest
    finally:
        driver.quit()
    return times


def print_redraw(times: dict | None) -> bool:
    if times is None:
        print("interactive figures: not measured (needs chromium and chromium-driver)")
        return True
    if not times:
        print("interactive figures: none found in _build/html (build the book first)")
        return False
    worst = max(times, key=times.get)
    for name, ms in times.items():
        print(f"  {name:<60} {ms:6.1f} ms")
    ok = times[worst] <= TARGETS["redraw_ms"]
    print(
        f"slowest redraw of {len(times)} interactive figures: {times[worst]:.1f} ms ({worst}; "
        f"target <= {TARGETS['redraw_ms']} ms)   {'ok' if ok else 'MISSED'}"
    )
    return ok
