"""Stands in for the package ``rfc3987-syntax`` while ``make bench`` times the book's builds.

A reader's ``make book`` environment does not have ``rfc3987-syntax``: only the test tools bring
it (``jupyter-server``, for the notebook round-trip test), and with it every process that imports
``jsonschema`` (the build and each chapter's kernel) compiles its grammars, about a second each.
``tools/bench.py`` puts this folder first on ``PYTHONPATH`` of the builds it times, so that
``import rfc3987_syntax`` fails as it does where the package is absent (``jsonschema`` then leaves
out the one format check that uses it, which the book never asks for).
"""

raise ImportError("rfc3987_syntax is not installed in a reader's make book environment")
