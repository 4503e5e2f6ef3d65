"""Headless Chromium over every page of the built site: math typeset without a MathJax error,
images loaded, no console errors, no serious or critical finding of the accessibility engine
axe-core in light and dark mode, and on a 390 px phone no sideways scrolling and no figure text
under 9 CSS px. Screenshots (desktop and phone) are saved under _build/screenshots/ for a person
to look at."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from test_site import toc_pages

from conftest import ROOT, required

pytestmark = [pytest.mark.build, pytest.mark.browser]

CHROMIUM = (
    shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
)
DRIVER = shutil.which("chromedriver")


#: The index pages Sphinx and sphinx-proof generate, checked like the book's own pages.
INDEX_PAGES = ["genindex", "py-modindex", "prf-prf", "search"]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844, "pixelRatio": 3.0, "mobile": True, "touch": True}
MIN_FIGURE_TEXT_PX = 9.0


def all_pages() -> list[str]:
    return toc_pages() + INDEX_PAGES


def _driver(width: int = 1280, height: int = 1600, phone: bool = False):
    if not (CHROMIUM and DRIVER):
        missing = " and ".join(
            name
            for name, found in (("chromium", CHROMIUM), ("chromium-driver", DRIVER))
            if not found
        )
        required(
            f"the browser check needs the Debian packages chromium and chromium-driver ({missing} "
            f"missing: apt-get install chromium chromium-driver)"
        )
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
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    if phone:  # a plain window cannot be this narrow: emulate the device
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": PHONE})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_script_timeout(60)
    return driver


@pytest.fixture(scope="module")
def browser(site):
    driver = _driver()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def phone(site):
    driver = _driver(phone=True)
    yield driver
    driver.quit()


def page_has_math(page: str) -> bool:
    source = ROOT / f"{page}.md"
    if not source.is_file():  # a generated index page
        return False
    text = source.read_text()
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


MATHJAX_ERRORS = """
const errors = [];
for (const item of MathJax.startup.document.math) {
  const found = [];
  item.root.walkTree(node => {
    if (node.isKind('merror')) {
      found.push(node.attributes.get('data-mjx-error') || 'error');
    } else if (node.isKind('mtext') && node.attributes.get('mathcolor') === 'red') {
      // MathJax's noundefined extension shows an unknown command as red text
      found.push('undefined command ' + node.childNodes.map(c => c.getText ? c.getText() : '')
        .join(''));
    }
  });
  if (found.length) errors.push({tex: item.math, errors: found});
}
return errors;
"""


def mathjax_errors(driver) -> list[dict]:
    """Every formula MathJax could not typeset on the open page: its TeX and the errors."""
    return driver.execute_script(MATHJAX_ERRORS)


def test_mathjax_errors_are_found(browser, site, tmp_path):
    """The MathJax check sees an undefined command and a parse error, with their TeX."""
    mathjax = (site / "_static" / "mathjax" / "tex-chtml.js").as_uri()
    page = tmp_path / "math.html"
    page.write_text(
        f'<html><head><script defer src="{mathjax}"></script></head><body>'
        r"<p>\(\argmax_x f(x)\) and \(a^b^c\) and \(x^2\)</p></body></html>"
    )
    browser.get(page.as_uri())
    assert browser.execute_async_script(WAIT_FOR_MATHJAX) is True
    assert mathjax_errors(browser) == [
        {"tex": r"\argmax_x f(x)", "errors": [r"undefined command \argmax"]},
        {"tex": "a^b^c", "errors": ["Double exponent: use braces to clarify"]},
    ]


@pytest.mark.parametrize("page", all_pages())
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
    if loads_mathjax:
        errors = mathjax_errors(browser)
        assert not errors, f"{page}: MathJax could not typeset {errors}"
    prose = browser.execute_script(VISIBLE_PROSE)
    assert "$$" not in prose and "\\(" not in prose and "\\[" not in prose, (
        "raw TeX left on the page"
    )
    broken = wait_for_images(browser)  # images load lazily: give them time
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
    # plotly.js is fetched when a figure nears the viewport: bring each one there
    for box in boxes:
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
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


def load_in_mode(driver, url: str, mode: str, seconds: float = 15) -> str:
    """Open ``url`` with the colour mode ``mode`` stored, and wait (up to ``seconds``) until the
    theme's deferred script has applied it; returns the theme the page ends in. The theme sets
    ``data-theme`` from the stored mode after the page's own scripts, later than the load event
    on a loaded machine, so a single read right after ``get`` can still see the default."""
    driver.get(url)
    driver.execute_script("localStorage.setItem('mode', arguments[0])", mode)
    driver.get(url)  # the theme reads the mode when the page loads
    end = time.monotonic() + seconds
    theme = driver.execute_script("return document.documentElement.dataset.theme")
    while theme != mode and time.monotonic() < end:
        time.sleep(0.1)
        theme = driver.execute_script("return document.documentElement.dataset.theme")
    return theme


def wait_for_images(driver, seconds: float = 20) -> list[str]:
    """Wait until the page's images have loaded (lazy ones made eager); the broken ones' URLs."""
    deadline = time.time() + seconds
    while True:
        broken = driver.execute_script(
            "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.src)"
        )
        if not broken or time.time() > deadline:
            return broken
        driver.execute_script(
            "document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading='eager')"
        )
        time.sleep(0.2)


RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']})
  .then(r => done(r.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 5).map(n => n.target.join(' '))}))))
  .catch(e => done('axe failed: ' + e));
"""


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.is_file():
        required(
            "the accessibility audit needs axe-core from the npm registry (node_modules/axe-core "
            "missing: install npm, then make test runs npm ci)"
        )
    return AXE.read_text(encoding="utf8")


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("page", all_pages())
def test_no_serious_accessibility_violation(browser, site, axe_source, page, mode):
    """axe-core (WCAG 2.x A and AA rules and best practices) finds nothing serious or critical:
    contrast in both colour modes, names of controls, ids, headings, list structure, ..."""
    url = (site / f"{page}.html").as_uri()
    assert load_in_mode(browser, url, mode) == mode
    if browser.execute_script("return !!window.MathJax"):
        browser.execute_async_script(WAIT_FOR_MATHJAX)
    browser.execute_script(  # colours are measured as they end, not halfway through a fade
        "const s = document.createElement('style');"
        "s.textContent = '*, *::before, *::after { transition: none !important; }';"
        "document.head.appendChild(s);"
    )
    time.sleep(0.2)
    browser.execute_script(axe_source)
    violations = browser.execute_async_script(RUN_AXE)
    browser.execute_script("localStorage.removeItem('mode')")
    assert isinstance(violations, list), violations
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious, f"{page} ({mode} mode): {serious}"


