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
