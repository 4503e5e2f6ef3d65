"""The experiments ``make full`` computes, each declared once: how its runs are planned as tasks,
how one task is computed, what it costs, and how its stored runs are reported.

:data:`EXPERIMENTS` maps each experiment's name (the folder of ``results/`` its runs are stored
in) to an :class:`Experiment`. :func:`lib.experiments.tasks.plan`,
:func:`~lib.experiments.tasks.execute` and :func:`~lib.experiments.tasks.expected_seconds` read it,
and so does ``make full``'s report (``tools/full_mode.py``); adding an experiment means adding
one entry here, not a branch in each.

* ``conll`` — K&S Section 5's CoNLL-2003 experiment (Chapter 3, :mod:`lib.experiments.conll`):
  one task per run;
* ``noise`` — LHSL Appendix B's noise experiment (Chapter 5, ``lib.experiments.noise``):
  batches of up to ``noise_batch`` runs of one dataset trained as one stacked model, then one task
  per run of the memorising arm and of the factorial;
* ``trained`` — the capacity grid of Chapter 7 (:mod:`lib.experiments.trained`), one task per cell;
* ``lookup`` — the learned lookups of Chapter 7 (:mod:`lib.experiments.learned_lookup`), one task
  per run.

Source: the book's own (``make full``; README, "Modes and stored results").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from .._validate import flag
from . import conll, learned_lookup, noise, store, trained
from .conll_runs import _as_run

__all__ = ["Task", "PlanRequest", "Experiment", "EXPERIMENTS"]


@dataclass(frozen=True)
class Task:
    """One unit of ``make full``'s work: one CoNLL-2003 run, a batch of noise runs, one cell of
    the capacity grid, or one learned lookup.

    Attributes:
        label: a short name for progress lines (``"conll layers-1-rank-1"``).
        experiment: a name of :data:`EXPERIMENTS` (``"conll"``, ``"noise"``, ``"trained"`` or
            ``"lookup"``).
        version: the experiment code's version its results are stored under.
        runs: ``(run name, settings)`` of every run it stores, in the order
            :func:`lib.experiments.tasks.execute` returns them.
        params: what :func:`lib.experiments.tasks.execute` needs (JSON values).
    """

    label: str
    experiment: str
    version: int
    runs: tuple = field(default_factory=tuple)
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PlanRequest:
    """What :func:`lib.experiments.tasks.plan` was asked for, as every experiment's planner reads
    it (the arguments of ``plan``, checked there)."""

    mode: str
    noise_batch: int
    datasets: Iterable[str] | None
    conll_runs: Iterable[tuple] | None
    noise_settings: dict | None
    root: str | os.PathLike | None
    trained_cells: bool | None

    @property
    def own_settings(self) -> bool:
        """Whether the request is for full mode with its own noise settings, not the tests' tiny
        ones; the arms, the capacity grid and the lookups are planned by default only then."""
        return self.mode == "full" and self.noise_settings is None


#: One line of ``make full``'s report, as the row's name, the stored wall time of its runs in
#: seconds and the line printed.
Report = tuple[str, float, str]


@dataclass(frozen=True)
class Experiment:
    """One experiment of ``make full``.

    Attributes:
        plan: the tasks of its runs not stored yet, for a :class:`PlanRequest`, in the order they
            are listed (``plan`` lists the experiments in :data:`EXPERIMENTS`' order).
        compute: the results of the runs of a task at the given indices of ``task.runs`` (those
            not stored yet; never empty), as the experiment's compute function returns them.
        seconds: a rough cost of one task in seconds on one of the book's cores (only the order
            of the costs matters: longest first).
        report: the report lines of its stored runs, for the noise datasets ``make full`` ran
            (raises as the experiment's readers do where a run is missing).
    """

    plan: Callable[[PlanRequest], list[Task]]
    compute: Callable[[Task, Sequence[int]], list[dict]]
    seconds: Callable[[Task], float]
    report: Callable[[Sequence[str]], list[Report]]


# CoNLL-2003 (Chapter 3)


def _conll_plan(request: PlanRequest) -> list[Task]:
    """One task per CoNLL-2003 run not stored yet (in full mode by default also the SGD grid and,
    once it is stored, its best setting's long run)."""
    mode, conll_runs = request.mode, request.conll_runs
    grid = conll_runs is None and mode == "full"
    if conll_runs is None:
        conll_runs = conll.full_runs() if mode == "full" else conll.live_runs(mode)
    wanted = [
        conll.conll_run_settings(n_layers, rank, mode, seed=seed, kind=kind)
        for n_layers, rank, seed, kind in (
            (*entry, 0, "ours") if len(entry) == 2 else entry for entry in conll_runs
        )
    ]
    if grid:
        wanted += _grid_runs(request.root)
    return [
        Task(f"conll {run}", "conll", conll.CONLL_VERSION, ((run, settings),),
             {"settings": settings})
        for run, settings in wanted
        if store.lookup("conll", run, conll.CONLL_VERSION, settings, request.root) is None
    ]  # fmt: skip


def _grid_runs(root: str | os.PathLike | None) -> list[tuple[str, dict]]:
    """The stored run's name and settings of every point of
    :data:`lib.experiments.conll.SGD_GRID` and, when all of them are stored in ``root``, of the
    best setting's long run (:func:`lib.experiments.conll.sgd_best_settings`); ``make full``
    plans again after computing, so the long run follows the grid in one call."""
    points = {
        (m, lr): conll.sgd_grid_settings(m, lr)
        for m in conll.SGD_GRID["momenta"]
        for lr in conll.SGD_GRID["lrs"]
    }
    runs = {}
    for key, (run, settings) in points.items():
        hit = store.lookup("conll", run, conll.CONLL_VERSION, settings, root)
        if hit is not None:
            runs[key] = _as_run(hit.result, settings, hit.provenance)
    wanted = list(points.values())
    if len(runs) == len(points):
        wanted.append(conll.sgd_best_settings(grid=runs))
    return wanted


def _conll_report(datasets: Sequence[str]) -> list[Report]:
    """The SGD grid of the described model, its best setting, then every run of ``full_runs``."""
    out = []
    described = {
        f"SGD momentum {m:g}, rate {lr:g}": r
        for (m, lr), r in conll.sgd_grid(allow_compute=False).items()
    }
    described["the best SGD setting, cosine fall"] = conll.sgd_best(allow_compute=False)
    for name, result in described.items():
        wall = (result.provenance or {})["wall_s"]  # stored runs carry one
        out.append((f"conll {name}", wall, (
            f"CoNLL-2003, described model, {name}: {len(result.history)} epochs, "
            f"train accuracy {result.train_acc:.4f}, validation {result.val_acc:.4f}; "
            f"stored wall time {wall:.0f} s"
        )))  # fmt: skip
    for layers, rank, seed, kind in conll.full_runs():
        result = conll.conll_run(
            layers, rank, mode="full", seed=seed, kind=kind, allow_compute=False
        )
        reached = result.epochs_to()
        name = f"{kind}, {conll.config_label(layers, rank)}, seed {seed}"
        wall = (result.provenance or {})["wall_s"]  # stored runs carry one
        out.append((f"conll {name}", wall, (
            f"CoNLL-2003, {name}: "
            f"{len(result.history)} epochs, train accuracy {result.train_acc:.4f}, "
            f"validation {result.val_acc:.4f}; first epoch at "
            + ", ".join(f"{k:g}: {v}" for k, v in reached.items())
            + f"; stored wall time {wall:.0f} s ({result.stopped or 'epoch cap'})"
        )))  # fmt: skip
    return out


# The noise experiment (Chapter 5)


def _noise_plan(request: PlanRequest) -> list[Task]:
    """Batches of up to ``noise_batch`` runs of one dataset not stored yet, then (full mode with
    its own settings) one task per run of the memorising arm and of the factorial."""
    mode, root, noise_batch = request.mode, request.root, request.noise_batch
    tasks = []
    noise_settings = request.noise_settings
    settings = dict(noise.NOISE_SETTINGS[mode] if noise_settings is None else noise_settings)
    datasets = request.datasets
    if datasets is None:
        datasets = settings.get("datasets") or noise.noise_datasets()
    for dataset in datasets:
        missing = []
        ds_settings = noise.run_epochs(dataset, settings, allow_compute=False)
        for kind, level, seed in noise.noise_run_names_for(settings):
            run, run_settings = noise.noise_run_key(dataset, kind, level, seed, ds_settings)
            if store.lookup("noise", run, noise.NOISE_VERSION, run_settings, root) is None:
                missing.append(((kind, level, seed), (run, run_settings)))
        for start in range(0, len(missing), noise_batch):
            part = missing[start : start + noise_batch]
            tasks.append(
                Task(
                    f"noise {dataset} {part[0][1][0]}"
                    + (f" +{len(part) - 1}" if len(part) > 1 else ""),
                    "noise",
                    noise.NOISE_VERSION,
                    tuple(key for _, key in part),
                    {
                        "dataset": dataset,
                        "runs": [list(r) for r, _ in part],
                        "settings": noise.run_keys(ds_settings),
                    },
                )
            )
    if request.own_settings:
        tasks += _arm_tasks(datasets, root)
    return tasks


def _arm_tasks(datasets: Iterable[str], root: str | os.PathLike | None) -> list[Task]:
    """One task per run of the noise experiment's memorising arm
    (:func:`lib.experiments.noise.memorising.memorising_runs`) and of its factorial
    (:func:`lib.experiments.noise.factorial.factorial_runs`) not stored yet in ``root``, for the
    given datasets."""
    # (dataset, arm, run, settings, level, seed, the settings noise_experiment takes)
    wanted = []
    arm = noise.MEMORISING_SETTINGS
    for dataset in (d for d in datasets if d in arm["datasets"]):
        for _, level, seed in noise.noise_run_names_for(arm):
            run, settings = noise.memorising_run_key(dataset, level, seed)
            kwargs = {k: v for k, v in arm.items() if k != "datasets"}
            wanted.append((dataset, "memorising", run, settings, level, seed, kwargs))
    for dataset in (d for d in datasets if d in noise.FACTORIAL["datasets"]):
        for row in range(len(noise.factorial_design())):
            for level in noise.FACTORIAL["levels"]:
                run, settings = noise.factorial_run_key(dataset, row, level, allow_compute=False)
                kwargs = {k: settings[k] for k in noise.RUN_KEYS}
                seed = settings["seed"]
                wanted.append((dataset, "factorial", run, settings, level, seed, kwargs))
    return [
        Task(f"noise {run}", "noise", noise.NOISE_VERSION, ((run, settings),),
             {"dataset": dataset, "runs": [["label", level, seed]], "arm": name,
              "settings": kwargs})
        for dataset, name, run, settings, level, seed, kwargs in wanted
        if store.lookup("noise", run, noise.NOISE_VERSION, settings, root) is None
    ]  # fmt: skip


def _noise_compute(task: Task, todo: Sequence[int]) -> list[dict]:
    params = task.params
    if params.get("arm"):  # one run of a model the stacked trainer does not take
        return [
            noise.noise_experiment(params["dataset"], *params["runs"][i], **params["settings"])
            for i in todo
        ]
    runs = [tuple(params["runs"][i]) for i in todo]
    return noise.noise_experiments(params["dataset"], runs, **params["settings"])


def _noise_seconds(task: Task) -> float:
    epochs = task.params["settings"].get("epochs", 1)
    epochs = max(epochs.values()) if isinstance(epochs, dict) else epochs
    return len(task.runs) * float(epochs) * 2.0


def _noise_report(datasets: Sequence[str]) -> list[Report]:
    """Each dataset's pilot and runs, then the memorising arm and the factorial."""
    out = []
    for dataset in datasets:
        wall = noise.noise_pilot(dataset, allow_compute=False).provenance["wall_s"]
        out.append((f"noise pilot {dataset}", wall, ""))
        runs = noise.noise_runs(dataset, mode="full", allow_compute=False)
        n, stored = (
            len(runs.attrs["provenance"]),
            sum(p["wall_s"] for p in runs.attrs["provenance"]),
        )
        out.append((f"noise {dataset} ({n} runs)", stored, (
            f"noise experiment, {dataset}: {n} runs stored, stored wall time {stored:.0f} s"
        )))  # fmt: skip
    arms = (("memorising arm", noise.MEMORISING_SETTINGS, noise.memorising_runs),
            ("factorial", noise.FACTORIAL, noise.factorial_runs))  # fmt: skip
    for name, spec, runs_of in arms:
        for dataset in spec["datasets"]:
            runs = runs_of(dataset, allow_compute=False)
            stored = sum(p["wall_s"] for p in runs.attrs["provenance"])
            top = runs.level.max()
            lowest = runs[runs.level == top].train_acc.min()
            out.append((f"noise {name} {dataset} ({len(runs)} runs)", stored, (
                f"noise experiment, {name}, {dataset}: {len(runs)} runs stored, lowest training "
                f"accuracy at ratio {top:g} {lowest:.4f}; stored wall time {stored:.0f} s"
            )))  # fmt: skip
    return out


# Chapter 7: the capacity grid and the learned lookups


def _trained_plan(request: PlanRequest) -> list[Task]:
    """One task per cell of the capacity grid (:func:`lib.experiments.trained.phase_cells`) not
    stored yet, when the request plans the grid."""
    if not _plans_chapter7(request):
        return []
    keys = [
        trained.phase_run_settings(N, width, seed, tied, request.mode, cosine)
        for N, width, seed, tied, cosine in trained.phase_cells(request.mode)
    ]
    version = trained.TRAINED_VERSION
    return [
        Task(f"trained {run}", "trained", version, ((run, settings),), {"settings": settings})
        for run, settings in keys
        if store.lookup("trained", run, version, settings, request.root) is None
    ]


def _plans_chapter7(request: PlanRequest) -> bool:
    default = request.own_settings if request.trained_cells is None else request.trained_cells
    return flag("trained_cells", default)


def _trained_report(datasets: Sequence[str]) -> list[Report]:
    cells = [trained.phase_run(N, w, seed, tied, "full", cosine, allow_compute=False)
             for N, w, seed, tied, cosine in trained.phase_cells("full")]  # fmt: skip
    stored = sum(c["provenance"]["wall_s"] for c in cells)
    return [(f"trained capacity grid ({len(cells)} cells)", stored, (
        f"capacity grid (Chapter 7): {len(cells)} cells stored, "
        f"{sum(c['memorised'] for c in cells)} of them memorised every label; "
        f"stored wall time {stored:.0f} s"
    ))]  # fmt: skip


def _lookup_plan(request: PlanRequest) -> list[Task]:
    """One task per learned lookup (:func:`lib.experiments.learned_lookup.lookup_cells`) not
    stored yet, planned with the capacity grid."""
    if not _plans_chapter7(request):
        return []
    keys = [learned_lookup.lookup_run_settings(m, seed, request.mode)
            for m, seed in learned_lookup.lookup_cells(request.mode)]  # fmt: skip
    version = learned_lookup.LOOKUP_VERSION
    return [
        Task(f"lookup {run}", "lookup", version, ((run, settings),), {"settings": settings})
        for run, settings in keys
        if store.lookup("lookup", run, version, settings, request.root) is None
    ]


def _lookup_report(datasets: Sequence[str]) -> list[Report]:
    lookups = [learned_lookup.lookup_run(m, seed, "full", allow_compute=False)
               for m, seed in learned_lookup.lookup_cells("full")]  # fmt: skip
    stored = sum(r["provenance"]["wall_s"] for r in lookups)
    return [(f"learned lookups ({len(lookups)} runs)", stored, (
        f"learned lookups (Chapter 7): {len(lookups)} runs stored, the learned partition "
        f"matching the construction's on {min(r['matching'] for r in lookups):.0%} to "
        f"{max(r['matching'] for r in lookups):.0%} of the points; stored wall time {stored:.0f} s"
    ))]  # fmt: skip


#: Every experiment of ``make full``, in the order :func:`lib.experiments.tasks.plan` lists their
#: tasks and ``make full`` reports them. The costs (``seconds``): a CoNLL-2003 run its epochs x
#: the seconds of one paper-scale epoch (the bench's measure, about 20 s), a noise batch its
#: runs x its epochs x 2 s, a cell of the capacity grid its epoch cap x its batches of 64
#: sequences x 3 ms, a learned lookup its epochs x keys x points x 40 ns.
EXPERIMENTS: dict[str, Experiment] = {
    "conll": Experiment(
        plan=_conll_plan,
        compute=lambda task, todo: [conll.conll_compute(task.params["settings"])],
        seconds=lambda task: float(task.params["settings"].get("epochs", 1)) * 20.0,
        report=_conll_report,
    ),
    "noise": Experiment(
        plan=_noise_plan,
        compute=_noise_compute,
        seconds=_noise_seconds,
        report=_noise_report,
    ),
    "trained": Experiment(
        plan=_trained_plan,
        compute=lambda task, todo: [trained.phase_compute(task.params["settings"])],
        seconds=lambda task: (
            float(task.params["settings"]["epochs"])
            * -(-task.params["settings"]["N"] // 64)
            * 0.003
        ),
        report=_trained_report,
    ),
    "lookup": Experiment(
        plan=_lookup_plan,
        compute=lambda task, todo: [learned_lookup.lookup_compute(task.params["settings"])],
        seconds=lambda task: (
            float(task.params["settings"]["epochs"])
            * task.params["settings"]["m"] ** 2
            * task.params["settings"]["samples"]
            * 4e-8
        ),
        report=_lookup_report,
    ),
}
