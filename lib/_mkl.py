"""Resolve oneMKL's vector-math dispatch once, on one thread, before any parallel call.

ATen computes contiguous float32/float64 unary maths on the CPU (``exp``, ``log``, ``sqrt``,
``sin``, ...; also inside composites such as ``logsumexp``) with oneMKL's vector-math library
(VML), each intra-op thread calling it on its own chunk. oneMKL picks the kernel of each VML
function and precision lazily, at its first call; when that first call runs on several threads
at once, one thread can run a low-accuracy kernel for its whole chunk of that one call, although
high accuracy (``VML_HA``) is asked for (pytorch/pytorch issue 188792, fix proposed in pull
request 188791; seen with oneMKL 2024.2, the version bundled in the torch wheels this book pins,
and not with oneMKL 2025.0 or later). The next call is right, so the fault shows as a check that
fails in one fresh process in several: Chapter 1's check C1 once measured 1.5e-9 instead of
3.6e-15 because the first ``torch.logsumexp`` of its kernel hit it.

The rule kept here: every VML-backed unary function is called once per floating dtype on a
tensor far below ATen's parallel grain size, so it runs on the calling thread and the dispatch is
settled before any parallel call. The warm-up runs when ``lib`` first loads torch (this module is
imported by ``lib._validate``, which every module that uses torch imports); it costs well under a
millisecond and changes no result of a correctly dispatched call.
"""

from __future__ import annotations

import torch

#: The torch functions ATen routes to oneMKL VML for float32 and float64 CPU tensors
#: (``aten/src/ATen/cpu/vml.h``); calling one that is not routed there costs nothing.
VML_FUNCTIONS = (
    "exp", "expm1", "log", "log10", "log1p", "log2", "sqrt", "rsqrt", "reciprocal",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "erf", "erfc", "erfinv", "lgamma", "digamma", "trunc", "ceil", "floor", "round", "abs",
)  # fmt: skip
#: The dtypes whose VML kernels are resolved separately (``vms*`` and ``vmd*``).
VML_DTYPES = (torch.float32, torch.float64)

#: Elements of the warm-up tensor: far below ATen's smallest parallel grain (2,048 for unary
#: maths), so that the call runs on the calling thread alone.
_WARM_SIZE = 16

WARMED: tuple[tuple[str, torch.dtype], ...] = ()


def warm_up_vml() -> tuple[tuple[str, torch.dtype], ...]:
    """Call each of :data:`VML_FUNCTIONS` once per dtype in :data:`VML_DTYPES`, single-threaded.

    Returns:
        The ``(function name, dtype)`` pairs called (functions this torch lacks are skipped).

    Source: pytorch/pytorch issue 188792 (oneMKL's first-call dispatch race); the book's check
    C1 in Chapter 1 is what first showed it here.
    """
    done = []
    for dtype in VML_DTYPES:
        x = torch.full((_WARM_SIZE,), 0.5, dtype=dtype)
        for name in VML_FUNCTIONS:
            fn = getattr(torch, name, None)
            if fn is not None:
                fn(x)
                done.append((name, dtype))
    return tuple(done)


WARMED = warm_up_vml()
