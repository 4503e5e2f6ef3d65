"""Checks of the built HTML of the real book (the session fixture builds it strictly)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup

from book_sphinx.interactive import PLOTLY_JS, PLOTLY_SHA256, PLOTLY_VERSION

from conftest import ROOT

pytestmark = pytest.mark.build


def toc_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]
    for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}]):
        pages += [c["file"] for c in part["chapters"]]
    return pages


def notebook_chapters() -> list[str]:
    return [
        p
        for p in toc_pages()
        if (ROOT / f"{p}.md").read_text().count("{code-cell}") and p.split("/")[-1][:2].isdigit()
    ]


def soup(site: Path, page: str) -> BeautifulSoup:
    return BeautifulSoup((site / f"{page}.html").read_text(encoding="utf8"), "html.parser")


def test_every_toc_page_is_built(site):
    for page in toc_pages():
        assert (site / f"{page}.html").is_file(), page
    assert (site / "index.html").is_file()


@pytest.mark.parametrize("page", toc_pages())
def test_no_error_or_stderr_output(site, page):
    html = soup(site, page)
    article = html.select_one("article") or html
    assert not article.select(".output.error, .output.traceback, .output.stderr, .stderr")
    text = article.get_text(" ")
    assert "Traceback (most recent call last)" not in text or page.endswith("api")
    assert not article.select(".problematic, .system-message"), page


#: A check record (lib.book.checks.record's dict) printed as a cell's output.
RECORD_REPR = re.compile(r"\{'id': '[A-Z][0-9][^']*',.*'passed': (True|False|None)", re.S)


@pytest.mark.parametrize("page", toc_pages())
def test_no_cell_prints_a_check_record(site, page):
    """A check's record reaches the claims page through glue; a cell that ends with record(...)
    and is not removed prints the dict on the page, in print and in the PDF."""
    html = soup(site, page)
    shown = [o.get_text() for o in html.select(".cell_output")]
    assert not [text[:80] for text in shown if RECORD_REPR.search(text)], page


@pytest.mark.parametrize("page", toc_pages())
def test_every_folded_cell_shows_an_output(site, page):
    """A folded cell (hide-input) folds the code of a figure or a table that the page shows; a
    cell with no output is computation, which the page shows unfolded (an empty "Show code cell
    source" toggle tells a reader nothing)."""
    html = soup(site, page)
    empty = [
        cell.select_one(".cell_input pre").get_text().strip().splitlines()[0][:70]
        for cell in html.select("div.cell.tag_hide-input")
        if not any(
            o.get_text(strip=True) or o.find(["img", "svg", "table", "figure", "iframe"])
            for o in cell.select(".cell_output")
        )
    ]
    assert not empty, f"{page}: {len(empty)} folded cells without an output, e.g. {empty[:3]}"


@pytest.mark.parametrize("page", notebook_chapters())
def test_chapter_figures_present_with_captions_and_alt(site, page):
    html = soup(site, page)
    figures = html.select("figure")
    assert len(figures) >= 3, f"{page}: only {len(figures)} figures"
    for fig in figures:
        img = fig.find("img")
        assert img is not None and img.get("alt", "").strip(), fig.get("id")
        assert fig.find("figcaption") and fig.find("figcaption").get_text(strip=True)
        if img["src"].startswith("data:image/png;base64,"):  # an interactive figure's fallback
            assert fig.select_one("div.book-interactive"), fig.get("id")
        else:
            assert (site / page).parent.joinpath(img["src"]).resolve().is_file(), img["src"]
        assert fig.get("id", "").startswith("fig-"), fig.get("id")


@pytest.mark.parametrize("page", notebook_chapters())
def test_glued_numbers_and_references_resolved(site, page):
    html = soup(site, page)
    pasted = html.select("span.pasted-text")
    assert len(pasted) >= 20, f"{page}: {len(pasted)} glued values"
    assert all(p.get_text(strip=True) for p in pasted)
    refs = html.select("a.reference.internal")
    assert refs and all(a.get("href") for a in refs)
    text = html.get_text(" ")
    assert "??" not in text
    # figure and equation references render with the chapter's number: Figure 5.3, (5.2)
    chapter = int(page.split("/")[-1][:2])
    figures = re.findall(r"Figure (\d+)\.(\d+)", text)
    assert figures and {int(c) for c, _ in figures} >= {chapter}
    bare_figures = [
        m.group()
        for m in re.finditer(r"Figure \d+(?![.\d])", text)
        if not re.search(
            r"(LHSL|K&S)\S*( Appendix \w+,)?\s*$", text[max(0, m.start() - 25) : m.start()]
        )
    ]
    assert not bare_figures, (
        "a figure of the book numbered without its chapter (the papers' own figures excepted)"
    )
    if "{eq}`" in (ROOT / f"{page}.md").read_text():
        assert re.search(rf"\({chapter}\.\d+\)", text)
    # links to the papers' statements print the paper's label, never a bare "Theorem"
    bare = [
        a.get_text(" ", strip=True)
        for a in refs
        if re.fullmatch(
            r"(Theorem|Lemma|Definition|Proposition|Corollary)", a.get_text(" ", strip=True)
        )
    ]
    assert not bare, bare


def check_rows(site) -> list[dict]:
    """The claims page table's rows as dicts keyed by its column headers (the expected value alone,
    without its threshold line, under "Expected (what it is)"; the threshold under "Threshold")."""
    table = soup(site, "chapters/claims").select_one("table.claims-table")
    headers = [th.get_text(" ", strip=True) for th in table.select("thead th")]
    rows = []
    for r in table.select("tbody tr"):
        cells = r.find_all("td")
        row = dict(zip(headers, (td.get_text(" ", strip=True) for td in cells), strict=True))
        expected = cells[headers.index("Expected (what it is)")].find_all("p")
        row["Expected (what it is)"] = expected[0].get_text(" ", strip=True)
        row["Threshold"] = expected[1].get_text(" ", strip=True) if len(expected) > 1 else ""
        row["Kind"] = cells[headers.index("Kind")].find("p").get_text(" ", strip=True)
        row["link"] = cells[0].find("a")
        row["classes"] = r.get("class", [])
        rows.append(row)
    return rows


def test_claims_page_lists_chapter_checks_all_passing(site):
    """Every test computed in the build passes, and every demonstration is shown holding, or is
    "not run" because its dataset is missing on this machine (rows of stored full-scale results
    report what make full measured, pass or FAIL); every row says at which scale it ran, what its
    expected value is, and for a test where its threshold comes from."""
    from lib import datasets
    from lib.book import checks

    rows = check_rows(site)
    ids = [r["Check"] for r in rows]
    for check in ("C1", "C2", "C3", "C4", "B1.7"):
        assert check in ids, ids
    assert len(ids) == len(set(ids))
    assert set(ids) == set(checks.registry()), "the page and lib/book/checks.toml list other checks"
    passed = ("pass", "shown", "not run", checks.CONTRADICTED)  # a proxy itself passed
    failing = [
        r["Check"]
        for r in rows
        if r["Status"] not in passed and not r["Scale"].startswith("stored")
    ]  # a stored experiment's outcome may fail (the claims page says so); a live check may not
    assert not failing, f"checks failing: {failing}"
    status = {r["Check"]: r["Status"] for r in rows}
    for r in rows:  # a proxy is contradicted only by its full-data counterpart's FAIL
        if r["Status"] == checks.CONTRADICTED:
            assert r["Scale"] == "fast subset", r["Check"]
            assert status[checks.registry()[r["Check"]]["counterpart"]] == "FAIL", r["Check"]
    for r in rows:
        spec = checks.registry()[r["Check"]]
        assert r["Kind"] == spec["kind"], r["Check"]
        allowed = {
            "test": {"pass", "FAIL", "not run", checks.CONTRADICTED},
            "demonstration": {"shown", "FAIL", "not run"},
        }
        assert r["Status"] in allowed[r["Kind"]], (r["Check"], r["Status"])
        assert (r["Kind"] == "test") == r["Threshold"].startswith("threshold: "), r["Check"]
        assert r["Threshold"].removeprefix("threshold: ") == spec.get("threshold", ""), r["Check"]
        assert f"kind-{r['Kind']}" in r["classes"], r["classes"]
    missing = {d for d, why in datasets.image_dataset_status().items() if why}
    not_run = {r["Check"] for r in rows if r["Status"] == "not run"}
    assert not_run == {f"C19.{d}" for d in missing}, (not_run, missing)
    assert all(r["Measured"].startswith("not run:") for r in rows if r["Check"] in not_run)
    assert all(r["Scale"] in checks.SCALES for r in rows)
    assert all(
        re.search(r"\((" + "|".join(checks.BASES) + r")\)$", r["Expected (what it is)"])
        for r in rows
    )


def test_claims_count_counts_tests_only(site):
    """The count above the table is the tally of the rows' kinds and statuses: demonstrations
    are counted apart, never as passes."""
    rows = check_rows(site)
    count = soup(site, "chapters/claims").select_one("p.claims-count").get_text(" ", strip=True)
    tests = [r for r in rows if r["Kind"] == "test"]
    shown = [r for r in rows if r["Kind"] == "demonstration"]
    words = [r["Status"] for r in tests]
    proxies = words.count("proxy contradicted")
    contradicted = (
        f", {proxies} prox{'ies' if proxies != 1 else 'y'} contradicted at full scale"
        if proxies
        else ""
    )
    assert count == (
        f"{len(tests)} tests: {words.count('pass')} pass, {words.count('FAIL')} fail"
        f"{contradicted}, {words.count('not run')} not run · {len(shown)} demonstrations"
    )
    assert len(shown) >= 5 and len(tests) >= 25


def test_claims_rows_link_to_the_section_that_computes_them(site):
    """Each check id links to an anchor of its chapter's page, the section labelled in
    lib/book/checks.toml, not to the top of the chapter."""
    pages = {}
    for r in check_rows(site):
        link = r["link"]
        assert link is not None, f"{r['Check']} has no link"
        href = link["href"]
        page, _, anchor = href.partition("#")
        assert page.startswith("0") and anchor, (r["Check"], href)
        if page not in pages:
            pages[page] = soup(site, "chapters/" + page.removesuffix(".html"))
        assert pages[page].find(id=anchor) is not None, (r["Check"], href)


def test_every_recorded_check_reaches_the_claims_page(site):
    glue_files = (ROOT / "_build" / "jupyter_execute").rglob("*.glue.json")
    recorded = {
        k[len("check-") :]
        for f in glue_files
        for k in json.loads(f.read_text())
        if k.startswith("check-")
    }
    shown = {r["Check"] for r in check_rows(site)}
    assert recorded and recorded == shown


def test_chapters_within_budget_on_reproducibility_page(site):
    rows = soup(site, "chapters/reproducibility").select("table.budget-table tbody tr")
    budgeted = [
        p
        for p in toc_pages()
        if re.search(r"^budget_seconds:", (ROOT / f"{p}.md").read_text(), re.M)
    ]
    assert (
        len(rows) == len(budgeted) >= len(notebook_chapters()) + 1
    )  # the chapters and the epilogue
    for row in rows:
        cells = [td.get_text(strip=True) for td in row.find_all("td")]
        assert cells[-1] == "within budget", cells
        assert cells[1].isdigit(), f"no seed glued by {cells[0]}"


@pytest.mark.parametrize("page", notebook_chapters())
def test_download_button_serves_a_notebook(site, page):
    html = (site / f"{page}.html").read_text(encoding="utf8")
    links = re.findall(r'href="([^"]+\.ipynb)"', html)
    assert links, "no .ipynb download link"
    target = (site / page).parent.joinpath(links[0]).resolve()
    nb = nbformat.read(target, as_version=4)
    nbformat.validate(nb)
    assert any(c.cell_type == "code" for c in nb.cells)
    assert not re.findall(r'href="[^"]+\.ipynb\.txt"', html)


def test_math_is_served_offline(site):
    html = (site / "chapters" / f"{notebook_chapters()[0].split('/')[-1]}.html").read_text()
    assert "cdn.jsdelivr" not in html and "mathjax" in html.lower()
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_no_stale_outputs_committed():
    import subprocess

    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, text=True, capture_output=True
    ).stdout.split()
    assert not [f for f in files if f.endswith(".ipynb") or f.startswith("_build/")]