#: The elements that stick out past ``arguments[0]`` CSS px and are not inside a box that
#: clips or scrolls them: what makes a page wider than the screen.
OVERFLOWING = """
const limit = arguments[0];
function contained(e) {
  for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (s.overflowX !== 'visible' || s.display === 'none') return true;
  }
  return false;
}
return Array.from(document.querySelectorAll('body *'))
  .filter(e => { const r = e.getBoundingClientRect();
                 return r.width > 0 && r.right > limit + 0.5 && !contained(e)
                        && getComputedStyle(e).visibility !== 'hidden'
                        && !e.classList.contains('skip-link'); })
  .slice(0, 5)
  .map(e => e.tagName + '.' + String(e.className).slice(0, 40) + ': '
            + (e.textContent || '').trim().slice(0, 60));
"""

FIGURE_IMAGES = """
return Array.from(document.querySelectorAll(
    '.bd-article figure img, .bd-article div.cell_output img'))
  .filter(i => i.getClientRects().length > 0 && getComputedStyle(i).display !== 'none')
  .map(i => ({src: i.currentSrc || i.src, natural: i.naturalWidth,
               shown: i.getBoundingClientRect().width,
               box: i.closest('figure, div.cell_output').clientWidth}));
"""

PLOT_TEXT_SIZES = """
return Array.from(document.querySelectorAll('.book-interactive .main-svg text'))
  .filter(t => t.textContent.trim() && t.getBBox().width > 0)
  .map(t => parseFloat(getComputedStyle(t).fontSize));
"""


