"""lib.training.stacked: K stacked runs train exactly as the same runs one by one."""

import copy

import numpy as np
import pytest
import torch
from test_batched import TOL, assert_same_state, copies, manual_fit, patch_runs, tagger_runs

from lib import batched, training
from lib.models import PatchAttentionClassifier


@pytest.mark.parametrize(
    "runs",
    [
        lambda: patch_runs([0, 1, 2]),
        lambda: tagger_runs([0, 1, 2], rank=1),
        lambda: tagger_runs([3, 4], rank=None, layers=1),
    ],
    ids=["patch-attention", "tagger-rank-1", "tagger-dense"],
)
def test_stacked_runs_equal_the_runs_one_by_one(runs):
    models, batches = runs()
    seeds = [7, 8, 9][: len(models)]
    stacked_models = copies(models)
    fit_models = copies(models)
    histories = training.fit_stacked(
        stacked_models,
        batches,
        epochs=3,
        lr=0.05,
        seeds=seeds,
        progress=False,
        return_state=True,
    )
    for k, model in enumerate(models):
        losses, opt = manual_fit(model, batches[k], 3, 0.05, seeds[k])
        history = training.fit(
            fit_models[k], batches[k], epochs=3, lr=0.05, seed=seeds[k], progress=False
        )
        np.testing.assert_allclose(histories[k]["loss"], losses, rtol=0, atol=TOL)
        np.testing.assert_allclose(histories[k]["loss"], history["loss"], rtol=0, atol=TOL)
        np.testing.assert_array_equal(histories[k]["train_acc"], history["train_acc"])
        for (name, p), q, r in zip(
            model.named_parameters(),
            stacked_models[k].parameters(),
            fit_models[k].parameters(),
            strict=True,
        ):
            torch.testing.assert_close(q, p, rtol=0, atol=TOL, msg=name)
            torch.testing.assert_close(r, p, rtol=0, atol=TOL, msg=name)
        assert_same_state(model, opt, histories[k].attrs["adam"])
        assert histories[k].attrs["batched"] == len(models)
    # the runs really differ from each other (a stacked model that trained one run K times
    # would pass the comparisons above only if the runs were identical)
    p0, p1 = (list(m.parameters())[0] for m in stacked_models[:2])
    assert float((p0 - p1).detach().abs().max()) > 1e-3


def test_a_stopped_run_leaves_the_batch_and_the_others_go_on_unchanged():
    models, batches = patch_runs([0, 1, 2])
    seeds = [4, 5, 6]
    stop_at = {1: 2}  # run 1 stops after epoch 2, runs 0 and 2 go on to epoch 4

    class Stop:
        def __init__(self):
            self.calls = 0

        def __call__(self, history):
            # the stacked trainer calls the rule run by run in run order; identify the run by
            # its first loss
            epoch = int(history["epoch"].iloc[-1])
            first = float(history["loss"].iloc[0])
            run = int(np.argmin([abs(first - f) for f in first_losses]))
            return "stop" if stop_at.get(run) == epoch else None

    first_losses = [
        manual_fit(copy.deepcopy(m), b, 1, 0.05, s)[0][0]
        for m, b, s in zip(models, batches, seeds, strict=True)
    ]
    stacked_models = copies(models)
    histories = training.fit_stacked(
        stacked_models,
        batches,
        epochs=4,
        lr=0.05,
        seeds=seeds,
        stop=Stop(),
        progress=False,
        return_state=True,
    )
    assert [len(h) for h in histories] == [4, 2, 4]
    assert [h.attrs["stopped"] for h in histories] == [None, "stop", None]
    for k, model in enumerate(models):
        losses, opt = manual_fit(model, batches[k], 4, 0.05, seeds[k], stop_after=stop_at.get(k))
        np.testing.assert_allclose(histories[k]["loss"], losses, rtol=0, atol=TOL)
        for p, q in zip(model.parameters(), stacked_models[k].parameters(), strict=True):
            torch.testing.assert_close(q, p, rtol=0, atol=TOL)
        assert_same_state(model, opt, histories[k].attrs["adam"])


def test_validation_scores_are_each_runs_own():
    models, batches = patch_runs([0, 1])
    val = [b[:2] for b in batches]
    histories = training.fit_stacked(
        copies(models), batches, epochs=2, lr=0.05, seeds=[0, 1], validation=val, progress=False
    )
    for k, model in enumerate(models):
        history = training.fit(
            model, batches[k], epochs=2, lr=0.05, seed=k, validation=val[k], progress=False
        )
        np.testing.assert_allclose(histories[k]["val_acc"], history["val_acc"])


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda m, b: training.fit_stacked(m, b[:1], epochs=1, seeds=[0, 1]),
            "batches must be a list of 2",
        ),
        (lambda m, b: training.fit_stacked(m, b, epochs=1, seeds=[0]), "seeds must be a list of 2"),
        (
            lambda m, b: training.fit_stacked(m, [b[0], b[1][:2]], epochs=1, seeds=[0, 1]),
            "same number of batches",
        ),
        (lambda m, b: training.fit_stacked(m, b, epochs=0, seeds=[0, 1]), "epochs"),
        (lambda m, b: training.fit_stacked([m[0], "x"], b, epochs=1, seeds=[0, 1]), "model"),
        (
            lambda m, b: batched.stack(
                [m[0], PatchAttentionClassifier(image_size=8, patch=4, d=4, dtype=torch.float64)]
            ),
            "share one shape",
        ),
        (lambda m, b: batched.stack([]), "non-empty"),
    ],
)
def test_bad_input_is_refused(call, match):
    models, batches = patch_runs([0, 1])
    with pytest.raises(ValueError, match=match):
        call(models, batches)


def test_a_run_whose_loss_is_not_finite_is_named():
    models, batches = patch_runs([0, 1])
    with torch.no_grad():
        models[1].head_weight.fill_(float("nan"))
    with pytest.raises(ValueError, match="training loss of run 1 became nan in epoch 1"):
        training.fit_stacked(models, batches, epochs=1, seeds=[0, 1], progress=False)
