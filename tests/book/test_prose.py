"""The chapters' prose, as a reader meets it on the built site: how long each chapter is, how long
each paragraph is, and whether a sentence is said twice.

Prose is the text of a chapter's paragraphs, lists, notes and figure captions with glued values in
place, as the built HTML shows it. Not counted: code cells and their outputs (the check tables
among them), tables, displayed and inline mathematics, headings, and the boxes of proofs,
exercises and solutions.
"""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup
from test_site import notebook_chapters, soup, toc_pages

pytestmark = pytest.mark.build

#: The most words of prose a chapter may hold (a chapter a reader finishes in one sitting).
MAX_WORDS = 4500

#: The most words one paragraph of prose may hold (a paragraph is read as one thought; beyond this
#: a conclusion sinks in its own evidence).
MAX_PARAGRAPH_WORDS = 150

#: What a reader does not read as prose: code and its outputs, tables, mathematics, headings,
#: proofs, exercises and solutions (sphinx-proof and sphinx-exercise boxes), the page's own
#: navigation and the header links of each section.
NOT_PROSE = (
    "div.cell_input, div.highlight, pre, table, div.math, span.math, mjx-container, "
    "h1, h2, h3, h4, h5, h6, nav, a.headerlink, div.proof.proof, div.exercise, div.solution, "
    "div.toctree-wrapper, p.admonition-title"
)

WORD = re.compile(r"[^\W_](?:[\w'’.,\-−]*[^\W_])?")


def _article(html: BeautifulSoup):
    """The page's article, with each code cell's output reduced to its figures' captions."""
    article = html.select_one("article.bd-article") or html.select_one("article") or html
    for output in article.select("div.cell_output"):
        captions = [c.extract() for c in output.select("figcaption")]
        output.clear()
        for caption in captions:
            output.append(caption)
    return article


def prose(html: BeautifulSoup) -> str:
    """The prose of a built page: its article with everything in :data:`NOT_PROSE` removed."""
    article = _article(html)
    for node in article.select(NOT_PROSE):
        node.decompose()
    return " ".join(article.get_text(" ").split())


def word_count(text: str) -> int:
    """Words as a word processor counts them: runs of letters and digits, with inner
    apostrophes, hyphens, points and commas (``"Fashion-MNIST"``, ``"1,234"``: one word each)."""
    return len(WORD.findall(text))


def sentences(html: BeautifulSoup) -> list[tuple[str, bool]]:
    """The sentences of a page's prose blocks (paragraphs, list items, captions, table cells),
    normalised to lower case and single spaces, each with whether it stands in a table; only those
    of at least eight words (short phrases repeat by nature).
    """
    article = html.select_one("article.bd-article") or html.select_one("article") or html
    for node in article.select(NOT_PROSE.replace("table, ", "")):
        node.decompose()
    out = []
    for block in article.select("p, li, figcaption, td"):
        if block.find(["p", "li"]):  # a list item holding paragraphs: its paragraphs count
            continue
        text = " ".join(block.get_text(" ").split()).lower()
        for sentence in re.split(r"(?<=[.;:!?])\s+|\s+—\s+", text):
            if word_count(sentence) >= 8:
                out.append((sentence.strip(" .;:"), block.find_parent("table") is not None))
    return out


def paragraphs(html: BeautifulSoup) -> list[str]:
    """The paragraphs of a page's prose (paragraphs, list items without paragraphs of their own,
    figure captions) as the reader sees them, glued values in place, code, maths and tables out."""
    article = _article(html)
    for node in article.select(NOT_PROSE):
        node.decompose()
    blocks = [b for b in article.select("p, li, figcaption") if not b.find(["p", "li"])]
    return [" ".join(b.get_text(" ").split()) for b in blocks]


def repeated(found: list[tuple[str, bool]]) -> list[str]:
    """The sentences said twice, once at least in the text: two rows of a table may share their
    source or their reason for not running, but the text does not repeat a table or itself."""
    texts = [s for s, _ in found]
    return sorted({s for s, in_table in found if not in_table and texts.count(s) > 1})


def test_word_count_counts_words_not_symbols():
    assert word_count("Fashion-MNIST has 60,000 images; the error falls — about 16 times.") == 10
    assert word_count("β = 2 log n + 3, it's (δ′) — so") == 8


def test_prose_leaves_out_code_maths_tables_and_proofs():
    html = BeautifulSoup(
        "<article class='bd-article'><h1>Title words</h1><p>One two <span class='math'>\\(x+y\\)"
        "</span> three.</p><div class='cell'><div class='cell_input'><pre>code code</pre></div>"
        "<div class='cell_output'><img alt='a'><figure><figcaption>Cell caption.</figcaption>"
        "</figure></div></div><table><tr><td>cell</td>"
        "</tr></table><div class='proof proof'><p>Proof words here.</p></div>"
        "<figure><figcaption>Caption text.</figcaption></figure></article>",
        "html.parser",
    )
    assert prose(html) == "One two three. Cell caption. Caption text."
    assert word_count(prose(html)) == 7


