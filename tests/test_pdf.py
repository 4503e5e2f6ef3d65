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
    tables = re.split(r"Every\s+check\s+of\s+this\s+chapter:", pdf_text)[1:]
    assert len(tables) >= 6  # each chapter's table of its checks: a table, not wrapped text
    for table in tables:
        assert "↪" not in table[:1500] and "\\\n" not in table[:1500], table[:300]


def test_pdf_has_every_figure_of_the_html(site, pdf, pdf_text):
    """Same number of captioned figures as the HTML (interactive ones as their static image)."""
    html = sum(len(soup(site, page).select("figure figcaption")) for page in toc_pages())
    captions = re.findall(r"^Figure \d+\.\d+: ", pdf_text, re.M)
    assert len(captions) == html, f"PDF {len(captions)} figure captions, HTML {html}"
    images = subprocess.run(
        ["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True
    ).stdout.splitlines()[2:]
    assert len([line for line in images if " image " in line]) >= html