def png_text_size(src: str, natural: float, shown: float) -> float:
    """CSS px of the smallest text of a book PNG shown ``shown`` px wide (``natural`` px image),
    from the size and resolution the PNG records (lib.book.plotting.figure_png)."""
    from PIL import Image

    path = Path(unquote(urlparse(src).path))
    with Image.open(path) as png:
        recorded = png.text.get("Book-Smallest-Text-Pt")
        assert recorded, f"{path.name}: no Book-Smallest-Text-Pt (not made by figure_png)"
        dpi = png.info["dpi"][0]
    return float("inf") if recorded == "none" else float(recorded) / 72 * dpi * shown / natural


#: Per display formula of the open page: the share of its width hidden in its scroll box, its font
#: size over MathJax's own (book.js keeps MathJax's font-size style in data-book-size), its TeX.
DISPLAY_FORMULAS = """
const size = m => parseFloat(getComputedStyle(m).fontSize);
return Array.from(MathJax.startup.document.math)
  .filter(it => it.typesetRoot && it.typesetRoot.getAttribute('display') === 'true')
  .map(it => { const m = it.typesetRoot, shown = size(m), set = m.style.fontSize;
    if (m.dataset.bookSize !== undefined) { m.style.fontSize = m.dataset.bookSize; }
    const natural = size(m); m.style.fontSize = set;
    return [(m.scrollWidth - m.clientWidth) / m.scrollWidth, shown / natural,
            it.math.trim().slice(0, 60)]; });
"""


@pytest.mark.parametrize(
    "page",
    [p for p in toc_pages() if page_has_math(p) and "\n$$" in (ROOT / f"{p}.md").read_text()],
)
def test_display_formulas_fit_a_phone(phone, site, page):
    """At 390 CSS px no display formula hides more than a tenth of its width in its scroll box,
    and none is set below 0.75 of its size to fit (book.js; long formulas are written on several
    lines instead)."""
    phone.get((site / f"{page}.html").as_uri())
    assert phone.execute_async_script(WAIT_FOR_MATHJAX) is True
    time.sleep(0.3)  # book.js fits the formulas once MathJax has typeset them
    formulas = phone.execute_script(DISPLAY_FORMULAS)
    hidden = [f"{h:.0%} of {tex!r}" for h, _, tex in formulas if h > 0.1]
    assert not hidden, f"{page}: display formulas hidden on a phone: {hidden}"
    assert formulas, f"{page}: no display formula found"
    small = [f"{s:.2f} x for {tex!r}" for _, s, tex in formulas if s < 0.75 * 0.99]
    assert not small, f"{page}: formulas shrunk below 0.75 of their size: {small}"


#: The words (a hyphen may end a line) of text links in table cells that the open page draws
#: across two lines, with the link they belong to (a link of inline code may break anywhere:
#: identifiers are long).
BROKEN_LINK_WORDS = """
const broken = [];
document.querySelectorAll('article td a.reference').forEach(a => {
  if (a.querySelector('code')) return;
  const walker = document.createTreeWalker(a, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.textContent.matchAll(/[^\\s-]+-?/g)) {
      const range = document.createRange();
      range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
      const tops = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0] + ' in ' + a.textContent.trim().slice(0, 40));
    }
  }
});
return broken;
"""


@pytest.mark.parametrize("page", all_pages())
def test_table_links_keep_their_words_whole_on_a_phone(phone, site, page):
    """At 390 CSS px no word of a text link in a table is split across lines (the introduction's
    chapter table showed "approxima" / "tion")."""
    phone.get((site / f"{page}.html").as_uri())
    time.sleep(0.3)
    broken = phone.execute_script(BROKEN_LINK_WORDS)
    assert not broken, f"{page}: words split in table links on a phone: {broken[:5]}"


