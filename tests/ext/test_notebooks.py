"""The downloadable notebooks (_ext/book_sphinx/notebooks.py): MyST to Jupyter Markdown, the
download link, and that each chapter's downloaded notebook runs.

The unit tests convert small inputs with a resolver of fixed answers; the build tests read the
real book's download of every notebook page and execute each chapter's with nbclient, from
``chapters/`` as the book does.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

from book_sphinx import myst_markdown, notebooks

from conftest import ROOT


class FixedResolver(myst_markdown.Resolver):
    """Answers from dictionaries, as :class:`notebooks.SphinxResolver` would from a build."""

    GLUE = {
        "err": {"data": {"text/plain": "0.0123456"}},
        "n": {"data": {"text/plain": "7"}},
        "name": {"data": {"text/plain": "'rank-1 layer'"}},
        "table": {"data": {"text/markdown": "| a | b |\n|---|---|\n| 1 | 2 |", "text/plain": "T"}},
        "pic": {"data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}},
    }
    XREF = {
        ("numref", "fig-x"): "Figure 1.2",
        ("numref", "Chapter %s <ch-a>"): "Chapter 2",
        ("eq", "eq-a"): "(1.4)",
        ("cite:t", "kajitsuka2024"): "Kajitsuka and Sato (2024)",
        ("cite:p", "asadi2017"): "(Asadi and Littman, 2017)",
        ("prf:ref", "lem-ks-1"): "K&S Lemma 1",
        ("ref", "sec-b"): "Where it sits",
        ("py:func", "lib.boltzmann.boltz"): "lib.boltzmann.boltz()",
    }
    NUMBERS = {("proposition", "prop-sharp"): "1.3", ("exercise", "ex-a"): "1.2"}
    TITLES = {"ex-a": "A tangent plane"}

    def glue(self, key):
        return self.GLUE.get(key)

    def xref(self, role, text):
        return self.XREF.get((role, text))

    def number(self, figtype, label):
        return self.NUMBERS.get((figtype, label))

    def exercise_title(self, label):
        return self.TITLES.get(label)


R = FixedResolver()


def convert(text: str) -> str:
    return myst_markdown.convert_markdown(text, R)


@pytest.mark.parametrize(
    ("role", "content", "expected"),
    [
        ("glue:text", "err:.3f", "0.012"),
        ("glue:text", "err:.2e", "1.23e-02"),
        ("glue:text", "n", "7"),
        ("glue:text", "n:d", "7"),
        ("glue:text", "name", "rank-1 layer"),  # the repr's quotes go, as on the page
        ("glue", "n", "7"),
        ("glue:md", "table", "| a | b |\n|---|---|\n| 1 | 2 |"),
        ("numref", "fig-x", "Figure 1.2"),
        ("numref", "Chapter %s <ch-a>", "Chapter 2"),
        ("eq", "eq-a", "(1.4)"),
        ("cite:t", "kajitsuka2024", "Kajitsuka and Sato (2024)"),
        ("prf:ref", "lem-ks-1", "K&S Lemma 1"),
        ("py:func", "lib.boltzmann.boltz", "`lib.boltzmann.boltz()`"),
        ("math", r"\beta", r"$\beta$"),
        # unresolved: the source's own words, never the role
        ("ref", "Section B <sec-missing>", "Section B"),
        ("py:func", "~lib.datasets.load", "`load()`"),
        ("cite:p", "nobody2020", "nobody2020"),
        ("weird", "some text", "some text"),
    ],
)
def test_render_role(role, content, expected):
    assert myst_markdown.render_role(role, content, R) == expected


def test_render_role_pastes_a_glued_image_as_an_attachment():
    attachments = {}
    assert (
        myst_markdown.render_role("glue:any", "pic", R, attachments) == "![pic](attachment:pic.png)"
    )
    assert attachments == {"pic.png": {"image/png": "iVBORw0KGgo="}}


def test_render_role_refuses_an_empty_name():
    with pytest.raises(ValueError, match="name must be a role name, got ''"):
        myst_markdown.render_role("", "x", R)


def test_roles_in_prose_replaced_code_and_math_kept():
    text = (
        "The error is {glue:text}`err:.3f` ({numref}`fig-x`, {cite:t}`kajitsuka2024`); "
        "the syntax is `` {glue:text}`err` `` and $\\{x\\}$ stays."
    )
    assert convert(text) == (
        "The error is 0.012 (Figure 1.2, Kajitsuka and Sato (2024)); "
        "the syntax is `` {glue:text}`err` `` and $\\{x\\}$ stays."
    )


def test_targets_and_comments_removed_labelled_equation_numbered():
    text = "(sec-b)=\n## B\n\n% a comment\nSee\n\n$$\na = b\n$$ (eq-a)\n\nand {eq}`eq-a`."
    assert convert(text) == "## B\n\nSee\n\n$$\na = b\n\\tag{1.4}\n$$\n\nand (1.4)."


def test_prf_box_gets_its_number_and_title_and_the_paper_box_its_paper_label():
    box = (
        "```{prf:proposition} Sharp bound\n:label: prop-sharp\n\n"
        "For all $a$, {glue:text}`n` holds.\n```"
    )
    assert convert(box) == "**Proposition 1.3 (Sharp bound).** For all $a$, 7 holds."
    paper = (
        "```{prf:lemma} K&S Lemma 1 (separation)\n:label: lem-ks-1\n:nonumber:\n\n"
        "$$\nx > 0\n$$\n```"
    )
    assert convert(paper) == "**K&S Lemma 1 (separation).**\n\n$$\nx > 0\n$$"


def test_nested_fences_both_converted():
    text = (
        "````{prf:theorem} Main\n:nonumber:\n\nIt holds.\n\n"
        "```{prf:proof}\nBy {numref}`fig-x`.\n```\n````"
    )
    assert convert(text) == "**Theorem (Main).** It holds.\n\n*Proof.* By Figure 1.2. ∎"


def test_proof_ending_in_display_math_gets_its_end_mark_below():
    assert convert("```{prf:proof}\n$$\na\n$$\n```") == "*Proof.*\n\n$$\na\n$$\n\n∎"


def test_admonition_becomes_a_block_quote_with_a_bold_title():
    assert convert(":::{note}\nSee {ref}`sec-b`.\n:::") == "> **Note.** See Where it sits."
    assert convert("```{admonition} Why\nBecause.\n```") == "> **Why.** Because."


def test_unknown_directive_degrades_to_its_body_and_math_to_dollars():
    text = "```{mystery} arg\n:opt: 1\n\nBody with {numref}`fig-x`.\n```"
    assert convert(text) == "Body with Figure 1.2."
    assert convert("```{math}\n:label: eq-a\n\na + b\n```") == "$$\na + b\n\\tag{1.4}\n$$"
    assert convert("```python\n{glue:text}`err`\n```") == "```python\n{glue:text}`err`\n```"


def test_exercise_and_solution_read_as_on_the_page_without_labels():
    """sphinx-exercise's boxes: the exercise's number and title, the solution's heading naming
    both (the page shows "Solution to Exercise 1.2 (title)"), no label left as text."""
    exercise = ":::{exercise} A tangent plane\n:label: ex-a\n\nShow that {glue:text}`n` > 0.\n:::"
    assert convert(exercise) == "**Exercise 1.2 (A tangent plane).** Show that 7 > 0."
    start = ":::{solution-start} ex-a\n:class: dropdown\n:::"
    assert convert(start) == "**Solution to Exercise 1.2 (A tangent plane).**"
    assert convert(":::{solution-end}\n:::") == ""
    assert convert(":::{exercise}\n:nonumber:\n\n1. First.\n:::") == "**Exercise.**\n\n1. First."
    assert convert(":::{solution-start} ex-unknown\n:::") == "**Solution to Exercise.**"


@pytest.mark.parametrize(
    ("source", "tags", "machinery"),
    [
        ("glue('x', 1)\nrecord('C1', 'ok', True)", ["remove-cell"], True),
        ("glue_many(a=fmt(a))\nnot_run('C2', 'why')", ["remove-cell"], True),
        ("glue('x', 1)", ["hide-input"], False),  # shown on the page: kept
        ("x = 1\nglue('x', x)", ["remove-cell"], False),  # binds a name a later cell may use
        ("from lib import boltzmann", ["remove-cell"], False),
        ("print(record)", ["remove-cell"], False),
        ("", ["remove-cell"], False),
        ("glue(", ["remove-cell"], False),
    ],
)
def test_is_machinery(source, tags, machinery):
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": tags})
    assert notebooks.is_machinery(cell) is machinery
    as_json = {"cell_type": "code", "metadata": {"tags": tags}, "source": source.splitlines(True)}
    assert notebooks.is_machinery(as_json) is machinery


def test_is_machinery_refuses_what_is_not_a_cell():
    with pytest.raises(ValueError, match="cell must be a notebook cell"):
        notebooks.is_machinery("glue('x', 1)")


def test_glue_figure_directive_pastes_the_image_with_its_number():
    attachments = {}
    made = myst_markdown.convert_markdown(
        "```{glue:figure} pic\n:name: fig-x\n\nA {glue:text}`n`-point plot.\n```", R, attachments
    )
    assert made == "![pic](attachment:pic.png)\n\n**Figure 1.2:** A 7-point plot."
    assert set(attachments) == {"pic.png"}


def test_convert_markdown_refuses_a_non_string():
    with pytest.raises(ValueError, match="source must be a string, got list"):
        myst_markdown.convert_markdown(["# x"], R)


def test_convert_notebook_keeps_code_adds_instructions_and_figure_captions():
    cells = [
        nbformat.v4.new_markdown_cell("(ch-a)=\n# A chapter\n\nValue {glue:text}`n`."),
        nbformat.v4.new_code_cell(
            "x = 1", metadata={"tags": ["remove-cell"]}, outputs=[], execution_count=1
        ),
        nbformat.v4.new_code_cell(
            "fig",
            metadata={"mystnb": {"figure": {"caption": "A plot of {eq}`eq-a`.", "name": "fig-x"}}},
            outputs=[
                nbformat.v4.new_output(
                    "display_data",
                    {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
                    metadata={"image/png": {"book-phone": "iVBORw0KGgoK", "width": 300}},
                )
            ],
        ),
        nbformat.v4.new_markdown_cell("(only-a-target)="),
        nbformat.v4.new_code_cell(
            "record('C1', 'ok', True)",
            metadata={"tags": ["remove-cell"]},
            outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "{'id': 'C1'}"})],
        ),
    ]
    source = nbformat.v4.new_notebook(cells=cells, metadata={"jupytext": {"x": 1}})
    made = notebooks.convert_notebook(source, R, "A chapter", "chapters/01_a", "1")
    nbformat.validate(made)
    kinds = ["markdown", "markdown", "code", "code", "markdown", "code"]
    assert [c.cell_type for c in made.cells] == kinds
    assert [c.id for c in made.cells] == [f"cell-{i}" for i in range(1, 7)]
    # the record cell: kept (a rerun records), collapsed, its dict gone, said what it is
    machinery = made.cells[5]
    assert machinery.source == f"{notebooks.MACHINERY_NOTE}\nrecord('C1', 'ok', True)"
    assert machinery.outputs == []
    assert machinery.metadata["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    assert "jupyter" not in made.cells[2].metadata  # x = 1 computes: shown as it is
    assert made.cells[0].source.startswith("# Chapter 1, *A chapter*: the notebook")
    assert (
        "`make lab`" in made.cells[0].source
        and "pip install --no-deps -e ." in made.cells[0].source
    )
    assert made.cells[1].source == "# A chapter\n\nValue 7."
    assert made.cells[2].source == "x = 1" and made.cells[2].metadata["tags"] == ["remove-cell"]
    assert made.cells[4].source == "**Figure 1.2:** A plot of (1.4)."
    # the figure as the desktop page shows it; its phone rendition stays on the site
    (figure,) = made.cells[3].outputs
    assert figure.data["image/png"] == "iVBORw0KGgo="
    assert figure.metadata == {"image/png": {"width": 300}}
    assert "book-phone" in source.cells[2].outputs[0].metadata["image/png"]
    assert made.cells[3].metadata["mystnb"]["figure"]["caption"] == "A plot of (1.4)."
    assert source.cells[2].metadata["mystnb"]["figure"]["caption"] == "A plot of {eq}`eq-a`."
    assert "jupytext" not in made.metadata and "jupytext" in source.metadata
    with pytest.raises(
        ValueError, match="notebook must be an nbformat v4 notebook, got nbformat=3"
    ):
        notebooks.convert_notebook({"nbformat": 3}, R, "A", "chapters/a")


def test_run_instructions_refuse_empty_names():
    with pytest.raises(ValueError, match="title must be the page's title, got ' '"):
        notebooks.run_instructions(" ", "chapters/a")
    with pytest.raises(ValueError, match="pagename must be the page's name, got ''"):
        notebooks.run_instructions("A", "")


# --- the real book ---------------------------------------------------------------------------


def download_pages() -> list[str]:
    """Every page of the book written as a MyST notebook (the pages with a download button)."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]] + [c["file"] for p in toc["parts"] for c in p["chapters"]]
    texts = {p: (ROOT / f"{p}.md").read_text() for p in pages}
    return [
        p for p, t in texts.items() if t.startswith("---") and "kernelspec:" in t.split("---")[1]
    ]


def chapter_pages() -> list[str]:
    return [p for p in download_pages() if p.split("/")[-1][:2].isdigit()]


FORBIDDEN = ["{glue", "```{prf:", "{prf:", "{numref}", "{cite", "{doc}", "{ref}", "{eq}", "{py:"]


def downloaded(site: Path, page: str) -> tuple[BeautifulSoup, nbformat.NotebookNode]:
    html = BeautifulSoup((site / f"{page}.html").read_text(encoding="utf8"), "html.parser")
    link = html.select_one("a.btn-download-notebook-button")
    assert link is not None, f"{page}: no notebook download button"
    path = (site / page).parent.joinpath(link["href"]).resolve()
    return html, nbformat.read(path, as_version=4)


def test_every_notebook_page_is_tested():
    assert len(download_pages()) == 10  # seven chapters, the atlas, the epilogue, reproducibility
    assert len(chapter_pages()) == 7
