"""Phones get each wide figure drawn for their width, not the desktop figure scrolling in a box.

A page never shows a figure's text under 9 CSS px (``_static/book.js``), so a full-width figure
was wider than a phone's column and scrolled sideways. Every figure whose text would not fit
carries a second PNG, drawn by :func:`lib.book.plotting.phone_png` at a narrower width with the
same fonts, as the output metadata ``book-phone`` of its ``image/png`` (the notebook keeps it;
the execution cache stores it with the output). This module serves it to narrow screens:

* :func:`_render_image` wraps the pinned myst-nb's ``NbElementRenderer.render_image`` (the
  version of :data:`.patching.WRITTEN_FOR`), which keeps only ``width`` and ``height`` of an
  image's output metadata: it writes the phone PNG beside the desktop one (named by its hash, as
  myst-nb names outputs) and records its URI on the image node (``book_phone``), registering the
  file with the environment's images for the page;
* :func:`visit_image` and :func:`depart_image` wrap the HTML writer's image visitor: an image with
  a phone rendition is written as ``<picture>`` whose ``<source media="(max-width: 760px)">`` is
  the phone PNG (the width at which ``_static/book.css`` switches to the phone layout), and the
  builder copies that file to ``_images`` as it does the desktop one.

The PDF and the downloaded notebooks keep the desktop figure (the LaTeX writer ignores the
attribute; :mod:`.notebooks` drops the metadata from downloads).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import posixpath
import urllib.parse

from docutils import nodes
from sphinx.application import Sphinx

from .patching import NO_ISSUE, require_version

TARGET = "myst_nb.core.render.NbElementRenderer.render_image"
ISSUE = (
    f"{NO_ISSUE} (searched executablebooks/MyST-NB for alternative or responsive renditions "
    "of an image output; render_image keeps only width and height of its metadata, PR 588)"
)
#: The output metadata key of the phone rendition (:func:`lib.book.plotting.figure_outputs`).
KEY = "book-phone"
#: The image node attribute that holds the phone rendition's URI.
ATTR = "book_phone"
#: Screens this narrow get the phone rendition (``_static/book.css``'s phone layout).
MEDIA = "(max-width: 760px)"


def phone_uri(renderer, data) -> str | None:
    """Write the phone rendition of an ``image/png`` output beside its desktop PNG and return
    its URI (as myst-nb's ``write_file`` returns one), or ``None`` when it has none."""
    if data.mime_type != "image/png":
        return None
    encoded = data.output_metadata.get(data.mime_type, {}).get(KEY)
    if not isinstance(encoded, str):
        return None
    png = base64.b64decode(encoded)
    name = f"{hashlib.sha256(png).hexdigest()}.png"
    return renderer.write_file([name], png, overwrite=False, exists_ok=True)


def _render_image(original):
    @functools.wraps(original)
    def render_image(self, data):
        result = original(self, data)
        uri = phone_uri(self, data)
        env = self.renderer.sphinx_env
        if uri and env is not None and result and isinstance(result[0], nodes.image):
            relative, _ = env.relfn2path(uri, env.docname)
            env.images.add_file(env.docname, relative)
            result[0][ATTR] = relative
        return result

    return render_image


def visit_image(self, node: nodes.image) -> None:
    """Open ``<picture>`` with the phone source before the desktop ``<img>`` when the image
    has a phone rendition; then the HTML writer's own visitor."""
    phone = node.get(ATTR)
    if phone and phone in self.builder.env.images:
        name = self.builder.env.images[phone][1]
        self.builder.images[phone] = name  # the builder copies it to _images with the rest
        src = posixpath.join(self.builder.imgpath, urllib.parse.quote(name))
        self.body.append(f'<picture><source media="{MEDIA}" srcset="{src}">')
        node["book_picture"] = True
    type(self).visit_image(self, node)


def depart_image(self, node: nodes.image) -> None:
    """The HTML writer's own departure, then close ``<picture>``."""
    type(self).depart_image(self, node)
    if node.get("book_picture"):
        self.body.append("</picture>")


def setup(app: Sphinx) -> None:
    require_version("myst-nb", target=TARGET, issue=ISSUE)
    from myst_nb.core.render import NbElementRenderer

    if not hasattr(NbElementRenderer.render_image, "__wrapped__"):
        NbElementRenderer.render_image = _render_image(NbElementRenderer.render_image)
    app.add_node(nodes.image, override=True, html=(visit_image, depart_image))