@pytest.mark.parametrize("page", all_pages())
def test_page_fits_a_phone(phone, site, page):
    """At 390 CSS px: the page never scrolls sideways, every figure fits the column (wide
    figures are drawn again for phones, _ext/book_sphinx/phone.py), and figure text is at least
    9 CSS px."""
    phone.get((site / f"{page}.html").as_uri())
    assert not wait_for_images(phone)
    if phone.execute_script("return !!document.querySelector('script[src*=mathjax]')"):
        assert phone.execute_async_script(WAIT_FOR_MATHJAX) is True
    time.sleep(0.3)  # book.js sizes figures and wide formulas once images and math are in
    width = phone.execute_script(  # a wider page widens a phone's layout viewport with it
        "return Math.max(window.innerWidth, document.documentElement.scrollWidth,"
        " document.body.scrollWidth)"
    )
    if width > PHONE["width"]:
        wide = phone.execute_script(OVERFLOWING, PHONE["width"])
        pytest.fail(f"{page}: {width} CSS px wide on a {PHONE['width']} px phone: {wide}")
    small = []
    if phone.execute_script("return document.querySelectorAll('.book-interactive').length"):
        # plotly.js is fetched when a figure nears the viewport (until then, and in print, the
        # figure's static image shows): bring each one there, and measure what a reader meets
        phone.execute_script(
            "document.querySelectorAll('.book-interactive')"
            ".forEach(b => b.scrollIntoView({block: 'center'}))"
        )
        deadline = time.time() + 30
        while time.time() < deadline and phone.execute_script(
            "return document.querySelectorAll('.book-interactive:not([data-frame])').length"
        ):
            time.sleep(0.2)
        sizes = phone.execute_script(PLOT_TEXT_SIZES)
        assert sizes, f"{page}: the interactive figure drew no text"
        small += [f"interactive figure: {s:.1f} px" for s in sizes if s < MIN_FIGURE_TEXT_PX]
    scrolling = []
    for image in phone.execute_script(FIGURE_IMAGES):
        px = png_text_size(image["src"], image["natural"], image["shown"])
        if px < MIN_FIGURE_TEXT_PX - 0.05:
            small.append(f"{Path(image['src']).name[:12]}: {px:.1f} px")
        if image["shown"] > image["box"] + 1:
            scrolling.append(f"{Path(image['src']).name[:12]}: {image['shown']:.0f} px")
    assert not small, f"{page}: figure text under {MIN_FIGURE_TEXT_PX} CSS px on a phone: {small}"
    assert not scrolling, f"{page}: figures wider than the phone's column: {scrolling}"
    shots = ROOT / "_build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    phone.save_screenshot(str(shots / f"phone__{page.replace('/', '__')}.png"))


