"""The raw GEMM call: ``w4a16_gemm`` with integer device pointers, and workspace sizes.

No torch here: the op in :mod:`w4a16.ops` checks tensors and hands this module integers (device
pointers, strides, a stream handle). Arguments are packed into a per-thread
``w4a16_gemm_args`` buffer with one :mod:`struct` call, so that a call costs the host little
beyond the library's own launch.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Dict, Tuple

from ._lib import GEMM_ARGS_STRUCT, GROUPED_ARGS, GROUPED_ARGS_STRUCT, PROBLEM, check, lib

__all__ = ["gemm_raw", "grouped_gemm_raw", "grouped_workspace_bytes", "workspace_bytes",
           "forget_workspace_sizes"]

_tls = threading.local()
_ws_memo: Dict[Tuple[int, ...], int] = {}
_ws_lock = threading.Lock()


def _args_buffer(name: str = "gemm",
                 size: int = GEMM_ARGS_STRUCT.size) -> Tuple[ctypes.Array, int]:
    """This thread's argument buffer `name` (``w4a16_gemm_args``, ``w4a16_grouped_gemm_args``)
    and its address."""
    got = getattr(_tls, name, None)
    if got is None:
        buf = ctypes.create_string_buffer(size)
        got = (buf, ctypes.addressof(buf))
        setattr(_tls, name, got)
    return got


def workspace_bytes(device: int, m: int, n: int, k: int, group_size: int, mode: int,
                    dtype: int, act_order: int = 0) -> int:
    """Bytes of workspace that ``w4a16_gemm`` with no kernel wants for this problem on device.

    ``w4a16_workspace_size(NULL, ...)``: the size for the kernel selection picks now (config
    cache, else heuristic), memoized per (device, problem) until :func:`forget_workspace_sizes`
    (``w4a16.tune`` calls it). act_order nonzero: the problem takes A's columns through a
    permutation, which adds the gathered activations (M*K*2 bytes, rounded up to 256) to the
    size. Must be called with ``device`` current.
    """
    act_order = 1 if act_order else 0
    key = (device, m, n, k, group_size, mode, dtype, act_order)
    got = _ws_memo.get(key)
    if got is not None:
        return got
    prob = PROBLEM(m=m, n=n, k=k, lda=0, ldd=0, group_size=group_size, mode=mode, dtype=dtype,
                   has_bias=0, act_order=act_order)
    size = ctypes.c_size_t(0)
    check(lib().w4a16_workspace_size(None, ctypes.byref(prob), 0, ctypes.byref(size)))
    with _ws_lock:
        _ws_memo[key] = size.value
    return size.value


def forget_workspace_sizes() -> None:
    """Drop the memo of :func:`workspace_bytes` (the selection may have changed)."""
    with _ws_lock:
        _ws_memo.clear()


def gemm_raw(m: int, n: int, k: int, lda: int, ldd: int, group_size: int, mode: int, dtype: int,
             a: int, w: int, scales: int, zeros: int, bias: int, d: int, alpha: float,
             workspace: int, workspace_bytes: int, stream: int, a_perm: int = 0,
             flags: int = 0) -> None:
    """``w4a16_gemm(args, NULL, workspace, workspace_bytes, stream)`` on device pointers.

    Pointers and the stream are integers (0 for NULL / the legacy default stream); the kernel is
    selected by the library (config cache, else heuristic). a_perm: the act-order permutation
    (device int32 [K]; the problem's act_order is set where it is not 0): the product takes
    A[:, a_perm], and the workspace must hold :func:`workspace_bytes` with act_order. flags:
    ``w4a16_gemm_args.flags`` (0 or :data:`w4a16._lib.GEMM_NO_PDL`). Asynchronous.

    Raises:
        W4A16Error: the library's status and message (nothing was launched or written).
    """
    buf, addr = _args_buffer()
    GEMM_ARGS_STRUCT.pack_into(buf, 0, m, n, k, lda, ldd, group_size, mode, dtype,
                               1 if bias else 0, 1 if a_perm else 0, a, w, scales, zeros, bias,
                               d, alpha, a_perm, flags)
    st = lib().w4a16_gemm(addr, None, workspace or None, workspace_bytes, stream or None)
    if st:
        check(st)


def grouped_workspace_bytes(experts: int, rows: int, n: int, k: int, group_size: int, mode: int,
                            dtype: int, row_index: bool) -> int:
    """Bytes of workspace that ``w4a16_grouped_gemm`` with no kernel wants for these arguments.

    ``w4a16_grouped_gemm_workspace_size(NULL, ...)``: with a row index and enough rows an expert,
    the rows gathered into grouped order (rows*K*2 bytes, rounded up to 256) for the Hopper
    form's widest token tile; else 0. No device is asked; memoized with :func:`workspace_bytes`'
    answers (the op asks on every call).
    """
    if not row_index:
        return 0
    key = (-1, experts, rows, n, k, group_size, mode, dtype)  # (device -1: apart from the dense keys)
    got = _ws_memo.get(key)
    if got is not None:
        return got
    ga = GROUPED_ARGS(struct_size=ctypes.sizeof(GROUPED_ARGS), experts=experts, rows=rows, n=n,
                      k=k, a_rows=rows, group_size=group_size, mode=mode, dtype=dtype,
                      row_index=1)  # (only whether there is one counts)
    size = ctypes.c_size_t(0)
    check(lib().w4a16_grouped_gemm_workspace_size(None, ctypes.byref(ga), ctypes.byref(size)))
    with _ws_lock:
        _ws_memo[key] = size.value
    return size.value


def grouped_gemm_raw(experts: int, rows: int, n: int, k: int, lda: int, ldd: int, a_rows: int,
                     group_size: int, mode: int, dtype: int, offsets64: bool, a: int, w: int,
                     scales: int, zeros: int, offsets: int, row_index: int, row_scale: int,
                     d: int, alpha: float, status: int, stream: int, kernel: int = 0,
                     flags: int = 0, workspace: int = 0, workspace_bytes: int = 0) -> None:
    """``w4a16_grouped_gemm(args, kernel, workspace, workspace_bytes, stream)`` on device
    pointers (0 for NULL).

    kernel: a grouped kernel's descriptor address (``w4a16_grouped_kernel_get``), or 0 for the
    library's heuristic choice. flags: ``w4a16_grouped_gemm_args.flags`` (0 or
    :data:`w4a16._lib.GEMM_NO_PDL`). workspace: where the kernel gathers the rows through the
    row index first (:func:`grouped_workspace_bytes`; a kernel given that does so needs it, the
    heuristic's choice takes a kernel that gathers in place where it is smaller).
    Asynchronous; the offsets are never read on the host.

    Raises:
        W4A16Error: the library's status and message (nothing was launched or written).
    """
    buf, addr = _args_buffer("grouped", GROUPED_ARGS_STRUCT.size)
    GROUPED_ARGS_STRUCT.pack_into(buf, 0, GROUPED_ARGS_STRUCT.size, experts, rows, n, k, lda, ldd,
                                  a_rows, group_size, mode, dtype, 1 if offsets64 else 0, a, w,
                                  scales, zeros, offsets, row_index, row_scale, d, alpha, status,
                                  flags)
    st = lib().w4a16_grouped_gemm(addr, kernel or None, workspace or None, workspace_bytes,
                                  stream or None)
    if st:
        check(st)
