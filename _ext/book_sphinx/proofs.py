"""Theorem boxes with the papers' own numbers, and unique HTML ids in every box.

sphinx-proof numbers every box with the book's counters, which would give a paper's statement one of
the book's numbers ("Theorem 4" for K&S Proposition 1). The book marks each statement of a paper
``:nonumber:`` and titles it with the paper's label, e.g. ``{prf:theorem} K&S Theorem 2 (one rank-1
softmax layer is a contextual mapping)``. For such a box (a title that starts with one of
``book_paper_labels``) this module

* shows the title as written, without sphinx-proof's generic "Theorem" prefix and parentheses;
* makes ``{prf:ref}`label``` print the paper's label (the title up to its first " (": "K&S
  Theorem 2") instead of sphinx-proof's "Theorem " with no number.

The book's own results keep sphinx-proof's numbering, which follows the chapter ("Proposition
1.2"). Every box also gets unique ids (sphinx-proof gives each box body the id ``proof-content``
and each proof the id ``proof``, the same on every box of a page).

Two pieces of the pinned sphinx-proof (:data:`.patching.WRITTEN_FOR`) are replaced at
``setup()``, after :func:`.patching.require_version` has checked the installed version (no
configuration of sphinx-proof reaches them; ``proof_title_format`` applies to every box, the
book's own too): the HTML and LaTeX ``depart`` of an unnumbered box (:func:`_depart_unenumerable`)
and ``ProofDomain.resolve_xref`` (:func:`_resolve_xref`).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx

from .patching import NO_ISSUE, require_version

__all__ = ["setup"]

#: What each patch replaces, and the upstream issue it works around.
DEPART_TARGET = "sphinx_proof.nodes.depart_unenumerable_node"
DEPART_ISSUE = "https://github.com/executablebooks/sphinx-proof/issues/53"
XREF_TARGET = "sphinx_proof.domain.ProofDomain.resolve_xref"
XREF_ISSUE = (
    f"{NO_ISSUE} (searched executablebooks/sphinx-proof for the text of a prf:ref to a "
    ":nonumber: box)"
)


def _is_paper(title: str, labels) -> bool:
    text = title.strip()
    text = text[1:] if text.startswith("(") else text
    return text.startswith(tuple(labels))


def _unwrap_title(title: nodes.title) -> None:
    """Remove the " (" ... ")" that ``proof_title_format`` wraps around a box title."""
    texts = [n for n in title.findall(nodes.Text)]
    if not texts:
        return
    first, last = texts[0], texts[-1]
    if first.astext().lstrip().startswith("("):
        first.parent.replace(first, nodes.Text(first.astext().lstrip()[1:]))
        texts = [n for n in title.findall(nodes.Text)]
        last = texts[-1]
    if last.astext().rstrip().endswith(")"):
        last.parent.replace(last, nodes.Text(last.astext().rstrip()[:-1]))


def _mark_paper_boxes(app: Sphinx, doctree) -> None:
    from sphinx_proof.nodes import proof_node, unenumerable_node

    env = app.env
    titles = env.__dict__.setdefault("book_proof_titles", {})
    for label in [k for k, v in list(titles.items()) if v[0] == env.docname]:
        del titles[label]
    for box in doctree.findall(unenumerable_node):
        if not _is_paper(box.get("title", ""), app.config.book_paper_labels):
            continue
        box["book_paper"] = True
        title = next(iter(box.findall(nodes.title)), None)
        if title is not None:
            _unwrap_title(title)
            title[
                "ids"
            ] = []  # sphinx-proof repeats the box's id on its title: keep it on the box only
            text = title.astext()
            titles[box["label"]] = (env.docname, text.split(" (")[0].strip())
    for box in doctree.findall(
        lambda n: isinstance(n, nodes.Element) and "proof-content" in n.get("ids", [])
    ):
        owner = box.parent.get("label") or box.parent.get("ids", ["box"])[0]
        box["ids"] = [f"{owner}-content" if i == "proof-content" else i for i in box["ids"]]
    for number, proof in enumerate(doctree.findall(proof_node), start=1):
        for child in proof.children:
            if isinstance(child, nodes.admonition) and "proof" in child.get("ids", []):
                child["ids"] = [f"proof-{number}" if i == "proof" else i for i in child["ids"]]
                if "dropdown" in child["classes"]:
                    _title_folded_proof(child)


def _title_folded_proof(box: nodes.admonition) -> None:
    """Give a folded proof (``:class: dropdown``) a title to click: sphinx-proof writes "Proof. "
    before the first paragraph and gives the box no title, and sphinx-togglebutton folds a box
    under its title (without one its script stops at this box and no later box folds). The title
    is "Proof sketch" when the proof says it is a sketch, else "Proof"; the prefix goes."""
    if any(isinstance(c, nodes.title) for c in box.children):
        return
    first = next(iter(box.findall(nodes.Text)), None)
    if first is not None and first.astext().startswith("Proof. "):
        first.parent.replace(first, nodes.Text(first.astext()[len("Proof. ") :]))
    sketch = "sketch" in box.astext()[:200].lower()
    box.insert(0, nodes.title("", "Proof sketch" if sketch else "Proof"))


def _depart_unenumerable(original):
    """sphinx-proof's depart, except for a paper's box, whose title is the paper's label alone:
    no "Theorem" word is put before it ("TheoremK&S Theorem 2" in the PDF).

    Why: the pinned sphinx-proof's ``depart_unenumerable_node`` always writes the box's type before
    its title (``<span class="caption-number">Theorem </span>`` in HTML, ``Theorem`` in LaTeX),
    and its ``proof_title_format`` wraps every title, the book's own boxes' too. Source:
    https://github.com/executablebooks/sphinx-proof/issues/53 (open: a prf box always puts its
    title in parentheses after its type; asks for a customizable header).
    """

    def depart(self, node):
        if node.get("book_paper"):
            if self.__class__.__name__.startswith("LaTeX"):
                from sphinx_proof.nodes import latex_admonition_end

                self.body.append(latex_admonition_end)
            else:
                self.body.append("</div>")
            return
        original(self, node)

    depart.__wrapped__ = original
    return depart


def _resolve_xref(original):
    """sphinx-proof's ``ProofDomain.resolve_xref``, except that ``{prf:ref}`label``` to a paper's
    box prints the paper's label ("K&S Theorem 2").

    Why: for a ``:nonumber:`` box the pinned sphinx-proof prints the box's type and an empty number
    ("Theorem "), and has no setting for the text of a reference. Source: no upstream issue found
    (searched executablebooks/sphinx-proof for the text of a prf:ref to a :nonumber: box; the
    nearest, https://github.com/executablebooks/sphinx-proof/issues/159, asks for a
    ``prf:numref`` with a text of one's own).
    """

    def resolve_xref(self, env, fromdocname, builder, typ, target, node, contnode):
        made = original(self, env, fromdocname, builder, typ, target, node, contnode)
        label = getattr(env, "book_proof_titles", {}).get(target)
        if made is not None and label and target in contnode.astext():
            for text in list(made.findall(nodes.Text)):
                text.parent.replace(text, nodes.Text(label[1]))
                break
        return made

    resolve_xref.__wrapped__ = original
    return resolve_xref


def _patch_xref() -> None:
    """Install :func:`_resolve_xref` on sphinx-proof's ``ProofDomain`` (once)."""
    from sphinx_proof.domain import ProofDomain

    if not hasattr(ProofDomain.resolve_xref, "__wrapped__"):
        ProofDomain.resolve_xref = _resolve_xref(ProofDomain.resolve_xref)


def setup(app: Sphinx) -> None:
    from sphinx_proof.nodes import (
        depart_unenumerable_node,
        unenumerable_node,
        visit_unenumerable_node,
    )

    require_version("sphinx-proof", target=DEPART_TARGET, issue=DEPART_ISSUE)
    require_version("sphinx-proof", target=XREF_TARGET, issue=XREF_ISSUE)
    app.add_config_value("book_paper_labels", ["K&S ", "LHSL"], "env")
    app.connect("doctree-read", _mark_paper_boxes)
    app.add_node(
        unenumerable_node,
        override=True,
        html=(visit_unenumerable_node, _depart_unenumerable(depart_unenumerable_node)),
        latex=(visit_unenumerable_node, _depart_unenumerable(depart_unenumerable_node)),
    )
    _patch_xref()