@pytest.fixture(scope="module")
def served(site):
    """The built site served over http, as the README says to read it for search: a browser
    refuses a page opened from disk to read the other pages, so search shows no snippets there."""
    import functools
    import http.server
    import threading

    handler = functools.partial(
        type("Quiet", (http.server.SimpleHTTPRequestHandler,), {"log_message": lambda *a: None}),
        directory=str(site),
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


#: The most bytes (uncompressed) a chapter may fetch before its reader scrolls: page, styles,
#: scripts, fonts and the images in view, with the browser's cache off.
MAX_FIRST_LOAD = 4_000_000

FIRST_LOAD = """
const entries = performance.getEntriesByType('resource');
const nav = performance.getEntriesByType('navigation')[0];
return [[location.href, nav.decodedBodySize]].concat(entries.map(r => [r.name, r.decodedBodySize]));
"""

ICON_FONT = """
const icons = '.bd-header i[class*="fa-"], .bd-header-article i[class*="fa-"]';
return [...document.querySelectorAll(icons)]
  .filter(i => i.getClientRects().length)
  .map(i => [i.className, getComputedStyle(i, '::before').fontFamily,
             i.getBoundingClientRect().width]);
"""


@pytest.mark.parametrize("page", [p for p in toc_pages() if p.split("/")[-1][:2].isdigit()])
def test_first_load_of_a_chapter_is_light_and_its_icons_draw(browser, served, page):
    """A chapter's first load, cache off, weighs at most MAX_FIRST_LOAD bytes: plotly.js is not in
    it (the book's script fetches it when a figure nears the viewport) and neither is the theme's
    Font Awesome script, whose icons the theme's webfonts draw (each header icon has a width and
    a Font Awesome font)."""
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    try:
        browser.get(f"{served}/{page}.html")
        assert browser.execute_async_script(WAIT_FOR_MATHJAX), f"{page}: MathJax did not start"
        time.sleep(1.0)  # fonts MathJax asks for after its first pass
        loaded = browser.execute_script(FIRST_LOAD)
    finally:
        browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
    total = sum(size for _, size in loaded)
    heaviest = sorted(loaded, key=lambda r: -r[1])[:4]
    assert total <= MAX_FIRST_LOAD, f"{page}: first load {total:,} bytes; heaviest {heaviest}"
    assert not [u for u, _ in loaded if "plotly" in u or "fontawesome.js" in u], page
    icons = browser.execute_script(ICON_FONT)
    assert icons, f"{page}: no header icon found"
    for name, family, width in icons:
        assert "Font Awesome" in family and width > 0, (page, name, family, width)


FOCUSED = """
const e = document.activeElement, s = getComputedStyle(e);
const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0)
  || (s.boxShadow !== 'none' && !/rgba\\([^)]*,\\s*0\\)/.test(s.boxShadow));
return [e.tagName, (e.getAttribute('aria-label') || e.title || e.textContent || '').trim()
  .slice(0, 40), ring];
"""


def test_formulas_are_not_tab_stops_and_every_control_shows_its_focus(browser, site):
    """In Chapter 1 (432 formulas), no formula is a Tab stop unless it scrolls sideways in its box
    (a keyboard reader scrolls it from there), and each of the first 60 Tab stops shows a focus
    ring (an outline, or a visible box shadow)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    browser.get((site / "chapters/01_boltzmann.html").as_uri())
    assert browser.execute_async_script(WAIT_FOR_MATHJAX)
    time.sleep(0.5)  # book.js marks the formulas that scroll once MathJax has typeset them
    formulas, stops = browser.execute_script(
        "const all = [...document.querySelectorAll('mjx-container')];"
        "return [all.length, all.filter(m => m.tabIndex >= 0"
        " && m.scrollWidth <= m.clientWidth + 1).length];"
    )
    assert formulas > 100 and stops == 0, f"{stops} of {formulas} formulas are Tab stops"
    browser.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
    unringed = []
    for _ in range(60):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        tag, name, ring = browser.execute_script(FOCUSED)
        if not ring:
            unringed.append((tag, name))
    assert not unringed, f"controls without a focus ring: {unringed}"


FIRST_FRAME = """
window.__firstFrameTheme = null;
requestAnimationFrame(() => {
  window.__firstFrameTheme = document.documentElement.dataset.theme;
});
"""


def test_a_dark_preference_is_painted_dark_from_the_first_frame(site):
    """With the theme's default mode (auto, nothing stored) and a reader who prefers dark, the
    page's first frame is already dark: no white flash before the theme's deferred script."""
    driver = _driver()
    try:
        driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
        )
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FIRST_FRAME})
        url = (site / "chapters/01_boltzmann.html").as_uri()
        driver.get(url)
        for stored, expected in ((None, "dark"), ("light", "light"), ("dark", "dark")):
            driver.execute_script("localStorage.clear()")
            if stored:  # a mode the reader chose wins over the preference, from the first frame
                driver.execute_script("localStorage.setItem('mode', arguments[0])", stored)
            driver.get(url)
            deadline = time.time() + 10
            first = None
            while first is None and time.time() < deadline:
                first = driver.execute_script("return window.__firstFrameTheme")
                time.sleep(0.05)
            assert first == expected, f"mode {stored}: first frame painted as {first!r}"
        driver.execute_script("localStorage.clear()")
    finally:
        driver.quit()


def test_search_snippets_show_the_text_not_the_print_contents(browser, served):
    """A search for a chapter-title word, on the site served as the README says, lists the
    chapter with a snippet of its prose, not of the print-only table of contents or the header
    buttons."""
    browser.get(served + "/search.html?q=Boltzmann")
    deadline, snippets = time.time() + 30, []
    while time.time() < deadline and not snippets:
        time.sleep(0.5)
        snippets = [
            e.text
            for e in browser.find_elements("css selector", "#search-results li p.context")
            if e.text
        ]
    assert snippets, "no search result with a snippet"
    for snippet in snippets:
        assert "Contents" not in snippet[:80], snippet  # the print-only contents block
        assert ".ipynb" not in snippet and ".md .pdf" not in snippet, snippet
    assert any("Boltzmann operator" in s and "softmax" in s for s in snippets), snippets


def search_results(browser, served, query: str) -> list[tuple[str, str]]:
    """(link, snippet) of each result of ``query`` on the served site, in the listed order, once
    Sphinx says the search finished and the snippets (fetched page by page) are in."""
    browser.get(served + f"/search.html?q={query}")
    deadline = time.time() + 30
    while time.time() < deadline and "Search finished" not in browser.execute_script(
        "const s = document.querySelector('#search-results .search-summary, "
        "#search-results p'); return s ? s.textContent : '';"
    ):
        time.sleep(0.3)
    time.sleep(2)  # the snippets' pages are fetched after the list is complete
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#search-results li')).map(li =>"
        " [li.querySelector('a').getAttribute('href'),"
        "  (li.querySelector('p.context') || {textContent: ''}).textContent]);"
    )


@pytest.mark.parametrize("query", ["Boltzmann", "boltz", "softmax"])
def test_search_lists_chapters_before_the_api_and_snippets_without_tex(browser, served, query):
    """Every page of prose that the query finds is listed before any result of the API reference
    (a function's name matching the query outranked every chapter), and no snippet shows a
    formula's TeX source."""
    results = search_results(browser, served, query)
    api = [i for i, (href, _) in enumerate(results) if "chapters/api.html" in href]
    prose = [i for i, (href, _) in enumerate(results) if "chapters/api.html" not in href]
    assert api and prose, f"{query}: {results}"
    assert max(prose) < min(api), (
        f"{query}: an API result before prose: {results[: max(prose) + 1]}"
    )
    tex = [s[:80] for _, s in results if re.search(r"\\[(\[]|\\(frac|operatorname|sigma)", s)]
    assert not tex, f"{query}: TeX in snippets: {tex}"


def printed(browser, site, page: str, script: str):
    """``script``'s answer on ``page`` laid out for print: print media at an A4 page's 700 CSS px
    of text width (the window restored afterwards)."""
    browser.set_window_size(700, 1000)
    try:
        browser.get((site / f"{page}.html").as_uri())
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        return browser.execute_script(script)
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        browser.set_window_size(1280, 1600)


@pytest.mark.parametrize("page", toc_pages())
def test_code_wraps_in_print(browser, site, page):
    """Printed (print media, an A4 page's 700 CSS px of text width), no code block or output
    is cut at the margin: long lines wrap."""
    cut = printed(
        browser,
        site,
        page,
        "return Array.from(document.querySelectorAll('article pre'))"
        ".filter(p => p.getClientRects().length && p.scrollWidth > p.clientWidth + 1)"
        ".map(p => p.textContent.split('\\n').sort((a, b) => b.length - a.length)[0])",
    )
    assert not cut, f"{page}: {len(cut)} blocks cut in print, e.g. {cut[:2]}"


@pytest.mark.parametrize("page", [p for p in toc_pages() if p.startswith("chapters/0")])
def test_glued_values_are_bold_only_as_verdicts(browser, site, page):
    """A glued value is drawn in the weight of the prose around it; the bold ones are the
    verdicts, which the source sets in bold (myst-nb draws every glued value bold)."""
    browser.get((site / f"{page}.html").as_uri())
    weights = browser.execute_script(
        "return Array.from(document.querySelectorAll('article span.pasted-text')).map(s =>"
        " [Number(getComputedStyle(s).fontWeight), !!s.closest('strong, b, th, .admonition-title'),"
        "  s.textContent.slice(0, 40)]);"
    )
    assert len(weights) > 20
    bold = [text for weight, emphasised, text in weights if weight >= 600 and not emphasised]
    assert not bold, f"{page}: glued values in bold outside a verdict: {bold[:5]}"
    assert any(emphasised for _, emphasised, _ in weights), f"{page}: no verdict in bold"


@pytest.mark.parametrize("page", toc_pages())
def test_tables_fit_the_printed_page(browser, site, page):
    """Printed (print media, 700 CSS px of text width), every table fits the column: none reaches
    past the article's right edge, and none sits in a box that scrolls (a scrolling box prints
    cut)."""
    cut = printed(
        browser,
        site,
        page,
        "const a = document.querySelector('article'), right = a.getBoundingClientRect().right;"
        "return Array.from(a.querySelectorAll('table'))"
        ".filter(t => t.getClientRects().length)"
        ".filter(t => t.getBoundingClientRect().right > right + 1"
        " || t.parentElement.scrollWidth > t.parentElement.clientWidth + 1)"
        ".map(t => t.innerText.slice(0, 60))",
    )
    assert not cut, f"{page}: {len(cut)} tables cut in print, e.g. {cut[:2]}"


@pytest.mark.parametrize("page", toc_pages())
def test_code_fits_its_box_on_a_desktop(browser, site, page):
    """At a 1280 px window every code cell, shown or unfolded by its toggle, fits its box: no line
    scrolls sideways (chapters/ruff.toml sets the chapters' line length from this box's width)."""
    browser.get((site / f"{page}.html").as_uri())
    wide = browser.execute_script(
        "document.querySelectorAll('article details').forEach(d => d.open = true);"
        "return Array.from(document.querySelectorAll('article .cell_input pre'))"
        ".filter(p => p.getClientRects().length && p.scrollWidth > p.clientWidth + 1)"
        ".map(p => p.textContent.split('\\n').sort((a, b) => b.length - a.length)[0])"
    )
    assert not wide, f"{page}: {len(wide)} code cells scroll sideways at 1280 px, e.g. {wide[:2]}"


def test_a_page_in_dark_mode_prints_in_the_light_palette(browser, site):
    """Print (emulated print media) of a page shown in dark mode: the theme switches to light
    while printing, so text prints dark on white, and back to dark afterwards."""
    url = (site / "chapters/01_boltzmann.html").as_uri()
    load_in_mode(browser, url, "dark")
    colours = (
        "const p = document.querySelector('article p');"
        "return [document.documentElement.dataset.theme, getComputedStyle(p).color,"
        " getComputedStyle(document.body).backgroundColor];"
    )
    try:
        assert browser.execute_script(colours)[0] == "dark"
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        # the theme follows a media-query change event: wait for it (up to 5 s on a busy machine)
        deadline = time.time() + 5
        theme, text, background = browser.execute_script(colours)
        while theme != "light" and time.time() < deadline:
            time.sleep(0.1)
            theme, text, background = browser.execute_script(colours)
        time.sleep(0.3)  # the palette's transition, if any, settles
        theme, text, background = browser.execute_script(colours)
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        deadline = time.time() + 5
        after = browser.execute_script(colours)[0]
        while after != "dark" and time.time() < deadline:
            time.sleep(0.1)
            after = browser.execute_script(colours)[0]
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        browser.execute_script("localStorage.removeItem('mode')")

    def luminance(css: str) -> float:
        r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css)[:3])
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    contrast = (luminance(background) + 0.05) / (luminance(text) + 0.05)
    assert theme == "light" and contrast >= 7, (theme, text, background, contrast)
    assert after == "dark"