def test_a_sentence_said_twice_is_found():
    html = BeautifulSoup(
        "<article class='bd-article'><p>The error falls with the grid spacing on all five grids. "
        "Short one.</p><ul><li><p>The error falls with the grid spacing on all five grids.</p>"
        "</li></ul></article>",
        "html.parser",
    )
    found = sentences(html)
    assert repeated(found) == ["the error falls with the grid spacing on all five grids"]
    assert all("short one" not in s for s, _ in found)
    table = BeautifulSoup(
        "<article><table><tr><td>K&S Lemma 1, the threshold quoted and the bound recalled</td>"
        "</tr><tr><td>K&S Lemma 1, the threshold quoted and the bound recalled</td></tr></table>"
        "</article>",
        "html.parser",
    )
    assert repeated(sentences(table)) == []


def test_paragraphs_are_found_with_their_glued_words():
    html = BeautifulSoup(
        "<article class='bd-article'><p>One <span class='pasted-text'>two three</span> four "
        "<span class='math'>\\(x\\)</span>.</p><ul><li><p>Five six.</p></li><li>Seven.</li></ul>"
        "<figure><figcaption>Eight nine.</figcaption></figure><table><tr><td>no</td></tr></table>"
        "</article>",
        "html.parser",
    )
    assert paragraphs(html) == ["One two three four .", "Five six.", "Seven.", "Eight nine."]


@pytest.mark.parametrize("page", toc_pages())
def test_no_paragraph_buries_its_point(site, page):
    """Every paragraph of prose, on every page, holds at most MAX_PARAGRAPH_WORDS words."""
    long = [
        (word_count(p), p[:60])
        for p in paragraphs(soup(site, page))
        if word_count(p) > MAX_PARAGRAPH_WORDS
    ]
    assert not long, f"{page}: paragraphs over {MAX_PARAGRAPH_WORDS} words: {long}"


@pytest.mark.parametrize("page", notebook_chapters())
def test_chapter_prose_fits_a_sitting(site, page):
    words = word_count(prose(soup(site, page)))
    assert words <= MAX_WORDS, f"{page}: {words:,} words of prose (at most {MAX_WORDS:,})"


@pytest.mark.parametrize("page", notebook_chapters())
def test_no_sentence_is_said_twice(site, page):
    """Each verdict is stated once: no sentence of eight words or more appears twice on a page,
    between body, summary, captions and the check table."""
    twice = repeated(sentences(soup(site, page)))
    assert not twice, f"{page}: said twice: {twice[:3]}"


#: The most words of a section's takeaway: one sentence a reader keeps (about two lines).
MAX_TAKEAWAY_WORDS = 45

SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]’”%][.!?])\s+(?=[A-Z(“‘$])")


def section_paragraphs(html: BeautifulSoup) -> dict[str, list[str]]:
    """Each ``h2`` section of a page (by its heading's text) with its paragraphs of prose in
    reading order, those of its subsections included; lists, captions, code, maths and tables
    out (a takeaway is a paragraph of its own)."""
    article = _article(html)
    for node in article.select("span.math, mjx-container"):
        node.replace_with("x")  # inline maths reads as a word: "at $\\beta$. Then" ends a sentence
    for node in article.select(NOT_PROSE.replace("h2, ", "")):
        node.decompose()
    out = {}
    for section in article.select("section"):
        heading = section.find("h2", recursive=False)
        if heading is None:
            continue
        blocks = [
            re.sub(r"\s+(?=[.,;:!?])", "", " ".join(p.get_text(" ").split()))
            for p in section.select("p")
            if not p.find_parent(["li", "figure", "figcaption", "div.cell_output"])
            and not p.find_parent("div", class_="cell_output")
        ]
        out[" ".join(heading.get_text(" ").split())] = [b for b in blocks if word_count(b)]
    return out


def is_takeaway(paragraph: str) -> bool:
    """One sentence of at most :data:`MAX_TAKEAWAY_WORDS` words."""
    return (
        len(SENTENCE_END.split(paragraph)) == 1 and 0 < word_count(paragraph) <= MAX_TAKEAWAY_WORDS
    )


def test_a_takeaway_is_one_short_sentence():
    assert is_takeaway("The operator is not a non-expansion: its ratio reaches 1.54 at n = 3.")
    assert not is_takeaway("The operator falls. It then rises again, at 0.93 of the bound.")
    assert not is_takeaway(" ".join(["word"] * 46) + ".")
    html = BeautifulSoup(
        "<article class='bd-article'><section><h2>T</h2><p>At temperature <span class='math'>"
        "\\(\\beta\\)</span>. How it ends.</p></section></article>",
        "html.parser",
    )
    assert section_paragraphs(html) == {"T": ["At temperature x. How it ends."]}
    html = BeautifulSoup(
        "<article class='bd-article'><section><h2>One</h2><p>First takes away.</p><p>Second. "
        "Third.</p><section><h3>Sub</h3><p>Inner. More.</p></section></section></article>",
        "html.parser",
    )
    assert section_paragraphs(html) == {
        "One": ["First takes away.", "Second. Third.", "Inner. More."]
    }


@pytest.mark.parametrize("page", notebook_chapters())
def test_every_section_opens_or_closes_with_its_takeaway(site, page):
    """Each section of a chapter begins or ends with a paragraph of one short sentence: the one
    thing its reader should keep, where a reader skimming the page looks for it. (The summary is
    the chapter's list of them.)"""
    missing = [
        heading
        for heading, paras in section_paragraphs(soup(site, page)).items()
        if paras
        and not heading.endswith("Summary")
        and not (is_takeaway(paras[0]) or is_takeaway(paras[-1]))
    ]
    assert not missing, f"{page}: sections without a one-sentence takeaway: {missing}"