def test_no_link_points_at_a_bare_file_name(site):
    """Only explicit URLs become links: "(notes.md)" or "setup.py" in prose must not link to http://notes.md."""
    bad = {}
    for page in toc_pages():
        hrefs = [a.get("href", "") for a in soup(site, page).select("a[href]")]
        found = [
            h
            for h in hrefs
            if re.fullmatch(r"https?://[\w-]+\.(md|py|txt|yml|yaml|toml|json|ipynb)/?", h)
        ]
        if found:
            bad[page] = found
    assert not bad, bad


@pytest.mark.parametrize("page", notebook_chapters())
def test_chapter_has_an_interactive_figure_that_needs_no_network(site, page):
    """Each chapter holds at least one slider figure (lib.book.interactive) in a captioned figure,
    with every frame in the page; plotly.js comes from the site itself, fetched by the book's
    script (not in the first load); the page weighs < 2 MB."""
    html = soup(site, page)
    boxes = html.select("div.book-interactive")
    assert boxes, f"{page}: no interactive figure"
    for box in boxes:
        figure = box.find_parent("figure")
        assert figure is not None and figure.find("figcaption").get_text(strip=True), box["id"]
        data = json.loads(box.select_one("script.book-interactive-data").string)
        slider = box.select_one("input[type=range]")
        assert len(data["frames"]) == len(data["labels"]) == int(slider["max"]) + 1 >= 2
        assert html.select_one(f"label[for={slider['id']}]") is not None
    sources = [tag["src"].split("?")[0] for tag in html.select("script[src]")]  # no ?v=checksum
    external = [src for src in sources if re.match(r"([a-z]+:)?//", src)]
    assert not external, f"{page} loads scripts from the network: {external}"
    # the book's script once; it names plotly.js, which it fetches when a figure nears the view
    tags = [t for t in html.select("script[src]") if "_static/book-interactive.js" in t["src"]]
    assert len(tags) == 1, f"{page}: book-interactive.js loaded {len(tags)} times"
    assert tags[0].get("data-plotly") == PLOTLY_JS
    assert not [s for s in sources if "plotly" in s], f"{page}: plotly.js in the first load"
    images = {
        (site / page).parent.joinpath(img["src"]).resolve()
        for img in html.select("img[src]")
        if not img["src"].startswith("data:")
    }
    weight = (site / f"{page}.html").stat().st_size + sum(p.stat().st_size for p in images)
    assert weight < 2_000_000, f"{page}: {weight:,} bytes with its images"


