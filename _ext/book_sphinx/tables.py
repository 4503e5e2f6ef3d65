"""The aggregate pages: the checks table and the budget table, filled after every chapter is read.

``{checks-table}`` lists every check a chapter recorded with :func:`lib.book.checks.record`
(or :func:`lib.book.checks.not_run`), in reading order; ``{budget-table}`` lists each chapter's
fast-mode budget (its ``budget_seconds``), its seed (glued as ``seed``) and its measured execution
time. ``{mutation-table}`` shows the last outcome of ``make mutate`` (``tools/mutate.py``), stored
in ``results/mutation/last.json``: its counts and one row per mutant.

Only what the book itself recorded is read from myst-nb's glue files: the keys starting with
``check-`` (JSON written by ``lib.book.checks``) and ``seed``. Anything else a page glues — figures,
tables, numpy scalars through plain ``myst_nb.glue`` — is ignored; a record that cannot be read
is a build error naming the page and the key. Pages listed in ``book_aggregate_pages`` are
re-read whenever another page is, so neither table goes stale.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from lib._constants import CHECK_PREFIX

LOGGER = logging.getLogger(__name__)
#: The CSS class of each status word of :func:`lib.book.checks.status`.
STATUS_CLASS = {
    "pass": "claim-pass",
    "shown": "claim-shown",
    "FAIL": "claim-fail",
    "not run": "claim-notrun",
    "proxy contradicted": "claim-fail",
}
_RECORD_KEYS = {
    "id",
    "section",
    "kind",
    "basis",
    "scale",
    "claim",
    "expected",
    "threshold",
    "why",
    "source",
    "measured",
    "passed",
}

__all__ = ["records", "setup"]


class checks_table_node(nodes.General, nodes.Element):
    """Placeholder replaced by the table of checks after every chapter has been read."""


class budget_table_node(nodes.General, nodes.Element):
    """Placeholder replaced by the per-chapter budget table after every chapter has been read."""


def _placeholder_directive(node_class):
    class _Directive(Directive):
        has_content = False

        def run(self):
            return [node_class()]

    _Directive.__name__ = node_class.__name__.replace("_node", "_directive")
    return _Directive


def _glue_file(app: Sphinx, docname: str) -> Path:
    parts = docname.split("/")
    return Path(app.env.mystnb_config.output_folder, *parts[:-1], parts[-1] + ".glue.json")


def _bad(docname: str, key: str, why: str) -> None:
    LOGGER.warning(
        f"{docname}: glued value {key!r} {why}", location=docname, type="book", subtype="glue"
    )


def _glued(app: Sphinx, docname: str) -> dict:
    """The values the book recorded on ``docname``: its ``check-*`` records (dicts) and its
    ``seed``."""
    path = _glue_file(app, docname)
    if not path.is_file():
        return {}
    out = {}
    for key, value in json.loads(path.read_text(encoding="utf8")).items():
        if not (key.startswith(CHECK_PREFIX) or key == "seed"):
            # figures, tables and other pages' own numbers are none of this module's business
            continue
        text = (value.get("data") or {}).get("text/plain")
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError):
            _bad(
                docname,
                key,
                f"is not a plain literal ({str(text)[:60]!r}); glue it with lib.book.checks.glue "
                "or lib.book.checks.record",
            )
            continue
        if key == "seed":
            if isinstance(parsed, int) and not isinstance(parsed, bool):
                out[key] = parsed
            else:
                _bad(docname, key, f"must be an integer, got {parsed!r}")
            continue
        try:
            record = json.loads(parsed)
        except (TypeError, ValueError):
            _bad(docname, key, "is not a record written by lib.book.checks.record")
            continue
        if not isinstance(record, dict) or not _RECORD_KEYS <= set(record):
            _bad(docname, key, f"lacks the fields {sorted(_RECORD_KEYS - set(record or {}))}")
            continue
        out[key] = record
    return out


def _doc_order(env) -> list[str]:
    """Documents in reading order (the table of contents), then any others alphabetically."""
    order = []

    def walk(doc):
        if doc in order:
            return
        order.append(doc)
        for child in env.toctree_includes.get(doc, []):
            walk(child)

    walk(env.config.root_doc)
    return order + sorted(set(env.found_docs) - set(order))


def records(app: Sphinx) -> list[tuple[str, dict]]:
    """Every check recorded in the book, as ``(docname, record)``, in reading and recording
    order."""
    out = []
    for docname in _doc_order(app.env):
        out += [(docname, r) for k, r in _glued(app, docname).items() if k.startswith(CHECK_PREFIX)]
    return out


def _column_class(header: str) -> str:
    """``"Expected (what it is)"`` -> ``"col-expected"``: a class per column, for the phone
    layout."""
    return "col-" + "".join(c for c in header.split(" ")[0].lower() if c.isalnum())


def _paragraphs(*groups: list[tuple[str, str]]) -> list[nodes.paragraph]:
    """One paragraph per non-empty group of ``(text, css class)`` pieces."""
    out = []
    for group in groups:
        if not group:
            continue
        para = nodes.paragraph()
        for text, css in group:
            para += nodes.inline(text=text, classes=[css]) if css else nodes.Text(text)
        out.append(para)
    return out


def _table(
    headers: list[str],
    widths: list[int],
    rows: list[list],
    classes: list[str],
    row_classes: list[list[str]] | None = None,
) -> nodes.table:
    """A docutils table; a cell is a string, a ready paragraph node or a list of them; every cell
    has its column's class, and row ``i`` the classes ``row_classes[i]``."""

    def cell(content, column: str = "") -> nodes.entry:
        entry = nodes.entry(classes=[column] if column else [])
        if isinstance(content, list):
            entry += content
        elif isinstance(content, nodes.paragraph):
            entry += content
        else:
            entry += nodes.paragraph(text=str(content))
        return entry

    table = nodes.table(classes=[*classes, "colwidths-given"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    row = nodes.row()
    for h in headers:
        row += cell(h)
    head += row
    for i, values in enumerate(rows):
        row = nodes.row(classes=row_classes[i] if row_classes else [])
        for header, content in zip(headers, values, strict=True):
            row += cell(content, _column_class(header))
        body += row
    group += head
    group += body
    return table


def _status(text: str, css: str) -> nodes.paragraph:
    para = nodes.paragraph()
    para += nodes.inline(text=text, classes=[css])
    return para


class AggregateTablesTransform(SphinxPostTransform):
    """Fill ``checks-table`` and ``budget-table`` placeholders from every document's results."""

    default_priority = 6

    def _link(self, docname: str, short: bool = False) -> nodes.paragraph:
        para = nodes.paragraph()
        title = self.env.titles[docname].astext() if docname in self.env.titles else docname
        number = self.env.toc_secnumbers.get(docname, {}).get("")
        if number:
            title = ".".join(map(str, number)) + (
                "" if short else " " + title
            )  # "1" or "1 The Boltzmann operator"
        elif short:
            title = title.split(":")[0]
        uri = self.app.builder.get_relative_uri(self.env.docname, docname)
        para += nodes.reference("", title, refuri=uri, internal=True)
        return para

    def _section(self, record: dict, recorded: bool) -> tuple[str | None, nodes.paragraph]:
        """The document of the section that computes ``record``, and the check id linked to it
        (a recorded check whose section label is unknown is a build warning)."""
        para = nodes.paragraph()
        target = self.env.domaindata["std"]["labels"].get(record["section"])
        if target is None:
            if recorded:
                LOGGER.warning(
                    f"checks-table: check {record['id']}: unknown section label "
                    f"{record['section']!r} (lib/book/checks.toml)",
                    type="book",
                    subtype="checks",
                )
            para += nodes.Text(record["id"])
            return None, para
        docname, anchor = target[0], target[1]
        uri = self.app.builder.get_relative_uri(self.env.docname, docname) + "#" + anchor
        para += nodes.reference("", record["id"], refuri=uri, internal=True)
        return docname, para

    def _checks_rows(self) -> list[tuple[dict, str | None]]:
        """Every registered check: its record where a chapter recorded it, else "not run"."""
        from lib.book import registry

        found = records(self.app)
        seen = {r["id"] for _, r in found}
        unknown = sorted(seen - set(registry.registry()))
        if unknown:
            LOGGER.warning(
                "checks-table: checks recorded but not registered in lib/book/checks.toml: "
                f"{unknown}",
                type="book",
                subtype="checks",
            )
        out = [(r, doc) for doc, r in found]
        for check_id, spec in registry.registry().items():
            if check_id in seen:
                continue
            out.append(
                (
                    {
                        **{k: spec[k] for k in ("id", "section", "kind", "basis", "why", "source")},
                        "claim": spec["claim"].replace("{{", "{").replace("}}", "}"),
                        "expected": spec["expected"].replace("{{", "{").replace("}}", "}"),
                        "threshold": spec.get("threshold", ""),
                        "scale": " or ".join(spec["scale"]),
                        "measured": "not run: no chapter recorded it in this build",
                        "passed": None,
                    },
                    None,
                )
            )
        return out

    def run(self, **kwargs):
        for placeholder in list(self.document.findall(checks_table_node)):
            self._checks_table(placeholder)
        for placeholder in list(self.document.findall(budget_table_node)):
            self._budget_table(placeholder)

    def _check_row(self, r: dict, doc: str | None, everything: list[dict]) -> tuple[list, list]:
        """One check's row of the claims table, and the row's classes (kind, status, chapter)."""
        from lib.book import registry

        section_doc, check = self._section(r, recorded=doc is not None)
        doc = doc or section_doc
        word = registry.status(r, registry.counterpart_of(r, everything))
        number = self.env.toc_secnumbers.get(doc, {}).get("") if doc else None
        classes = [
            "claims-row",
            f"kind-{r['kind']}",
            "status-" + word.lower().replace(" ", "-"),
            f"chapter-{number[0] if number else 'none'}",
        ]
        row = [
            check,
            _paragraphs([(r["kind"], "claim-kind")]),
            _status(word, STATUS_CLASS[word]),
            self._link(doc, short=True) if doc else "-",
            _paragraphs(
                [(r["claim"], "")],
                [(f"Why a {r['kind']}: {r['why']}", "claim-why")],
            ),
            r["scale"],
            r["measured"],
            _paragraphs(
                [(f"{r['expected']} ({r['basis']})", "")],
                [("threshold: " + r["threshold"], "claim-threshold")] if r["threshold"] else [],
            ),
            r["source"],
        ]
        return row, classes

    def _checks_table(self, placeholder) -> None:
        """The claims page's table of every registered check (the PDF's: fewer columns)."""
        from lib.book import registry

        found = self._checks_rows()
        if not found:
            LOGGER.warning("checks-table: no check recorded in any chapter", location=placeholder)
        rows, row_classes = [], []
        everything = [r for r, _ in found]
        for r, doc in found:
            row, classes = self._check_row(r, doc, everything)
            rows.append(row)
            row_classes.append(classes)
        count = nodes.paragraph(classes=["claims-count"])
        count += nodes.strong(text=registry.tally([r for r, _ in found]))
        if self.app.builder.format == "latex":
            # the PDF's page is too narrow for nine columns (27 pages of thin columns): its
            # table keeps what a reader scans for, and the site's has the rest
            note = nodes.paragraph(
                text="In the PDF this table lists each check's claim, status and measured "
                "value; the claims page of the website adds, for each, why it is a test or "
                "a demonstration, the scale it ran at, what was expected, its threshold and "
                "its source."
            )
            summary = _table(
                ["Check", "Kind", "Status", "Ch.", "Claim", "Measured"],
                [9, 10, 8, 4, 42, 27],
                [
                    [row[0], row[1], row[2], row[3], r["claim"], row[6]]
                    for row, (r, _) in zip(rows, found, strict=True)
                ],
                ["claims-table"],
                row_classes,
            )
            placeholder.replace_self([count, note, summary])
            return
        table = _table(
            [
                "Check",
                "Kind",
                "Status",
                "Ch.",
                "Claim",
                "Scale",
                "Measured",
                "Expected (what it is)",
                "Source",
            ],
            [9, 10, 9, 4, 26, 7, 13, 13, 10],
            rows,
            ["claims-table"],
            row_classes,
        )
        placeholder.replace_self([count, table])

    def _budget_table(self, placeholder) -> None:
        """The reproducibility page's table of every chapter's seed, budget and execution time."""
        from myst_nb.sphinx_ import NbMetadataCollector

        rows = []
        for docname in _doc_order(self.env):
            budget = self.env.metadata.get(docname, {}).get("budget_seconds")
            data = NbMetadataCollector.get_exec_data(self.env, docname)
            if budget is None or not data:
                continue
            runtime = data.get("runtime")
            ok = bool(data.get("succeeded")) and runtime is not None and runtime <= float(budget)
            seed = _glued(self.app, docname).get("seed", "-")
            state = (
                ("within budget", "claim-pass")
                if ok
                else ("OVER BUDGET" if data.get("succeeded") else "FAILED", "claim-fail")
            )
            rows.append(
                [
                    self._link(docname),
                    str(seed),
                    f"{float(budget):.0f}",
                    "-" if runtime is None else f"{runtime:.1f}",
                    data.get("method", "-"),
                    _status(*state),
                ]
            )
        if not rows:
            LOGGER.warning(
                "budget-table: no executed chapter declares budget_seconds",
                location=placeholder,
            )
        placeholder.replace_self(
            _table(
                ["Chapter", "Seed", "Budget (s)", "Execution (s)", "Method", "Status"],
                [28, 8, 10, 12, 10, 14],
                rows,
                ["budget-table"],
            )
        )


#: Where ``make mutate`` stores its last outcome, relative to the book's root.
MUTATION_FILE = Path("results", "mutation", "last.json")
#: The CSS class of each outcome of a mutant (tools/mutate.py).
OUTCOME_CLASS = {
    "caught": "claim-pass",
    "shown": "claim-shown",
    "stopped": "claim-shown",
    "survived": "claim-fail",
}


class MutationTableDirective(Directive):
    """The last ``make mutate``: a count of its outcomes and a table of its mutants, read from
    :data:`MUTATION_FILE` when the page is read (the page depends on the file)."""

    has_content = False

    def run(self):
        env = self.state.document.settings.env
        path = Path(env.srcdir, MUTATION_FILE)
        env.note_dependency(str(path))
        if not path.is_file():
            LOGGER.warning(
                f"mutation-table: {MUTATION_FILE} is missing: run `make mutate`",
                location=(env.docname, self.lineno),
            )
            return [nodes.paragraph(text=f"No stored outcome of make mutate ({MUTATION_FILE}).")]
        stored = json.loads(path.read_text(encoding="utf8"))
        summary, rows = stored["result"]["summary"], stored["result"]["mutants"]
        where = stored["provenance"]
        count = nodes.paragraph(classes=["mutation-count"])
        count += nodes.strong(
            text=f"{summary['caught']} of {summary['mutants']} mutants caught by a test "
            f"({summary['caught_share']:.0%})"
        )
        count += nodes.Text(
            f"; {summary['shown']} shown by a demonstration only, {summary['stopped']} stopped "
            f"a chapter without a failing check, {summary['survived']} survived (make mutate at "
            f"commit {where['commit']}, {where['date'][:10]})."
        )
        table = _table(
            ["Mutant", "Function", "Kind", "Outcome", "Caught by"],
            [22, 26, 16, 10, 26],
            [
                [
                    r["id"],
                    _paragraphs([(r["function"].removeprefix("lib/").replace(".py:", "."), "")]),
                    r["kind"],
                    _status(r["outcome"], OUTCOME_CLASS[r["outcome"]]),
                    ", ".join(r["failed_checks"]) or (r["errors"][0][:80] if r["errors"] else "-"),
                ]
                for r in rows
            ],
            ["mutation-table"],
        )
        return [count, table]


def _report_not_run(app: Sphinx, exception) -> None:
    """One line per check that did not run (a dataset missing on this machine), at the end of the
    build."""
    if exception is not None or app.builder.format != "html":
        return
    for docname, record in records(app):
        if record["passed"] is None:
            LOGGER.info(
                f"book_sphinx: check {record['id']} ({docname}) was not run: "
                f"{record['measured'].removeprefix('not run: ')}"
            )


def _reread_aggregates(app: Sphinx, env, added, changed, removed):
    pages = [p for p in app.config.book_aggregate_pages if p in env.found_docs]
    others = (set(added) | set(changed) | set(removed)) - set(pages)
    return pages if others else []


def setup(app: Sphinx) -> None:
    app.add_config_value(
        "book_aggregate_pages", ["chapters/claims", "chapters/reproducibility"], "env"
    )
    app.connect("env-get-outdated", _reread_aggregates)
    app.connect("build-finished", _report_not_run, priority=800)
    for name, node in (("checks-table", checks_table_node), ("budget-table", budget_table_node)):
        app.add_node(node)
        app.add_directive(name, _placeholder_directive(node))
    app.add_post_transform(AggregateTablesTransform)
    app.add_directive("mutation-table", MutationTableDirective)
