"""`make full`: compute the paper-scale results the book shows, and store them in results/.

For Chapter 3, K&S Section 5's CoNLL-2003 experiment on the whole training split: our rank-1
TokenTagger at 1, 3 and 6 layers and the full-rank layer, each trained until its training accuracy
has passed the reported 0.9872 and levelled off, or to its epoch cap; the model the OpenReview
reviewers describe (a tied head of size 1) with six SGD settings for 200 epochs and the best of
them for 800, by Adam as ours is, and with its projection fixed at Theorem 2's value; the seeds of
lib.experiments.conll.seeds_for. For
Chapter 5, LHSL Appendix B's noise experiment on the whole MNIST and Fashion-MNIST training sets,
every label-noise ratio and input-noise level, three seeds, the memorising arm whose model
fits the flipped labels, and the factorial over the five settings in which fast and full mode
differ (lib.experiments.noise). For Chapter 7, every cell of the capacity grid
(lib.experiments.trained.PHASE_SETTINGS) and every learned lookup
(lib.experiments.learned_lookup.LOOKUP_SETTINGS).

Every run is stored in results/ (lib.experiments.store) as soon as it is done, with its provenance;
a stored run whose settings and code version still match is not recomputed, so an interrupted
`make full` resumes with the next run, and a CoNLL run resumes from its last finished epoch (an
epoch checkpoint in results/.partial/). Progress bars show on a terminal; every finished run prints
one line with its wall time. A GPU is used when BOOK_DEVICE names one (e.g. BOOK_DEVICE=cuda).

The runs not stored yet are computed as Dask tasks (lib.experiments.tasks): on a LocalCluster of
BOOK_WORKERS worker processes x BOOK_THREADS torch threads (default 2 x 1 on two cores), or on the
running cluster that BOOK_SCHEDULER names (tcp://host:8786). The noise runs of one dataset train
in batches of lib.experiments.tasks.NOISE_BATCH as one stacked model (lib.batched), a batch of one
on the book's machine (make bench --projection-only measures which is fastest).
"""

from __future__ import annotations

import argparse
import time

from lib import _env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/full_mode.py",
        description="make full: compute and store the paper-scale results (see this file).",
    )
    _env.parse_args(parser, argv)
    # lib is imported once the command line and settings are known to be good: importing it reads
    # the settings (lib.runtime) and loads torch.
    from lib import runtime
    from lib.datasets import image_dataset_status
    from lib.experiments import catalog, noise, store, tasks

    start = time.perf_counter()
    root = store.result_path("x", "x").parents[1]
    print(
        f"make full on {runtime.DEVICE}; stored results go to {root}"
        " (runs already stored for the current settings are read, not recomputed)",
        flush=True,
    )
    status = image_dataset_status()
    datasets = noise.NOISE_SETTINGS["full"]["datasets"]
    missing = [f"{ds}: {status[ds]}" for ds in datasets if status[ds] is not None]
    if missing:
        print("make full needs every dataset of the noise experiment: " + "; ".join(missing))
        return 1
    for dataset in datasets:  # the pilots fix how long each dataset's noise runs train
        t0 = time.perf_counter()
        pilot = noise.noise_pilot(dataset, allow_compute=True).result
        print(
            f"noise pilot, {dataset}: {pilot['epochs']} epochs ({pilot['stopped'] or 'cap'}); "
            f"{time.perf_counter() - t0:.0f} s in this call",
            flush=True,
        )
    # twice at most: the SGD grid's best setting is known (and planned) once the grid is stored
    todo = tasks.plan("full", datasets=datasets)
    if not todo:
        print("every run is stored for the current settings and code", flush=True)
    for _ in range(2):
        if not todo:
            break
        runs = sum(len(t.runs) for t in todo)
        client = tasks.make_client()
        where = _env.read_text("BOOK_SCHEDULER") or (
            "a local Dask cluster of {} worker(s) x {} thread(s)".format(*tasks.cluster_shape())
        )
        print(f"{runs} run(s) to compute in {len(todo)} task(s), on {where}", flush=True)
        try:
            tasks.run_tasks(todo, client)
        finally:
            client.close()
            if client.cluster is not None:
                client.cluster.close()
        todo = tasks.plan("full", datasets=datasets)
    rows = []
    for experiment in catalog.EXPERIMENTS.values():  # what each experiment stored
        for name, wall, line in experiment.report(datasets):
            rows.append((name, wall))
            if line:
                print(line, flush=True)
    total = sum(r[1] for r in rows)
    print(
        f"make full: stored wall time of all runs {total / 60:.1f} min; "
        f"this call {(time.perf_counter() - start) / 60:.1f} min",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
