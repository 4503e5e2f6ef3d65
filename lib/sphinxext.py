"""Sphinx extension that keeps the book honest; listed in ``_config.yml`` (``extra_extensions``).

It does three things:

1. **Stale-cache guard.** jupyter-cache re-runs a chapter only when its code cells change, so an
   edit to ``lib/`` would leave pages showing results of old code. At ``config-inited`` the
   extension hashes ``lib/``, the ``requirements*.txt`` files, ``environment.yml`` and
   ``_config.yml``; when the hash differs from the one kept beside the execution cache
   (``_build/.jupyter_cache.inputs-sha256``), it deletes the execution cache and the doctrees,
   so every chapter is executed again. The stamp is written only after a clean build, so a
   failed build is never followed by a rebuild that finds "nothing out of date".
2. **Build flag.** It sets ``BOOK_BUILD=1`` in the environment the kernels inherit, which
   silences progress bars (:data:`lib.config.IN_BUILD`).
3. **Aggregate tables.** After all chapters are read, the ``claims-table`` directive becomes a
   table of every check recorded with :func:`lib.claims.record` in every chapter (read from
   myst-nb's glue files), and ``budget-table`` a table of each chapter's fast-mode budget (its
   ``budget_seconds`` front matter) beside its measured execution time. Pages listed in
   ``book_aggregate_pages`` are re-read whenever another page is, so neither goes stale.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from ._constants import CLAIM_PREFIX

LOGGER = logging.getLogger(__name__)
HASH_FILE = ".jupyter_cache.inputs-sha256"

__all__ = ["inputs_hash", "setup"]


def _hashed_files(root: Path) -> list[Path]:
    files = [p for p in (root / "lib").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files += sorted(root.glob("requirements*.txt"))
    files += [p for p in (root / "environment.yml", root / "_config.yml") if p.is_file()]
    return sorted(set(files))


def inputs_hash(root: str | Path) -> str:
    """SHA-256 over the paths and bytes of ``lib/``, requirements, ``environment.yml``, ``_config.yml``,
    and the book mode (``BOOK_MODE``: a fast-mode cache must not serve a full-mode build).

    Args:
        root: the book's root folder (Sphinx's ``srcdir``).

    Returns:
        The hex digest. Any edit to a hashed file, or a file added or removed, changes it.

    Raises:
        ValueError: if ``root`` is not an existing folder.
    """
    if not isinstance(root, str | Path) or not str(root) or not Path(root).is_dir():
        raise ValueError(f"root must be an existing folder, got {root!r}")
    root = Path(root)
    digest = hashlib.sha256()
    for path in _hashed_files(root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    from .config import read_mode

    digest.update(f"BOOK_MODE={read_mode()}".encode())
    return digest.hexdigest()


def _guard_cache(app: Sphinx, config) -> None:
    cache = config.nb_execution_cache_path or Path(app.outdir).parent / ".jupyter_cache"
    cache = Path(app.srcdir, cache).resolve()
    stamp = cache.parent / HASH_FILE
    new = inputs_hash(app.srcdir)
    old = stamp.read_text().strip() if stamp.is_file() else None
    app._book_stamp = (stamp, new)
    if old != new:
        if cache.exists() or Path(app.doctreedir).exists():
            LOGGER.info("lib/, requirements or _config.yml changed: clearing %s and doctrees", cache)
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(app.doctreedir, ignore_errors=True)
        stamp.unlink(missing_ok=True)


def _write_stamp(app: Sphinx, exception) -> None:
    """Keep the inputs hash only after a clean build.

    After a failed build (an exception, or warnings under ``-W --keep-going``) the stamp is
    removed, so the next build starts from scratch and reports the failure again instead of
    finding nothing out of date.
    """
    stamp, digest = getattr(app, "_book_stamp", (None, None))
    if stamp is None:
        return
    if exception is None and app.statuscode == 0:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest + "\n")
    else:
        stamp.unlink(missing_ok=True)
        shutil.rmtree(app.doctreedir, ignore_errors=True)


class claims_table_node(nodes.General, nodes.Element):
    """Placeholder replaced by the claims table after every chapter has been read."""


class budget_table_node(nodes.General, nodes.Element):
    """Placeholder replaced by the per-chapter budget table after every chapter has been read."""


def _placeholder_directive(node_class):
    class _Directive(Directive):
        has_content = False

        def run(self):
            return [node_class()]

    _Directive.__name__ = node_class.__name__.replace("_node", "_directive")
    return _Directive


def _glued(app: Sphinx, docname: str) -> dict:
    """The values a document glued (myst-nb's ``<doc>.glue.json``), as Python objects."""
    path = Path(app.env.mystnb_config.output_folder, *docname.split("/")[:-1], docname.split("/")[-1] + ".glue.json")
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf8"))
    return {key: ast.literal_eval(value["data"]["text/plain"]) for key, value in data.items()}


def _records(app: Sphinx) -> list[tuple[str, dict]]:
    out = []
    for docname in _doc_order(app.env):
        glued = _glued(app, docname)
        for key in (k for k in glued if k.startswith(CLAIM_PREFIX)):  # recording order
            out.append((docname, json.loads(glued[key])))
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


def _table(headers: list[str], widths: list[int], rows: list[list], classes: list[str]) -> nodes.table:
    """A docutils table; a cell is a string or a ready paragraph node."""

    def cell(content) -> nodes.entry:
        entry = nodes.entry()
        entry += content if isinstance(content, nodes.paragraph) else nodes.paragraph(text=str(content))
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
    for values in rows:
        row = nodes.row()
        for content in values:
            row += cell(content)
        body += row
    group += head
    group += body
    return table


def _status(ok: bool, yes: str = "pass", no: str = "FAIL") -> nodes.paragraph:
    para = nodes.paragraph()
    para += nodes.inline(text=yes if ok else no, classes=["claim-pass" if ok else "claim-fail"])
    return para


class AggregateTablesTransform(SphinxPostTransform):
    """Fill ``claims-table`` and ``budget-table`` placeholders from every document's results."""

    default_priority = 6

    def _link(self, docname: str, short: bool = False) -> nodes.paragraph:
        para = nodes.paragraph()
        title = self.env.titles[docname].astext() if docname in self.env.titles else docname
        if short and title.split(".")[0].isdigit():
            title = title.split(".")[0]  # "1. The Boltzmann operator" -> "1"
        uri = self.app.builder.get_relative_uri(self.env.docname, docname)
        para += nodes.reference("", title, refuri=uri, internal=True)
        return para

    def run(self, **kwargs):
        for placeholder in list(self.document.findall(claims_table_node)):
            records = _records(self.app)
            if not records:
                LOGGER.warning("claims-table: no check recorded in any chapter", location=placeholder)
            rows = [[r["id"], self._link(doc, short=True), r["source"], r["claim"], r["measured"],
                     r["expected"], _status(r["passed"])] for doc, r in records]
            placeholder.replace_self(_table(
                ["Check", "Ch.", "Source", "Claim", "Measured", "Expected", "Status"],
                [6, 4, 14, 40, 16, 12, 8], rows, ["claims-table"]))
        for placeholder in list(self.document.findall(budget_table_node)):
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
                rows.append([self._link(docname), str(seed), f"{float(budget):.0f}",
                             "-" if runtime is None else f"{runtime:.1f}", data.get("method", "-"),
                             _status(ok, "within budget", "OVER BUDGET" if data.get("succeeded") else "FAILED")])
            if not rows:
                LOGGER.warning("budget-table: no executed chapter declares budget_seconds", location=placeholder)
            placeholder.replace_self(_table(
                ["Chapter", "Seed", "Budget (s)", "Execution (s)", "Method", "Status"], [28, 8, 10, 12, 10, 14],
                rows, ["budget-table"]))


def _notebook_download(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Offer the executed notebook of each MyST notebook page as a ``.ipynb`` download.

    sphinx-book-theme copies it only when a launch service (Binder, Colab, ...) is configured;
    the book has none (it is built offline), so this does the copy and sets ``ipynb_source``.
    Runs before the theme's header buttons (priority 400 < 501).
    """
    if doctree is None or not context.get("sourcename", "").endswith(".md"):
        return
    executed = Path(app.env.mystnb_config.output_folder, *pagename.split("/")).with_suffix(".ipynb")
    if not executed.is_file():
        return
    target = Path(app.outdir, "_sources", *pagename.split("/")).with_suffix(".ipynb")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(executed, target)
    context["ipynb_source"] = pagename + ".ipynb"


def _dedupe_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Drop repeated ``<script>`` entries from a page.

    sphinx-thebe (always loaded by jupyter-book) registers its inline configuration script,
    which declares ``const THEBE_JS_URL``, at every read phase; on Sphinx 7.4 it can reach a page
    twice, and the second copy is a JavaScript ``SyntaxError`` in the browser console.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        attributes = getattr(js, "attributes", {}) or {}
        filename = getattr(js, "filename", js) or ""  # inline scripts come as None and as ""
        key = (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    context["script_files"] = unique


def _reread_aggregates(app: Sphinx, env, added, changed, removed):
    pages = [p for p in app.config.book_aggregate_pages if p in env.found_docs]
    others = (set(added) | set(changed) | set(removed)) - set(pages)
    return pages if others else []


def setup(app: Sphinx) -> dict:
    """Register the guard, the build flag, the ``claims-table``/``budget-table`` directives."""
    os.environ["BOOK_BUILD"] = "1"
    app.add_config_value("book_aggregate_pages", ["chapters/claims", "chapters/reproducibility"], "env")
    app.connect("config-inited", _guard_cache, priority=100)
    app.connect("build-finished", _write_stamp)
    app.connect("env-get-outdated", _reread_aggregates)
    app.connect("html-page-context", _notebook_download, priority=400)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    for name, node in (("claims-table", claims_table_node), ("budget-table", budget_table_node)):
        app.add_node(node)
        app.add_directive(name, _placeholder_directive(node))
    app.add_post_transform(AggregateTablesTransform)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
