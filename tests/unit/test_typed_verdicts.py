"""No verdict about a check is typed by hand: a sentence of the book's prose that names a check
(C3, B1.7, C19.mnist) and says how it came out (passes, fails, holds, falls...) must take that
outcome from the computation, through a glued value ({glue:text}`verdict-C3` and the like).

The scan reads the Markdown of every page outside code cells, splits it into sentences and flags
those that name a check id, use a verdict word in the indicative, and glue nothing. Sentences
that say what a check asks, or what would refute it ("would fail", "if it fails", "asks for"),
are not verdicts.
"""

from __future__ import annotations

import re

from conftest import ROOT

CHECK_ID = re.compile(r"(?<![\w.])(?:C1?\d|B\d\.\d)(?:\.[\w-]+)*(?![\w])")
VERDICT = re.compile(
    r"\b(pass(?:es|ed)?|fail(?:s|ed)?|holds?|held|violat(?:es|ed)|confirm(?:s|ed)|"
    r"refut(?:es|ed)|succeed(?:s|ed)|falls?|fell|rises?|rose|declines?|declined)\b",
    re.I,
)
CONDITIONAL = re.compile(
    r"\b(would|could|might|may|can|cannot|if|whether|unless|asks?|must|should|tests?|when|"
    r"whatever|until|lest)\b",
    re.I,
)


def prose_sentences(text: str):
    """The sentences of a MyST page outside code cells, front matter, and directive options."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    text = re.sub(r"^```\{code-cell\}.*?^```\s*$", "", text, flags=re.S | re.M)
    text = re.sub(r"^:[\w-]+:.*$", "", text, flags=re.M)
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        yield from (s for s in re.split(r"(?<=[.;:!?])\s+(?=[A-Z{(])", flat) if s)


def typed_verdicts(text: str) -> list[str]:
    return [
        s
        for s in prose_sentences(text)
        if CHECK_ID.search(s)
        and VERDICT.search(s)
        and "{glue" not in s
        and not CONDITIONAL.search(s)
    ]


def test_the_scan_finds_a_typed_verdict_and_spares_glued_and_conditional_ones():
    page = (
        "Intro.\n\nCheck C3 passes on every lattice. Check C4: {glue:text}`verdict-C4`.\n\n"
        "A ratio below 1 would refute B1.7. Check C12 asks that the error falls.\n\n"
        "```{code-cell} ipython3\nrecord('C9', 1, True)  # C9 passes\n```\n"
        "The error of C16 falls like m^(-1/2) here."
    )
    assert typed_verdicts(page) == [
        "Check C3 passes on every lattice.",
        "The error of C16 falls like m^(-1/2) here.",
    ]


def test_no_page_types_a_verdict_about_a_check():
    pages = [ROOT / "intro.md", *sorted((ROOT / "chapters").glob("*.md"))]
    found = {
        page.name: hits
        for page in pages
        if (hits := typed_verdicts(page.read_text(encoding="utf8")))
    }
    assert not found, found


def test_each_verdict_is_stated_once_per_page():
    """A check's glued verdict appears once in its page's prose: the summary and the check table
    point to it instead of repeating it word for word."""
    for page in sorted((ROOT / "chapters").glob("*.md")):
        keys = re.findall(r"\{glue:text\}`(verdict-[\w.-]+)`", page.read_text())
        twice = sorted({k for k in keys if keys.count(k) > 1})
        assert not twice, f"{page.name}: {twice} glued more than once"