def test_plotly_js_is_served_once_from_the_recorded_partial_bundle(site):
    copies = [p.relative_to(site).as_posix() for p in site.rglob("plotly*.js")]
    assert copies == [f"_static/{PLOTLY_JS}"]
    served = (site / "_static" / PLOTLY_JS).read_bytes()
    assert hashlib.sha256(served).hexdigest() == PLOTLY_SHA256
    # the cartesian partial bundle of the recorded release, not the full one
    assert f"plotly.js (cartesian - minified) v{PLOTLY_VERSION}" in served[:200].decode()
    pages_without = [p for p in toc_pages() if "book-interactive" not in soup(site, p).decode()]
    assert pages_without
    for page in pages_without:  # only pages with a figure load plotly.js and the book's script
        assert not soup(site, page).select("script[src*=plotly], script[src*=book-interactive]")


@pytest.mark.parametrize("page", toc_pages())
def test_no_page_loads_the_font_awesome_script(site, page):
    """The theme's stylesheet draws the icons; its 1.5 MB Font Awesome script is not loaded."""
    html = soup(site, page)
    assert not html.select("script[src*=fontawesome]"), page
    assert html.select("i.fa-solid, i.fa-brands, i.fa-regular, span.fa-solid"), page


def test_reference_list_is_labelled_as_the_text_cites(site):
    """One citation style: every parenthetical citation's text is a label of the reference list,
    and the labels are author-year ("Kajitsuka and Sato, 2024"), not "[KS24]" or "[1]"."""
    entries = soup(site, "chapters/bibliography").select(".citation")
    labels = {
        e.select_one(".label").get_text("", strip=True).strip("[]"): e.get("id") for e in entries
    }
    assert len(labels) == len(entries) >= 8
    assert all(re.fullmatch(r"[^,]+, (\d{4}[a-z]?|n\.d\.)", label) for label in labels), labels
    assert "Kajitsuka and Sato, 2024" in labels and "Liu et al., 2025" in labels
    cited = 0
    for page in toc_pages():
        for span in soup(site, page).select("span.bibtex-citation"):
            for link in span.select("a[href*='bibliography.html#']"):
                text = " ".join(link.get_text(" ").split()).replace(
                    " ,", ","
                )  # "Kim <em>et al.</em>, 2023"
                target = link["href"].split("#")[1]
                if "," in text:  # {cite:p}: the whole label; {cite:t}: the year only
                    assert labels.get(text) == target, f"{page}: [{text}] is not that entry's label"
                    cited += 1
    assert cited >= 5


