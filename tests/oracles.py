"""References shared by the tests, written once and independently of lib: exact ones (mpmath)
and the papers' displayed formulas in numpy."""

from __future__ import annotations

import mpmath
import numpy as np


def projection_constant_mp(w, V) -> mpmath.mpf:
    """c_w = min |u^T (x - x')| / |x - x'| over V and 0 (0 once), u = w / |w|, at 60 digits."""
    with mpmath.workdps(60):
        P = [[mpmath.mpf(float(v)) for v in row] for row in V]
        if not (np.asarray(V) == 0).all(axis=1).any():
            P.append([mpmath.mpf(0)] * V.shape[1])
        u = [mpmath.mpf(float(v)) for v in np.asarray(w) / np.linalg.norm(w)]
        return min(
            abs(mpmath.fsum((a - b) * c for a, b, c in zip(P[i], P[j], u, strict=True)))
            / mpmath.sqrt(mpmath.fsum((a - b) ** 2 for a, b in zip(P[i], P[j], strict=True)))
            for i in range(len(P))
            for j in range(i + 1, len(P))
        )


def mp_scores(x, A, b, dps=80):
    """Exact affine scores of float64 points and pieces (mpmath, independent of lib)."""
    with mpmath.workdps(dps):
        return [
            [
                mpmath.fsum(
                    mpmath.mpf(float(a)) * mpmath.mpf(float(p))
                    for a, p in zip(row, pt, strict=True)
                )
                + mpmath.mpf(float(bi))
                for row, bi in zip(A, b, strict=True)
            ]
            for pt in x
        ]


def mp_soft(x, c, v, beta, dps=80):
    """Softmax-weighted values with exact squared distances (mpmath)."""
    with mpmath.workdps(dps):
        out = []
        for pt in x:
            d2 = [
                mpmath.fsum(
                    (mpmath.mpf(float(p)) - mpmath.mpf(float(q))) ** 2
                    for p, q in zip(pt, ci, strict=True)
                )
                for ci in c
            ]
            top = min(d2)
            w = [mpmath.exp(-beta * (d - top)) for d in d2]
            out.append(
                float(mpmath.fsum(wi * vi for wi, vi in zip(w, v, strict=True)) / mpmath.fsum(w))
            )
        return np.array(out)


def direct(X, W, residual=True, hard=False):
    """Tokens-as-columns formula of K&S: Z + W_O W_V Z sigma[(W_K Z)^T (W_Q Z)]."""
    Z = X.T
    S = (W["W_K"] @ Z).T @ (W["W_Q"] @ Z)  # S[k, l]: key k, query l
    if hard:
        P = (S == S.max(axis=0, keepdims=True)).astype(float)
        P /= P.sum(axis=0, keepdims=True)
    else:
        P = np.exp(S - S.max(axis=0, keepdims=True))
        P /= P.sum(axis=0, keepdims=True)  # column-wise softmax over keys
    out = W["W_O"] @ W["W_V"] @ Z @ P
    return (Z + out).T if residual else out.T


def explicit_network_mp(X, W, ffn, dps):
    """F_FF(F_SA(X)) for every token, written out from the displayed formulas in mpmath,
    independently of lib: F_SA(X)_l = x_l + W_O W_V X softmax((W_K X)^T W_Q x_l),
    F_FF(z) = z + W_2 relu(W_1 z + b_1) + b_2."""
    with mpmath.workdps(dps):
        M = {
            k: mpmath.matrix([[mpmath.mpf(float(x)) for x in row] for row in W[k].tolist()])
            for k in W
        }
        W1, W2 = mpmath.matrix(ffn["W1"]), mpmath.matrix(ffn["W2"])
        b1, b2 = mpmath.matrix(ffn["b1"]), mpmath.matrix(ffn["b2"])
        outs = []
        for seq in X:
            cols = [mpmath.matrix([mpmath.mpf(float(x)) for x in tok]) for tok in seq]
            for t in cols:
                scores = [((M["W_K"] * x).T * (M["W_Q"] * t))[0] for x in cols]
                top = max(scores)
                p = [mpmath.exp(sc - top) for sc in scores]
                mix = sum(
                    (M["W_V"] * x * (w / mpmath.fsum(p)) for x, w in zip(cols, p, strict=True)),
                    mpmath.zeros(W["W_V"].shape[0], 1),
                )
                z = t + M["W_O"] * mix
                h = W1 * z + b1
                h = mpmath.matrix([max(x, 0) for x in h])
                outs.append(z + W2 * h + b2)
        return outs


#: float64 unit roundoff, the unit of every tolerance in the property tests.
U = 2.0**-53


def derandomized_settings():
    """Hypothesis settings of the property tests: 150 derandomised examples (the same every run,
    so CI cannot fail on a draw that no one can replay), no deadline, no example database."""
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=150,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
