"""lib.training.scoring: the accuracy over the counted positions and its checks."""

import pytest
import torch
from test_training_loop import _model

from lib import training


def test_evaluate_counts_only_real_positions():
    class Constant(torch.nn.Module):  # always predicts class 0
        def forward(self, ids):
            return torch.nn.functional.one_hot(torch.zeros_like(ids), 3).double()

    targets = torch.tensor([[0, 1, training.IGNORE], [0, 0, 2]])
    assert training.evaluate(Constant(), [(torch.zeros(2, 3, dtype=torch.int64), targets)]) == 3 / 5


@pytest.mark.parametrize(
    "call, match",
    [
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