def test_reference_list_links_every_identifier_of_references_bib(site):
    """Every arXiv id, DOI and OpenReview forum of references.bib is a link on the reference list
    (pybtex's style links eprint and doi; an id left in a note would be plain text), and no entry
    shows raw TeX."""
    from pybtex.database import parse_file

    page = soup(site, "chapters/bibliography")
    entries = {e.get("id"): e for e in page.select(".citation")}
    assert len(entries) == len(parse_file(str(ROOT / "references.bib")).entries)
    hrefs = {a["href"] for a in page.select(".citation a[href]")}
    wanted = set()
    for entry in parse_file(str(ROOT / "references.bib")).entries.values():
        fields = entry.fields
        if "eprint" in fields:
            wanted.add(f"https://arxiv.org/abs/{fields['eprint']}")
        if "doi" in fields:
            wanted.add(f"https://doi.org/{fields['doi']}")
        if "url" in fields:
            wanted.add(fields["url"])
    assert wanted and not wanted - hrefs, sorted(wanted - hrefs)
    text = " ".join(e.get_text(" ") for e in entries.values())
    assert "$" not in text and "\\" not in text, "raw TeX on the reference list"


def _internal_links(page: Path, html: BeautifulSoup):
    """(attribute value, element) of every link, image, script and stylesheet of a page that
    stays inside the site (no scheme such as https:, mailto:, data: or javascript:)."""
    for tag, attr in (("a", "href"), ("link", "href"), ("img", "src"), ("script", "src")):
        for element in html.find_all(tag):
            value = (element.get(attr) or "").strip()
            if value and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:", value) and value != "#":
                yield value, element


