r"""The noise experiment of LHSL Appendix B: does the scale of W_K and W_Q fall as training noise
grows? (Chapter 5)

LHSL's Appendix B ("Proof-of-Concept Experiments", Figure 2) trains an attention model on MNIST,
Fashion-MNIST and CIFAR-10 with a growing ratio of injected label noise and reports that the
:math:`\ell_2` norms of :math:`W_K` and :math:`W_Q` decline monotonically as the noise grows. The
sources give neither the model nor any setting: every choice here is the book's own
(:data:`~lib.experiments.noise.settings.NOISE_SETTINGS`), and both kinds of noise a summary could
mean are run (label flips and Gaussian pixel noise).

The package's modules, one job each:

* :mod:`lib.experiments.noise.settings` — the settings per mode, the datasets, the version of the
  code, and the names and keys under which runs are stored;
* :mod:`lib.experiments.noise.runs` — one run trained and measured
  (:func:`~lib.experiments.noise.runs.noise_experiment`), several stacked, the pilot that fixes the
  full runs' length, and every run of a dataset, live or stored
  (:func:`~lib.experiments.noise.runs.noise_runs`);
* :mod:`lib.experiments.noise.memorising` — the arm whose model can fit the flipped labels;
* :mod:`lib.experiments.noise.factorial` — the factorial between fast and full mode's settings
  and its analysis (response, main effects, the yardstick of an effect);
* :mod:`lib.experiments.noise.trends` — the trend test of check C19 and the tables and seed
  statistics built on it.

Every public name of these modules is also an attribute of the package (``noise.noise_runs``,
``noise.NOISE_SETTINGS``), as the chapters and ``make full`` read them; ``__all__`` lists the
modules.
"""

from __future__ import annotations

from . import factorial, memorising, runs, settings, trends
from .factorial import FACTORIAL as FACTORIAL
from .factorial import effect_yardstick as effect_yardstick
from .factorial import factorial_design as factorial_design
from .factorial import factorial_run_key as factorial_run_key
from .factorial import factorial_runs as factorial_runs
from .factorial import main_effects as main_effects
from .factorial import noise_response as noise_response
from .memorising import MEMORISING_SETTINGS as MEMORISING_SETTINGS
from .memorising import MEMORISING_TARGET as MEMORISING_TARGET
from .memorising import memorising_run_key as memorising_run_key
from .memorising import memorising_runs as memorising_runs
from .runs import noise_experiment as noise_experiment
from .runs import noise_experiments as noise_experiments
from .runs import noise_pilot as noise_pilot
from .runs import noise_runs as noise_runs
from .runs import run_epochs as run_epochs
from .settings import NOISE_DATASETS as NOISE_DATASETS
from .settings import NOISE_KINDS as NOISE_KINDS
from .settings import NOISE_SEEDS as NOISE_SEEDS
from .settings import NOISE_SETTINGS as NOISE_SETTINGS
from .settings import NOISE_VERSION as NOISE_VERSION
from .settings import PILOT as PILOT
from .settings import RUN_KEYS as RUN_KEYS
from .settings import noise_datasets as noise_datasets
from .settings import noise_run_key as noise_run_key
from .settings import noise_run_names as noise_run_names
from .settings import noise_run_names_for as noise_run_names_for
from .settings import pilot_settings as pilot_settings
from .settings import run_keys as run_keys
from .trends import curves_by_kind as curves_by_kind
from .trends import epochs_case as epochs_case
from .trends import norm_trends as norm_trends
from .trends import seed_stats as seed_stats
from .trends import sharpness_trends as sharpness_trends
from .trends import trend_test as trend_test

__all__ = ["factorial", "memorising", "runs", "settings", "trends"]
