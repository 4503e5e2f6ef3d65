"""The book as one PDF (`make pdf`): built strictly with XeLaTeX, then read back with poppler.

Needs Debian's TeX Live (the packages README's "The PDF" lists) and poppler-utils; without them
the tests are skipped with that reason, unless ``CI=true``, where they are required.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_site import soup, toc_pages

from conftest import ROOT, required, run_build

pytestmark = [pytest.mark.build, pytest.mark.pdf]

TOOLS = ("xelatex", "latexmk", "pdftotext", "pdfinfo")
PDF = ROOT / "_build" / "latex" / "book.pdf"


@pytest.fixture(scope="module")
def pdf(site) -> Path:
    """``make pdf``'s build (after the HTML one: it reuses the execution cache); the PDF's path."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        required(
            f"the PDF check needs XeLaTeX, latexmk and poppler-utils ({', '.join(missing)} "
            "missing: see README, 'The PDF')"
        )
    result = run_build(ROOT, builder="pdflatex", timeout=1800)
    assert result.returncode == 0, result.stdout[-6000:]
    assert PDF.is_file(), f"no {PDF.relative_to(ROOT)} after a successful build"
    return PDF


@pytest.fixture(scope="module")
def pdf_text(pdf) -> str:
    return subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(pdf), "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _words(text: str) -> str:
    """Lower-case words only: line breaks, hyphenation points and spacing do not count."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def test_pdf_holds_every_chapter_title(site, pdf, pdf_text):
    pages = int(
        re.search(
            r"^Pages:\s+(\d+)",
            subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout,
            re.M,
        ).group(1)
    )
    assert pages > 100, f"the PDF has only {pages} pages"
    text = _words(pdf_text)
    for page in toc_pages():
        title = soup(site, page).select_one("h1").get_text(" ", strip=True).rstrip("#")
        assert _words(title) in text, f"{page}: its title {title!r} is not in the PDF"


def test_pdf_has_no_unresolved_reference(pdf, pdf_text):
    assert "??" not in pdf_text, [line for line in pdf_text.splitlines() if "??" in line][:5]
    log = pdf.with_suffix(".log").read_text(errors="replace")
    assert "There were undefined references" not in log
    assert "Citation `" not in log or "undefined" not in log


def test_nothing_runs_off_the_page(pdf):
    """No line or table sticks out of the text block by more than a few characters (LaTeX's
    overfull boxes; a 528 pt one was a table losing two columns past the margin)."""
    log = pdf.with_suffix(".log").read_text(errors="replace")
    widths = [float(w) for w in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)]
    assert len(widths) == log.count("Overfull \\hbox")  # every one of them read
    assert max(widths, default=0) <= 60, sorted(widths)[-5:]


def test_pdf_text_is_clean(pdf, pdf_text):
    """No glyph missing from the fonts, no object repr, no box title run into its kind's word
    ("TheoremK&S Theorem 2"), no table printed as plain text."""
    log = pdf.with_suffix(".log").read_text(errors="replace")
    assert "Missing character" not in log, [
        line for line in log.splitlines() if "Missing character" in line
    ][:3]
    assert not re.search(r" at 0x[0-9a-f]{6,}", pdf_text)
    joined = re.findall(r"(?:Theorem|Lemma|Definition|Corollary|Proposition)(?:K&S|LHSL)", pdf_text)
    assert not joined, joined[:3]
    tables = re.split(
        r"Every\s+check\s+of\s+this\s+chapter(?:,\s+with\s+its\s+outcome)?:", pdf_text
    )[1:]
    assert len(tables) >= 6  # each chapter's table of its checks: a table, not wrapped text
    for table in tables:
        assert "↪" not in table[:1500] and "\\\n" not in table[:1500], table[:300]


def test_pdf_has_every_figure_of_the_html(site, pdf, pdf_text):
    """Same number of captioned figures as the HTML (interactive ones as their static image)."""
    html = sum(len(soup(site, page).select("figure figcaption")) for page in toc_pages())
    captions = re.findall(r"^Figure (?:\d+\.)?\d+: ", pdf_text, re.M)
    assert len(captions) == html, f"PDF {len(captions)} figure captions, HTML {html}"
    images = subprocess.run(
        ["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True
    ).stdout.splitlines()[2:]
    assert len([line for line in images if " image " in line]) >= html


BOX = re.compile(
    r"\b(Theorem|Lemma|Proposition|Definition|Corollary|Remark|Example|Conjecture|Assumption)"
    r"\s+(\d+(?:\.\d+)+)"
)


EXERCISE = re.compile(r"(Exercise) (\d+\.\d+)\b")


def _site_numbers(site, selector: str, pattern: re.Pattern) -> list[str]:
    found = []
    for page in toc_pages():
        for node in soup(site, page).select(selector):
            match = pattern.match(" ".join(node.get_text(" ").split()))
            if match:
                found.append(" ".join(match.groups()))
    return found


def test_pdf_numbers_boxes_and_figures_as_the_site_does(site, pdf_text):
    """One numbering: every numbered theorem box, every exercise and every figure has the number
    the site gives it (Proposition 1.2, not 1.3.2; the reproducibility page's Figure 1, not
    Figure 9.1)."""
    text = " ".join(pdf_text.split())
    boxes = _site_numbers(site, "div.proof p.admonition-title", BOX)
    assert len(boxes) >= 5, boxes
    assert [b for b in boxes if b not in text] == []
    exercises = _site_numbers(site, "div.exercise p.admonition-title", EXERCISE)
    assert len(exercises) >= 18, exercises
    assert [e for e in exercises if e not in text] == []
    deeper = re.findall(
        r"\b(?:Theorem|Lemma|Proposition|Definition|Corollary|Exercise) \d+\.\d+\.\d+", text
    )
    assert deeper == [], deeper[:5]
    figures = _site_numbers(site, "figcaption span.caption-number", re.compile(r"(Figure) (\S+)"))
    pdf_figures = re.findall(r"^(Figure (?:\d+\.)?\d+): ", pdf_text, re.M)
    assert sorted(pdf_figures) == sorted(figures)
    assert any("." not in f.split()[1] for f in figures)  # the back matter's own numbers


def test_pdf_back_matter_is_the_sites(pdf, pdf_text):
    """No index pages the site does not have, the API reference left to the site, and the
    bibliography's list on its own chapter's first page (not after an empty one)."""
    assert "Proof Index" not in pdf_text and "Python Module Index" not in pdf_text
    pages = pdf_text.split("\f")
    api = [i for i, page in enumerate(pages) if "part of the book's website only" in page]
    assert len(api) == 1, "the API reference's page (a pointer to the site) is missing"
    assert re.search(r"^API REFERENCE: LIB$", pages[api[0]], re.M)
    bib = [i for i, page in enumerate(pages) if re.search(r"^BIBLIOGRAPHY$", page, re.M)]
    assert len(bib) == 1 and bib[0] > api[0], "one bibliography chapter, after the API page"
    assert re.search(r"^\[[A-Z][^\]]+, \d{4}\] ", pages[bib[0]], re.M), (
        "the bibliography's chapter page holds no entry"
    )


def test_pdf_introduction_reads_as_the_book(pdf, pdf_text):
    """The introduction's pages carry the book's title in their running foot, not "CONTENTS",
    and none of its headings ends a page."""
    pages = pdf_text.split("\f")
    start = next(i for i, p in enumerate(pages) if "What the two papers say" in p)
    stop = next(i for i, p in enumerate(pages) if i > start and p.lstrip().startswith("Part I"))
    headings = {"What the two papers say", "The chapters", "How to read it", "How to run it"}
    for page in pages[start:stop]:
        lines = [line.strip() for line in page.strip().splitlines() if line.strip()]
        assert "CONTENTS" not in lines, lines[-3:]
        body = [line for line in lines[1:] if not line.isdigit() and line != "One layer is enough"]
        assert not body or body[-1] not in headings, f"a heading ends a page: {body[-1]}"


def test_pdf_claims_table_is_a_summary_of_every_check(site, pdf, pdf_text):
    """The PDF's claims table lists every check of the site's (its id, status and claim) in six
    columns, says that the site's table has the rest, and fits in at most 10 pages (nine columns
    ran over 27)."""
    from bs4 import BeautifulSoup

    html = BeautifulSoup((site / "chapters" / "claims.html").read_text(), "html.parser")
    ids = [
        r.select_one("td").get_text(strip=True) for r in html.select("table.claims-table tbody tr")
    ]
    assert len(ids) > 40
    pages = pdf_text.split("\f")
    first = next(i for i, p in enumerate(pages) if "the claims page of the website adds" in p)
    last = max(i for i, p in enumerate(pages) if ids[-1] in p.split())
    assert last - first + 1 <= 10, f"the claims table takes {last - first + 1} pages"
    # an id up to its first hyphen: LaTeX breaks "C19.fashion-mnist" there, and the text of the
    # next column comes between its two lines
    table = " ".join(pages[first : last + 1])
    missing = [i for i in ids if i.split("-")[0] not in table]
    assert not missing, f"checks missing from the PDF's claims table: {missing}"
    assert "Expected (what it is)" not in " ".join(pages[first : last + 1])
