"""Exact references shared by the tests (mpmath at 60 digits), written once."""

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
