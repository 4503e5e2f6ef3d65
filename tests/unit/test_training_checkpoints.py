"""lib.training.checkpoints: saving a run and resuming it."""

import pandas as pd
import pytest
import torch
from test_training_loop import toy_batches

from lib import training
from lib.models import TokenTagger


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
