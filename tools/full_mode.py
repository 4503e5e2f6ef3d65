"""`make full`: compute the full-mode results of the chapters, then `BOOK_MODE=full make book` shows
them.

Full mode runs the papers' experiments at paper scale: for Chapter 3, 800 epochs of the rank-1
TokenTagger at 1, 3 and 6 layers and the full-rank model on all of CoNLL-2003 (hours on a 2-core
CPU; `make bench` prints the projection for this machine, and a GPU is used when torch sees one).
For Chapter 5, the label- and input-noise experiment of LHSL Appendix B on the full MNIST and
Fashion-MNIST training sets (and CIFAR-10 when BOOK_CIFAR10 points at a copy).
Each result is stored in results/ (lib.experiments.store) as soon as it is done, so an interrupted
run resumes with the next model. Progress bars show on the terminal.
"""

from __future__ import annotations

from lib.experiments import conll, noise


def main() -> int:
    settings = conll.CONLL_SETTINGS["full"]
    runs = [(layers, 1) for layers in settings["layers"]] + [(1, None)]
    for layers, rank in runs:
        result = conll.conll_run(layers, rank, mode="full")
        print(
            f"CoNLL-2003, {layers} layer(s), rank {rank or 'full'}: "
            f"train accuracy {result.train_acc:.4f}, "
            f"validation {result.val_acc:.4f}",
            flush=True,
        )
    for dataset in noise.noise_datasets():
        runs = noise.noise_runs(dataset, mode="full")
        print(f"noise experiment, {dataset}: {len(runs)} runs stored", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
