"""The website's slider figures of Chapters 1-7 and Chapter 5's noise figure, built from data the
chapters compute.

Each function takes the numbers a chapter has computed with the modules of ``lib`` (nothing
here computes mathematics) and returns the chapter's :class:`~lib.book.interactive.SliderFigure`:
one list of plotly traces per slider position, the axes, the slider's label and the figure's
text description. The chapters keep the construction and its check in view; the trace
dictionaries, which only say how to draw, live here.

* :func:`boltzmann_slider` — Chapter 1, softmax weights and the Boltzmann operator against β;
* :func:`contextual_gamma_slider` — Chapter 2, context ids against the inverse temperature γ;
* :func:`paper_scale_slider` — Chapter 3, the stored paper-scale CoNLL runs epoch by epoch;
* :func:`approx_line_slider` — Chapter 4, K&S's approximator along a line, against the grid;
* :func:`partition_slider` — Chapter 5, a max-affine partition's indicator error against β;
* :func:`context_length_slider` — Chapter 6, the cross-attention lookup against its context
  length;
* :func:`capacity_slider` — Chapter 7, the share of labels training memorizes against the
  feed-forward width, for each number of sequences;
* :func:`lookup_slider` — Chapter 7, the partition a trained lookup layer finds against the
  construction's grid, for each grid side.

Two static figures live here too, for the same reason (matplotlib Figures): :func:`norm_figure`
— Chapter 5, the attention norms' seed means and spreads against the noise level; and
:func:`pipeline_figure` — Chapter 4, the approximator's stages as a row of boxes (on phones, a
snake of rows).

Every function raises :class:`ValueError`, naming the argument, for input of the wrong shape or
length (and :class:`~lib.book.interactive.SliderFigure` for a bad ``default``).

The builders live in private modules by chapter (``_chapters_1_4``, ``_chapters_5_7``, and
``_static`` for the matplotlib figures; the checks of their arguments they share in ``_shared``)
and are re-exported here: chapters call ``figures.<name>``.

Source: the book's own figures. Used by the interactive figure of each of Chapters 1-7 and by
Chapter 5's noise figures.
"""

from __future__ import annotations

from ._chapters_1_4 import approx_line_slider as approx_line_slider
from ._chapters_1_4 import boltzmann_slider as boltzmann_slider
from ._chapters_1_4 import contextual_gamma_slider as contextual_gamma_slider
from ._chapters_1_4 import paper_scale_slider as paper_scale_slider
from ._chapters_5_7 import capacity_slider as capacity_slider
from ._chapters_5_7 import context_length_slider as context_length_slider
from ._chapters_5_7 import lookup_slider as lookup_slider
from ._chapters_5_7 import partition_slider as partition_slider
from ._static import norm_figure as norm_figure
from ._static import pipeline_figure as pipeline_figure

__all__ = [
    "pipeline_figure",
    "boltzmann_slider",
    "contextual_gamma_slider",
    "paper_scale_slider",
    "approx_line_slider",
    "partition_slider",
    "norm_figure",
    "context_length_slider",
    "capacity_slider",
    "lookup_slider",
]