@pytest.mark.parametrize("page", toc_pages())
def test_every_page_names_the_site_favicon(site, page):
    icons = soup(site, page).select("link[rel=icon]")
    assert len(icons) == 1, f"{page}: {len(icons)} favicon links"
    target = (site / page).parent.joinpath(icons[0]["href"].split("?")[0]).resolve()
    assert target.is_file() and target.suffix == ".svg", target
    assert "<svg" in target.read_text(), target


@pytest.mark.parametrize("page", toc_pages())
def test_no_id_repeats_on_a_page(site, page):
    """An id names one element of a page (links, labels and ARIA references rely on it)."""
    ids = [tag["id"] for tag in soup(site, page).select("[id]")]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, f"{page}: ids used more than once: {repeated}"


def test_every_internal_link_and_anchor_resolves(site):
    """Every href and src inside the built site points at a file the build wrote, and every
    #anchor at an element of that page with that id (or name). External links are not checked:
    the book is built and tested offline."""
    from urllib.parse import unquote, urlsplit

    site = site.resolve()
    # the theme's template macros copied into _static/ are not pages
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)
    assert len(pages) >= len(toc_pages())
    parsed: dict[Path, BeautifulSoup] = {}

    def html_of(path: Path) -> BeautifulSoup:
        if path not in parsed:
            parsed[path] = BeautifulSoup(path.read_text(encoding="utf8"), "html.parser")
        return parsed[path]

    ids: dict[Path, set[str]] = {}
    broken = []
    for page in pages:
        for value, _ in _internal_links(page, html_of(page)):
            parts = urlsplit(value)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(site)}: {value}"
            if site not in target.parents:
                broken.append(f"{where} (leaves the site)")
            elif not target.is_file():
                broken.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                if target not in ids:
                    soup_ = html_of(target)
                    ids[target] = {e["id"] for e in soup_.find_all(id=True)} | {
                        e["name"] for e in soup_.find_all("a", attrs={"name": True})
                    }
                if unquote(parts.fragment) not in ids[target]:
                    broken.append(f"{where} (no element with that id)")
    assert not broken, f"{len(broken)} broken: " + "\n".join(broken[:40])
