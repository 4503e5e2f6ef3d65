"""lib.models.TokenTagger and lib.training: masking, equivariance, memorization, validation."""

import numpy as np
import pandas as pd
import pytest
import torch

from lib import datasets, runtime, training
from lib.layers import SelfAttention
from lib.models import TokenTagger
from lib.training import scoring

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


def test_padding_changes_nothing():
    """A sentence alone and the same sentence padded beside a longer one: same logits, same loss."""
    torch.manual_seed(0)
    model = TokenTagger(20, 5, d=8, n_layers=2, rank=1, dtype=torch.float64, seed=1)
    short, long = torch.tensor([[3, 7, 4]]), torch.tensor([[5, 6, 8, 9, 10, 11]])
    batch = torch.cat([torch.cat([short, torch.zeros(1, 3, dtype=torch.int64)], 1), long])
    alone, padded = model(short), model(batch)
    torch.testing.assert_close(padded[0, :3], alone[0], rtol=0, atol=1e-13)
    torch.testing.assert_close(padded[1], model(long)[0], rtol=0, atol=1e-13)
    tags = torch.tensor([[1, 2, 0]])
    loss_alone, *_ = scoring.counts(alone, tags)
    loss_padded, *_ = scoring.counts(
        padded[:1], torch.cat([tags, torch.full((1, 3), training.IGNORE)], 1)
    )
    torch.testing.assert_close(loss_padded, loss_alone, rtol=0, atol=1e-12)


def test_permutation_equivariance_and_rank():
    model = TokenTagger(30, 4, d=12, n_layers=3, rank=1, dtype=torch.float64, seed=2)
    ids = torch.tensor([[4, 9, 2, 17, 5]])
    perm = torch.tensor([3, 0, 4, 1, 2])
    torch.testing.assert_close(model(ids[:, perm]), model(ids)[:, perm], rtol=0, atol=1e-12)
    for layer in model.attn:
        for W in layer.weights().values():
            assert torch.linalg.matrix_rank(W) == 1
    full = TokenTagger(30, 4, d=12, n_layers=1, rank=None, seed=2)
    assert torch.linalg.matrix_rank(full.attn[0].weights()["W_Q"]) == 12


