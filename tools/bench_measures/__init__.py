"""The measures of ``make bench`` (``tools/bench.py``), one module each; ``tools/bench.py`` parses
the command line and runs them.

* :mod:`common` — the repository's paths, the targets, the store of a measure and the machine's
  float32 peak;
* :mod:`builds` — the cold build, the cached build, the rebuild and each chapter's execution time;
* :mod:`training` — paper-scale CoNLL-2003 training against the peak, one attention layer rank 1
  against full rank, and Chapter 5's classifier epoch;
* :mod:`batched` — independent runs one at a time against the same runs batched, and the local
  cluster's two shapes;
* :mod:`redraw` — the redraw time of every interactive figure of the built site;
* :mod:`guards` — the work guards' times projected to a call at their limits;
* :mod:`memory` — the peak memory of every page with code, for Binder.

Each measure raises ``SystemExit`` with one line when a build or a page fails; the source of
every target is ``tools/bench.py``'s docstring (the book's own budgets).
"""
