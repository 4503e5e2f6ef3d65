"""The site's search: chapters ranked before the API reference.

Sphinx ranks an API entry whose name matches a query above every page of prose.
``static/search.js`` (Sphinx's ``html_search_scorer``) lowers the API page's results below every
other (``_static/book.js`` cleans the snippets); the browser test checks both on the served site.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

__all__ = ["SCORER", "setup"]

#: The scorer file (its path is absolute, so Sphinx's join with the configuration folder keeps it).
SCORER = Path(__file__).parent / "static" / "search.js"


def _use_scorer(app: Sphinx, config: Config) -> None:
    if not config.html_search_scorer:
        config.html_search_scorer = str(SCORER)


def setup(app: Sphinx) -> None:
    app.connect("config-inited", _use_scorer)
