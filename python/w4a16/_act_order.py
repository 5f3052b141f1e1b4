"""``torch.ops.w4a16.gather_k``: the act-order activation gather as a PyTorch operator.

Schema::

    w4a16::gather_k(Tensor a, Tensor perm) -> Tensor

returns ``a.index_select(-1, perm)``: ``out[..., k] = a[..., perm[k]]`` (the library's
``w4a16_gather_k``). An act-order checkpoint's weight is stored with its K columns sorted by
group (``perm = argsort(g_idx)``, :class:`w4a16.QuantizedWeight.perm`), so its GEMM takes the
activations' columns in that order; :class:`w4a16.nn.Linear` calls this op before
``torch.ops.w4a16.gemm`` with ``gather="op"``. ``torch.ops.w4a16.gemm``'s own ``perm`` argument
does the same within the GEMM call (``gather="fused"``, the default: inside the GEMV at M = 1 on
sm_90, through the library's gather into the op's workspace elsewhere), which is faster in a
torch program (docs/PERFORMANCE.md).

- ``a``: ``[..., K]`` float16 or bfloat16 on a CUDA device, one strided ``[M, K]`` view (last
  dim contiguous; no copy is made); K a multiple of 8.
- ``perm``: int32 ``[K]`` on ``a``'s device, contiguous, a permutation of ``0..K-1`` (an index
  outside ``[0, K)`` gives a NaN in its column; nothing outside ``a`` is read).
- returns a new contiguous ``[..., K]`` tensor in ``a``'s dtype.

The library's gather lets the next kernel on the stream start at once (programmatic dependent
launch on sm_90), so a GEMM launched programmatically after it (``w4a16_gemm`` with flags 0)
streams its weights while the gather runs; ``torch.ops.w4a16.gemm`` launches in plain stream order
(``W4A16_GEMM_NO_PDL``), so after this op it does not, while its ``perm`` keeps that overlap inside
the call. Where ``index_select`` fuses into the kernel that produces ``a`` (a norm or an activation
under ``torch.compile``), ``w4a16.nn.Linear(gather="index_select")`` keeps it (bench/decode_bench.py
measures the three).

Errors: ``TypeError`` / ``ValueError`` name the argument and value; :class:`w4a16.W4A16Error` the
library's status. Every call reads the current CUDA stream and never synchronises.
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import _lib
from .ops import _C_DTYPE, _current_device, _raw_stream, _rows_view

__all__ = ["gather_k"]


def _check(a: Tensor, perm: Tensor) -> int:
    """Dtype, shape and layout checks on (possibly fake) tensors; returns K."""
    if a.dtype not in _C_DTYPE:
        raise TypeError(f"w4a16.gather_k: a has dtype {a.dtype}; it must be float16 or bfloat16")
    if a.dim() < 1:
        raise ValueError("w4a16.gather_k: a must have at least one dimension [..., K]")
    k = a.shape[-1]
    if k % 8:
        raise ValueError(f"w4a16.gather_k: a has K = {k}; it must be a multiple of 8")
    if perm.dtype != torch.int32:
        raise TypeError(f"w4a16.gather_k: perm has dtype {perm.dtype}; it must be int32")
    if perm.shape != (k,):
        raise ValueError(f"w4a16.gather_k: perm has shape {tuple(perm.shape)}; it must be "
                         f"[K] = [{k}]")
    if not perm.is_contiguous():
        raise ValueError(f"w4a16.gather_k: perm (stride {perm.stride(0)}) must be contiguous")
    return k


def _gather_cuda(a: Tensor, perm: Tensor) -> Tensor:
    k = _check(a, perm)
    if perm.device != a.device:
        raise ValueError(f"w4a16.gather_k: perm is on {perm.device} but a is on {a.device}")
    out = torch.empty(a.shape, dtype=a.dtype, device=a.device)
    m = out.numel() // k
    if m == 0:
        return out
    a2, lda = _rows_view(a, k, "a", op="w4a16.gather_k", ld_multiple=1)
    index = a.get_device()
    args = (a2.data_ptr(), lda, perm.data_ptr(), m, k, _C_DTYPE[a.dtype], out.data_ptr(), k)
    if index != _current_device():
        with torch.cuda.device(index):
            _lib.check(_lib.lib().w4a16_gather_k(*args, _raw_stream(index)))
    else:
        _lib.check(_lib.lib().w4a16_gather_k(*args, _raw_stream(index)))
    return out


def _not_cuda(a: Tensor, perm: Tensor) -> Tensor:
    raise ValueError(f"w4a16.gather_k: a is on {a.device}; the op runs on CUDA devices")


def _gather_fake(a: Tensor, perm: Tensor) -> Tensor:
    _check(a, perm)
    return a.new_empty(a.shape)


_torch_lib = torch.library.Library("w4a16", "FRAGMENT")
_torch_lib.define("gather_k(Tensor a, Tensor perm) -> Tensor")
_torch_lib.impl("gather_k", _gather_cuda, "CUDA")
_torch_lib.impl("gather_k", _not_cuda, "CPU")
torch.library.register_fake("w4a16::gather_k", _gather_fake, lib=_torch_lib)


def gather_k(a: Tensor, perm: Tensor) -> Tensor:
    """``torch.ops.w4a16.gather_k(a, perm)``: ``a.index_select(-1, perm)``; see the module."""
    return torch.ops.w4a16.gather_k(a, perm)
