"""lib.sum_of_linear: LHSL's sum-of-linear map and the token layout of both lookups."""

import numpy as np
import torch

from lib import sum_of_linear as SL


def test_sum_of_linear_matches_the_column_formula():
    rng = np.random.default_rng(3)
    K, d_out, d, n, n_out = 2, 4, 3, 5, 6
    A, B, C = (
        rng.normal(size=(K, d_out, d)),
        rng.normal(size=(K, n, n_out)),
        rng.normal(size=(d_out, n_out)),
    )
    linear = SL.SumOfLinear(A, B, C)
    X = rng.normal(size=(7, n, d))  # rows = tokens
    out = linear(torch.from_numpy(X)).detach().numpy()
    for i in range(7):
        col = sum(A[k] @ X[i].T @ B[k] for k in range(K)) + C  # the papers' column convention
        np.testing.assert_allclose(out[i], col.T, atol=1e-12)