def test_masked_attention_equals_attention_on_the_unpadded_prefix():
    layer = SelfAttention(4, head_dim=3, rank=1, seed=5)
    X = torch.randn(1, 6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    mask = torch.tensor([[False, False, False, False, True, True]])
    torch.testing.assert_close(layer(X, mask)[:, :4], layer(X[:, :4]), rtol=0, atol=1e-14)
    assert torch.all(layer.attention(X, mask)[..., 4:] == 0)


def test_bucket_batches():
    enc = [(np.arange(1, n + 1), np.zeros(n, dtype=np.int64)) for n in (5, 1, 3, 3, 2)]
    batches = training.bucket_batches(enc, 2, device="cpu")
    assert [tuple(ids.shape) for ids, _ in batches] == [(2, 2), (2, 3), (1, 5)]  # sorted by length
    assert sorted(int((t != training.IGNORE).sum()) for _, t in batches) == [3, 5, 6]
    ids, targets = batches[0]
    assert ids[0, 1] == 0 and targets[0, 1] == training.IGNORE  # the 1-token sentence, padded
    assert sum(int((t != training.IGNORE).sum()) for _, t in batches) == 14


def test_evaluate_counts_only_real_positions():
    class Constant(torch.nn.Module):  # always predicts class 0
        def forward(self, ids):
            return torch.nn.functional.one_hot(torch.zeros_like(ids), 3).double()

    targets = torch.tensor([[0, 1, training.IGNORE], [0, 0, 2]])
    assert training.evaluate(Constant(), [(torch.zeros(2, 3, dtype=torch.int64), targets)]) == 3 / 5


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


def test_linear_learning_rate_decay():
    vocab, batches = toy_batches()
    model = TokenTagger(len(vocab), 9, d=8, seed=0)
    history = training.fit(model, batches, epochs=5, lr=1e-2, final_lr=2e-3)
    np.testing.assert_allclose(history["lr"], [1e-2, 8e-3, 6e-3, 4e-3, 2e-3], rtol=1e-12)


def test_read_device():
    assert runtime.read_device({"BOOK_DEVICE": "cpu"}) == torch.device("cpu")
    assert runtime.read_device({}).type in ("cpu", "cuda")
    with pytest.raises(ValueError, match="BOOK_DEVICE"):
        runtime.read_device({"BOOK_DEVICE": "nonsense"})
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no such CUDA device"):
            runtime.read_device({"BOOK_DEVICE": "cuda"})


def _model():
    return TokenTagger(10, 3, d=4, seed=0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: TokenTagger(1, 3), "vocab_size"),
        (lambda: TokenTagger(10, 3, d=0), "d must be"),
        (lambda: TokenTagger(10, 3, d=4, rank=5), "rank"),
        (lambda: TokenTagger(10, 3, pad_id=10), "pad_id"),
        (lambda: TokenTagger(10, 3, dtype=torch.int32), "dtype"),
        (lambda: _model()(torch.tensor([[1.0, 2.0]])), "int64"),
        (lambda: _model()(torch.tensor([1, 2])), r"shape \(batch, n\)"),
        (lambda: _model()(torch.tensor([[1, 12]])), r"\[0, 10\)"),
        (lambda: _model()(torch.tensor([[0, 0]])), "every token"),
        (
            lambda: SelfAttention(3)(torch.ones(1, 2, 3, dtype=torch.float64), torch.ones(1, 2)),
            "bool",
        ),
        (
            lambda: SelfAttention(3)(
                torch.ones(1, 2, 3, dtype=torch.float64), torch.zeros(1, 3, dtype=torch.bool)
            ),
            "shape",
        ),
        (lambda: training.bucket_batches([], 2), "non-empty"),
        (
            lambda: training.bucket_batches([(np.ones(2, dtype=int), np.ones(3, dtype=int))], 2),
            "one length",
        ),
        (lambda: training.bucket_batches([(np.ones(2), np.ones(2))], 2), "integer ids"),
        (
            lambda: training.bucket_batches([(np.ones(2, dtype=int), np.ones(2, dtype=int))], 0),
            "batch_size",
        ),
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
        (
            lambda: training.evaluate(
                _model(),
                [(torch.ones(1, 2, dtype=torch.int64), torch.ones(1, 3, dtype=torch.int64))],
            ),
            "do not match",
        ),
        (
            lambda: training.evaluate(
                _model(), [(torch.ones(1, 2, dtype=torch.int64), torch.tensor([[0, 3]]))]
            ),
            r"targets must lie in \[0, 3\)",
        ),
        (lambda: training.fit(None, toy_batches()[1], epochs=1), "model must be"),
        (
            lambda: training.fit(_model(), toy_batches()[1], epochs=2, lr=1e-3, final_lr=1e-2),
            "final_lr must not exceed",
        ),
        (
            lambda: training.bucket_batches(
                [(np.ones(2, dtype=int), np.ones(2, dtype=int))], 2, device="gpu"
            ),
            "device",
        ),
        (
            lambda: training.bucket_batches([(np.ones(2, dtype=int), -np.ones(2, dtype=int))], 2),
            r"ids in \[0",
        ),
        (lambda: runtime.read_device(["cpu"]), "mapping"),
        (lambda: runtime.read_device({"BOOK_DEVICE": "mps"}), "BOOK_DEVICE"),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_nan_logits_are_not_scored():
    class NaNModel(torch.nn.Module):
        def forward(self, ids):
            return torch.full((*ids.shape, 3), float("nan"))

    with pytest.raises(ValueError, match="not finite"):
        training.evaluate(
            NaNModel(),
            [(torch.ones(1, 2, dtype=torch.int64), torch.zeros(1, 2, dtype=torch.int64))],
        )


def test_diverging_loss_is_reported():
    vocab, batches = toy_batches()
    model = TokenTagger(len(vocab), 9, d=8, seed=0)
    with torch.no_grad():
        model.head.weight.fill_(float("nan"))
    with pytest.raises(ValueError, match="logits overflow torch.float32 or are NaN"):
        training.fit(model, batches, epochs=2)


def test_stop_rule_on_hand_made_histories():
    rule = training.StopRule(target=0.9, window=3, min_gain=0.01)

    def hist(acc):
        return pd.DataFrame({"train_acc": acc})

    assert rule(hist([0.5, 0.6, 0.7, 0.8, 0.85, 0.86, 0.86, 0.86])) is None  # never reached 0.9
    # reached at epoch 3 (index 2): the rule waits 3 epochs more, then compares best-of-3 windows
    assert rule(hist([0.5, 0.8, 0.91, 0.92, 0.93])) is None  # too early
    assert rule(hist([0.5, 0.8, 0.91, 0.95, 0.97, 0.99])) is None  # still gaining 0.08 > 0.01
    reason = rule(hist([0.5, 0.8, 0.91, 0.95, 0.951, 0.952, 0.953]))
    # last 3 epochs best 0.953, before them best 0.95: gain 0.003 < 0.01
    assert reason is not None and "epoch 3" in reason and "0.00300" in reason
    # a dip after the best epoch is levelled off too (gain counted as 0)
    assert "0.00000" in rule(hist([0.5, 0.91, 0.96, 0.95, 0.94, 0.95]))
    for bad, match in [
        ({"target": 0.0}, "target"),
        ({"target": 1.2}, "target"),
        ({"target": 0.9, "window": 0}, "window"),
        ({"target": 0.9, "min_gain": 1.0}, "min_gain"),
        ({"target": 0.9, "min_gain": -0.1}, "min_gain"),
    ]:
        with pytest.raises(ValueError, match=match):
            training.StopRule(**bad)


def test_fit_stops_by_the_rule_and_evaluates_the_last_epoch():
    vocab, batches = toy_batches()
    model = TokenTagger(len(vocab), len(datasets.CONLL_TAGS), d=16, n_layers=1, rank=1, seed=0)
    rule = training.StopRule(target=1.0, window=2, min_gain=1e-6)
    history = training.fit(
        model, batches, epochs=200, lr=1e-2, stop=rule, validation=batches, eval_every=50
    )
    first = training.epochs_to(history, 1.0)
    assert first is not None and len(history) == first + 2  # 1.0 cannot be beaten: stop 2 later
    assert history.attrs["stopped"] == rule(history) and history.val_acc.iloc[-1] == 1.0
    capped = training.fit(TokenTagger(len(vocab), 9, d=16, seed=0), batches, epochs=3, stop=rule)
    assert len(capped) == 3 and capped.attrs["stopped"] is None
    with pytest.raises(ValueError, match="stop must be callable"):
        training.fit(model, batches, epochs=1, stop=0.99)


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


def test_checkpoint_resume_equals_one_uninterrupted_run(tmp_path):
    """Two epochs, an interruption, then the rest from the checkpoint: the same history and
    weights as one uninterrupted run (row-wise embedding updates and a falling rate included)."""
    vocab, batches = toy_batches(batch_size=1)
    kw = dict(epochs=5, lr=1e-2, final_lr=1e-3, seed=4)

    def model():
        return TokenTagger(len(vocab), 9, d=8, n_layers=2, rank=1, seed=3, sparse_embedding=True)

    straight = model()
    h_straight = training.fit(straight, batches, **kw)
    ckpt = tmp_path / "run.pt"

    class Interrupt(Exception):
        pass

    def interrupt_in_epoch_three(history):
        if len(history) == 3:
            raise Interrupt
        return None

    with pytest.raises(Interrupt):
        training.fit(
            model(),
            batches,
            checkpoint=ckpt,
            checkpoint_every=0,
            stop=interrupt_in_epoch_three,
            **kw,
        )
    assert len(torch.load(ckpt, weights_only=False)["rows"]) == 2  # epochs 1 and 2 were saved
    resumed = model()
    h_resumed = training.fit(resumed, batches, checkpoint=ckpt, **kw)
    assert not ckpt.exists()  # removed when training ends
    with pytest.raises(Interrupt):  # the default spacing (60 s) saves nothing in these 2 epochs
        training.fit(model(), batches, checkpoint=ckpt, stop=interrupt_in_epoch_three, **kw)
    assert not ckpt.exists()
    pd.testing.assert_frame_equal(
        h_resumed.drop(columns="seconds"), h_straight.drop(columns="seconds")
    )
    for a, b in zip(resumed.state_dict().values(), straight.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    with pytest.raises(Interrupt):
        training.fit(
            model(),
            batches,
            checkpoint=ckpt,
            checkpoint_every=0,
            stop=interrupt_in_epoch_three,
            **kw,
        )
    with pytest.raises(ValueError, match="checkpoint .* another model, batches or settings"):
        training.fit(model(), batches, checkpoint=ckpt, **{**kw, "epochs": 6})


def test_sparse_embedding_updates_only_the_rows_of_the_batch():
    vocab, batches = toy_batches(batch_size=1)
    model = TokenTagger(len(vocab), 9, d=8, seed=0, sparse_embedding=True)
    before = model.embed.weight.detach().clone()
    training.fit(model, batches[:1], epochs=1, lr=1e-2)
    seen = set(batches[0][0].flatten().tolist())
    changed = (model.embed.weight.detach() != before).any(dim=1)
    assert {i for i in range(len(vocab)) if changed[i]} == seen - {datasets.PAD}
    with pytest.raises(ValueError, match="sparse_embedding must be True or False"):
        TokenTagger(10, 3, sparse_embedding="yes")


def test_accuracy_at_and_epoch_seconds_read_a_history():
    history = pd.DataFrame(
        {
            "epoch": [1, 2, 3, 4],
            "train_acc": [0.5, 0.75, 0.875, 0.9375],
            "seconds": [2.0, 5.0, 9.0, 12.0],  # cumulative: epochs of 2, 3, 4 and 3 s
        }
    )
    assert training.accuracy_at(history, 1) == 0.5
    assert training.accuracy_at(history, 4) == 0.9375
    assert training.accuracy_at(history, 5) is None  # the run ended before epoch 5
    assert isinstance(training.accuracy_at(history, 2), float)
    assert training.epoch_seconds(history) == 3.0  # median of 2, 3, 4, 3
    assert training.epoch_seconds(history.iloc[:2]) == 2.5  # median of 2 and 3
    for call, match in [
        (lambda: training.accuracy_at(history, 0), "epoch must be"),
        (lambda: training.accuracy_at(history, 2, column="val_acc"), "history must be"),
        (lambda: training.epoch_seconds(history.drop(columns="seconds")), "history must be"),
        (lambda: training.epoch_seconds(history.iloc[:0]), "history must be"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()


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


def test_momentum_and_cosine_schedule_match_torch():
    """SGD with momentum 0.9 and a cosine fall from 0.1 to 0.001 over 5 epochs: the history's
    rates are the closed form lr_min + (lr - lr_min)(1 + cos(pi t / 4)) / 2, and the weights are
    those of torch.optim.SGD driven by hand over the same batch order."""
    vocab, batches = toy_batches(batch_size=1)

    def model():
        return TokenTagger(len(vocab), 9, d=8, n_layers=1, rank=1, seed=5, dtype=torch.float64)

    trained = model()
    history = training.fit(
        trained, batches, epochs=5, lr=0.1, final_lr=1e-3, seed=2, optimizer="sgd",
        momentum=0.9, schedule="cosine",
    )  # fmt: skip
    t = np.arange(5)
    expected = 1e-3 + (0.1 - 1e-3) * (1 + np.cos(np.pi * t / 4)) / 2
    np.testing.assert_allclose(history["lr"].to_numpy(), expected, rtol=1e-12)
    ref = model()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    gen = torch.Generator().manual_seed(2)
    for epoch in range(5):
        for group in opt.param_groups:
            group["lr"] = float(expected[epoch])
        for b in torch.randperm(len(batches), generator=gen).tolist():
            x, y = batches[b]
            loss, _, n = scoring.counts(ref(x), y)
            opt.zero_grad()
            (loss / n).backward()
            opt.step()
    for a, b in zip(trained.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="momentum must lie in"):
        training.fit(model(), batches, epochs=1, momentum=0.9)  # Adam
    with pytest.raises(ValueError, match="momentum must lie in"):
        training.fit(model(), batches, epochs=1, optimizer="sgd", momentum=1.0)
    with pytest.raises(ValueError, match="schedule"):
        training.fit(model(), batches, epochs=1, schedule="step")
