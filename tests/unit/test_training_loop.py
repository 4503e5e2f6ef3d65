"""lib.training.loop: fit's loop (memorising, determinism, epoch hook, augmentation, checks)."""

import pandas as pd
import pytest
import torch

from lib import datasets, training
from lib.models import TokenTagger

TOY = [
    (["EU", "rejects", "German", "call"], ["B-ORG", "O", "B-MISC", "O"]),
    (["Peter", "Blackburn"], ["B-PER", "I-PER"]),
]


def toy_batches(batch_size=2):
    vocab = datasets.build_vocab(TOY)
    return vocab, training.bucket_batches(
        datasets.encode_pairs(TOY, vocab), batch_size, device="cpu"
    )


def test_toy_corpus_memorized():
    vocab, batches = toy_batches()
    model = TokenTagger(len(vocab), len(datasets.CONLL_TAGS), d=16, n_layers=1, rank=1, seed=0)
    history = training.fit(model, batches, epochs=40, lr=1e-2)
    assert training.evaluate(model, batches) == 1.0
    assert (
        history["train_acc"].iloc[-1] == 1.0 and history["loss"].iloc[-1] < history["loss"].iloc[0]
    )
    assert list(history.columns) == ["epoch", "loss", "train_acc", "val_acc", "lr", "seconds"]
    assert (history["lr"] == 1e-2).all()
    assert history["epoch"].tolist() == list(range(1, 41)) and history["val_acc"].isna().all()


def test_fit_is_deterministic():
    vocab, batches = toy_batches(batch_size=1)
    runs = []
    for _ in range(2):
        model = TokenTagger(len(vocab), 9, d=8, rank=1, seed=3)
        runs.append(
            training.fit(model, batches, epochs=3, seed=7, validation=batches, eval_every=2)
        )
    pd.testing.assert_frame_equal(runs[0].drop(columns="seconds"), runs[1].drop(columns="seconds"))
    assert runs[0]["val_acc"].notna().tolist() == [False, True, True]


def _model():
    return TokenTagger(10, 3, d=4, seed=0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: training.fit(_model(), toy_batches()[1], epochs=0), "epochs"),
        (lambda: training.fit(_model(), toy_batches()[1], epochs=1, lr=float("nan")), "lr"),
        (lambda: training.fit(_model(), toy_batches()[1], epochs=1, lr=0.0), "lr"),
        (lambda: training.fit(_model(), toy_batches()[1], epochs=2, final_lr=-1.0), "final_lr"),
        (lambda: training.fit(_model(), [], epochs=1), "batches must be"),
        (
            lambda: training.fit(
                _model(), [(torch.ones(1, 2, dtype=torch.int64), torch.ones(1, 2))], epochs=1
            ),
            "int64",
        ),
        (
            lambda: training.fit(
                _model(),
                [(torch.ones(1, 2, dtype=torch.int64), torch.full((1, 2), training.IGNORE))],
                epochs=1,
            ),
            "not IGNORE",
        ),
        (lambda: training.fit(None, toy_batches()[1], epochs=1), "model must be"),
        (
            lambda: training.fit(_model(), toy_batches()[1], epochs=2, lr=1e-3, final_lr=1e-2),
            "final_lr must not exceed",
        ),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_on_epoch_sees_each_epoch_before_the_stop_rule():
    """The hook gets the model and the history after every epoch, also the one the rule ends, and
    leaves training as it was (the same history as without it)."""
    vocab, batches = toy_batches()
    seen = []

    def hook(model, history):
        seen.append((len(history), float(model.head.weight.detach().sum())))

    def build():
        return TokenTagger(len(vocab), len(datasets.CONLL_TAGS), d=8, seed=0)

    rule = training.StopRule(target=0.01, window=2, min_gain=0.999)  # fires as soon as it may
    history = training.fit(build(), batches, epochs=10, lr=1e-2, stop=rule, on_epoch=hook)
    plain = training.fit(build(), batches, epochs=10, lr=1e-2, stop=rule)
    assert history.attrs["stopped"] is not None and len(history) < 10
    assert [e for e, _ in seen] == history.epoch.tolist() == list(range(1, len(history) + 1))
    assert len({w for _, w in seen}) == len(history)  # the hook sees each epoch's weights
    pd.testing.assert_frame_equal(history.drop(columns="seconds"), plain.drop(columns="seconds"))
    with pytest.raises(ValueError, match="on_epoch must be callable"):
        training.fit(build(), batches, epochs=1, on_epoch="print")


def test_augmented_run_resumes_and_scores_training_in_eval_mode(tmp_path):
    """With singleton dropout and an eval-mode score per epoch: an interrupted and resumed run has
    the history and weights of an uninterrupted one; ``train_acc`` is the eval-mode score (the
    last row equals a separate evaluate) and ``running_acc`` the accuracy under the dropout."""
    vocab, batches = toy_batches(batch_size=1)
    drop = datasets.SingletonDropout(datasets.encode_pairs(TOY, vocab), 0.5, seed=2)
    kw = dict(epochs=6, lr=1e-2, seed=4, augment=drop, train_eval=True)

    def model():
        return TokenTagger(len(vocab), 9, d=8, n_layers=1, rank=1, seed=3)

    straight = model()
    h_straight = training.fit(straight, batches, **kw)
    assert h_straight["train_acc"].iloc[-1] == training.evaluate(straight, batches)
    assert "running_acc" in h_straight and not h_straight["running_acc"].equals(
        h_straight["train_acc"]
    )

    class Interrupt(Exception):
        pass

    def stop_in_epoch_four(history):
        if len(history) == 4:
            raise Interrupt
        return None

    ckpt = tmp_path / "run.pt"
    with pytest.raises(Interrupt):
        training.fit(
            model(), batches, checkpoint=ckpt, checkpoint_every=0, stop=stop_in_epoch_four, **kw
        )
    resumed = model()
    h_resumed = training.fit(resumed, batches, checkpoint=ckpt, **kw)
    pd.testing.assert_frame_equal(
        h_resumed.drop(columns="seconds"), h_straight.drop(columns="seconds")
    )
    for a, b in zip(resumed.state_dict().values(), straight.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    plain = training.fit(model(), batches, epochs=6, lr=1e-2, seed=4)
    assert not plain["train_acc"].equals(h_straight["running_acc"])  # the dropout acted


def test_augment_and_train_eval_refused_when_malformed():
    vocab, batches = toy_batches()
    model = TokenTagger(len(vocab), 9, d=8, n_layers=1, rank=1, seed=3)
    with pytest.raises(ValueError, match="augment must be callable"):
        training.fit(model, batches, epochs=1, augment="dropout")
    with pytest.raises(ValueError, match="augment must return inputs of shape"):
        training.fit(model, batches, epochs=1, augment=lambda x, e, b: x[:, :1])
    with pytest.raises(ValueError, match="augment must return inputs of shape"):
        training.fit(model, batches, epochs=1, augment=lambda x, e, b: x.double())
    with pytest.raises(ValueError, match="train_eval"):
        training.fit(model, batches, epochs=1, train_eval="yes")
    with pytest.raises(ValueError, match=r"augment must take \(inputs, epoch, batch\)"):
        training.fit(model, batches, epochs=1, augment=lambda x: x)