SIDEBAR_STATE = """
const visible = e => {
  if (!e || getComputedStyle(e).display === 'none' || getComputedStyle(e).visibility === 'hidden') {
    return false;
  }
  const box = e.getBoundingClientRect();  // on a phone a sidebar waits off the screen
  return box.width > 0 && box.right > 0 && box.left < window.innerWidth;
};
const side = document.getElementById(arguments[0]);
const dialog = document.getElementById(arguments[0] + '-modal');
const links = dialog ? Array.from(dialog.querySelectorAll('a')).filter(visible).length : 0;
return {inline: visible(side), dialog: !!dialog && dialog.open, dialogLinks: links};
"""

CLICK_VISIBLE = """
const buttons = Array.from(document.querySelectorAll(arguments[0]))
    .filter(b => b.getClientRects().length > 0 && getComputedStyle(b).visibility !== 'hidden');
if (!buttons.length) return false;
buttons[0].click();
return true;
"""


@pytest.mark.parametrize("device", ["desktop", "phone"])
@pytest.mark.parametrize("side", ["primary", "secondary"])
def test_sidebar_buttons_open_and_close(browser, phone, site, device, side):
    """The visible header button of each sidebar works (pydata-sphinx-theme issue 2451): at
    1280 px the chapter list hides and comes back; on a 390 px phone each button opens its
    sidebar as a dialog with links in it, and Escape closes it. The page contents (secondary)
    are laid out beside the article from 1200 px on, where the theme shows no button for them:
    there the test only finds them open."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    driver = browser if device == "desktop" else phone
    driver.get((site / "chapters" / "01_boltzmann.html").as_uri())
    time.sleep(0.5)
    name, button = f"pst-{side}-sidebar", f".{side}-toggle"
    before = driver.execute_script(SIDEBAR_STATE, name)
    assert before["dialog"] is False
    if not driver.execute_script(CLICK_VISIBLE, button):
        assert device == "desktop" and side == "secondary" and before["inline"], (
            f"no visible {button} on {device}"
        )
        return
    time.sleep(0.5)
    after = driver.execute_script(SIDEBAR_STATE, name)
    if device == "desktop" and before["inline"]:
        assert after == {"inline": False, "dialog": False, "dialogLinks": 0}, after
        assert driver.execute_script(CLICK_VISIBLE, button)
        time.sleep(0.3)
        assert driver.execute_script(SIDEBAR_STATE, name)["inline"] is True
    else:
        assert after["dialog"] is True and after["dialogLinks"] >= 3, (device, after)
        driver.switch_to.active_element.send_keys(Keys.ESCAPE)
        time.sleep(0.3)
        closed = driver.execute_script(SIDEBAR_STATE, name)
        assert closed["dialog"] is False, closed
        # a tap on a link in the drawer closes it (the page contents' anchors stay on the page)
        assert driver.execute_script(CLICK_VISIBLE, button)
        time.sleep(0.5)
        assert driver.execute_script(SIDEBAR_STATE, name)["dialog"] is True
        links = [
            a
            for a in driver.find_elements("css selector", f"#{name}-modal a[href]")
            if a.is_displayed()
        ]
        ActionChains(driver).move_to_element(links[min(3, len(links) - 1)]).click().perform()
        time.sleep(0.5)
        if side == "secondary":  # an in-page anchor: the same page, the drawer closed
            assert driver.execute_script(SIDEBAR_STATE, name)["dialog"] is False
    if device == "phone":
        assert before["inline"] is False  # on a phone the sidebars are not beside the article


MATHJAX_STATE = """
const done = arguments[arguments.length - 1];
const start = Date.now();
(function poll() {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(() => setTimeout(() => {
      const item = mj.startup.document.menu.menu.findID('Accessibility');
      done({typeset: document.querySelectorAll('mjx-container').length,
            hidden: !!item && item.hidden === true,
            saved: localStorage.getItem('MathJax-Menu-Settings')});
    }, 500)).catch(e => done({error: String(e)}));
  } else if (Date.now() - start > 20000) { done({error: 'no MathJax'}); }
  else { setTimeout(poll, 100); }
})();
"""


def test_a_saved_mathjax_explorer_setting_cannot_wipe_the_maths(browser, site):
    """With MathJax's explorer switched on in the browser profile (what Accessibility → Activate
    saves; MathJax issue 3124), a page opened from disk still typesets every formula, the saved
    setting is dropped and the menu offers no Accessibility submenu to switch it on again."""
    url = (site / "chapters" / "01_boltzmann.html").as_uri()
    browser.get(url)
    clean = browser.execute_async_script(MATHJAX_STATE)
    assert clean.get("typeset", 0) > 50 and clean["hidden"] is True, clean
    browser.execute_script(
        "localStorage.setItem('MathJax-Menu-Settings', "
        "JSON.stringify({explorer: true, collapsible: true, scale: '1'}))"
    )
    browser.get(url)
    after = browser.execute_async_script(MATHJAX_STATE)
    browser.execute_script("localStorage.removeItem('MathJax-Menu-Settings')")
    assert after.get("typeset") == clean["typeset"], after
    assert after["hidden"] is True and "explorer" not in (after["saved"] or ""), after
