"""Quantized weights on the host: quantize, pack, unpack and :class:`QuantizedWeight`.

Everything here runs on the CPU through the C library (``w4a16_quantize``,
``w4a16_pack_weights``, ``w4a16_unpack_weights``), so the Python package gives the same bits as a C
caller. Inputs may be numpy arrays or torch tensors (any device: they are copied to the host);
outputs are of the same kind as the input (torch tensors on the CPU, or numpy arrays).
"""

from __future__ import annotations

import ctypes
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, Tuple

import numpy as np

from . import _dtypes
from ._lib import QUANTIZE_OPTIONS, W4A16Error, check, last_error_message, lib

__all__ = ["QuantizedWeight", "quantize", "pack", "unpack"]

Array = Any  # numpy.ndarray or torch.Tensor


def _torch() -> Any:
    """The torch module if it is importable, else None (torch is an optional dependency)."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def _is_torch(x: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def _host_numpy(x: Array, name: str) -> np.ndarray:
    """A C-contiguous numpy view (or copy) of x on the host; bf16 tensors come as uint16 bits."""
    if _is_torch(x):
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        import torch
        if t.dtype == torch.bfloat16:
            t = t.view(torch.int16)
            return np.ascontiguousarray(t.numpy()).view(np.uint16)
        return np.ascontiguousarray(t.numpy())
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x)
    raise TypeError(f"{name} must be a numpy array or a torch tensor, not {type(x).__name__}")


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def _check_codes_shape(n: int, k: int, what: str) -> None:
    if n % 16 or k % 64 or n < 1 or k < 1:
        raise ValueError(f"{what}: the packed layout needs N % 16 == 0 and K % 64 == 0, got "
                         f"N = {n}, K = {k}")


def pack(codes: Array) -> Array:
    """Pack logical ``[N, K]`` 4-bit codes into the kernels' layout (docs/LAYOUT.md).

    Args:
        codes: ``[N, K]`` integer codes in ``[0, 15]`` (any integer dtype), numpy or torch;
            N % 16 == 0, K % 64 == 0.

    Returns:
        ``[N, K/2]`` uint8, of the input's kind (a torch tensor on the CPU, or numpy).

    Raises:
        ValueError: a shape the layout cannot hold, or a code outside ``[0, 15]`` (named).
    """
    c = _host_numpy(codes, "codes")
    if c.ndim != 2:
        raise ValueError(f"codes must be 2-D [N, K], got shape {tuple(c.shape)}")
    if c.dtype.kind not in "iub":
        raise TypeError(f"codes must be integers, got dtype {c.dtype}")
    n, k = c.shape
    _check_codes_shape(n, k, "pack")
    if c.size and (c.min() < 0 or c.max() > 15):
        bad = np.argwhere((c < 0) | (c > 15))[0]
        raise ValueError(f"codes[{bad[0]}, {bad[1]}] = {c[bad[0], bad[1]]} is not a 4-bit code "
                         "(0..15)")
    c8 = np.ascontiguousarray(c, dtype=np.uint8)
    out = np.empty((n, k // 2), dtype=np.uint8)
    check(lib().w4a16_pack_weights(_ptr(c8), n, k, _ptr(out)))
    return _like(codes, out)


def unpack(packed: Array, n: Optional[int] = None, k: Optional[int] = None) -> Array:
    """Undo :func:`pack`: ``[N, K/2]`` packed uint8 -> ``[N, K]`` uint8 codes (0..15).

    Args:
        packed: the packed weights, numpy or torch (``[N, K/2]``, or any shape of N*K/2 bytes
            when n and k are given).
        n, k: the logical shape; inferred from a 2-D ``packed`` when omitted.

    Raises:
        ValueError: a shape that disagrees with the buffer or the layout.
    """
    p = _host_numpy(packed, "packed")
    if p.dtype != np.uint8:
        raise TypeError(f"packed must be uint8, got dtype {p.dtype}")
    if n is None or k is None:
        if p.ndim != 2:
            raise ValueError(f"packed has shape {tuple(p.shape)}: give n and k, or a 2-D "
                             "[N, K/2] array")
        n = p.shape[0] if n is None else n
        k = 2 * p.shape[1] if k is None else k
    _check_codes_shape(n, k, "unpack")
    if p.size * 2 != n * k:
        raise ValueError(f"packed holds {p.size} bytes, but N = {n}, K = {k} needs {n * k // 2}")
    out = np.empty((n, k), dtype=np.uint8)
    check(lib().w4a16_unpack_weights(_ptr(p), n, k, _ptr(out)))
    return _like(packed, out)


def _like(ref: Array, out: np.ndarray) -> Array:
    """out as a CPU torch tensor when ref is a torch tensor, else as is."""
    if _is_torch(ref):
        import torch
        return torch.from_numpy(out)
    return out


def _per_column(group_size: Optional[int], k: int) -> bool:
    return group_size is None or group_size in (-1, 0) or group_size == k


def quantize(weight: Array, group_size: Optional[int] = 128, zero_point: bool = False,
             dtype: Any = "bfloat16", clip_search: bool = False) -> "QuantizedWeight":
    """Quantize ``[N, K]`` float weights (like ``torch.nn.Linear.weight``) to 4 bits and pack them.

    Round-to-nearest, as the C function ``w4a16_quantize_ex`` (the same bits): symmetric modes
    use ``s = max|w| / 7.5`` around the code 8 (the whole code range, GPTQ's symmetric rule),
    zero points ``s = (max - min) / 15``, ``z = min``; scales and zeros are rounded to dtype
    first and the codes computed from the rounded values. ``clip_search`` also tries, per group,
    the ranges ``p x`` the plain one for ``p = 1, 0.99, ..., 0.21`` and keeps the one with the
    smallest squared error of the dequantized weights (GPTQ's ``mse`` grid; about 80 times the
    work).

    Args:
        weight: ``[N, K]`` float32, float16 or bfloat16 (numpy, or torch on any device);
            N % 16 == 0 and K % 64 == 0 (the packed layout).
        group_size: elements of K per scale: 32, 64, 128 or 256 (K a multiple); ``-1``, ``0``,
            ``None`` or K for one scale per column.
        zero_point: also store a float zero point per group (FINEGRAINED_SCALE_AND_ZEROS).
        dtype: the activation dtype the scales are stored in (``"bfloat16"``, ``"float16"``,
            or a torch / numpy dtype).
        clip_search: search each group's range (see above).

    Returns:
        A :class:`QuantizedWeight` on the host, of the input's kind (torch or numpy).

    Raises:
        ValueError, TypeError: a bad shape, dtype or group size (named);
        W4A16Error: the C quantizer's refusal (e.g. a weight that is not finite, with its row
            and column).
    """
    w = _host_numpy(weight, "weight")
    if w.ndim != 2:
        raise ValueError(f"weight must be 2-D [N, K], got shape {tuple(w.shape)}")
    n, k = w.shape
    _check_codes_shape(n, k, "quantize")
    dt = _dtypes.canonical_dtype(dtype)
    if _is_torch(weight):
        import torch
        wdt = weight.dtype
        host_type = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}.get(wdt)
        if host_type is None:
            raise TypeError(f"weight dtype {wdt} is not float32, float16 or bfloat16")
    else:
        host_type = {"float32": 0, "float16": 1}.get(w.dtype.name)
        if w.dtype.name == "float64":
            w, host_type = np.ascontiguousarray(w, dtype=np.float32), 0
        if host_type is None:
            raise TypeError(f"weight dtype {w.dtype} is not float32, float16 or float64")
    if _per_column(group_size, k):
        if zero_point:
            mode, g = _dtypes.FINEGRAINED_SCALE_AND_ZEROS, k
        else:
            mode, g = _dtypes.PER_COLUMN_SCALE_ONLY, k
    else:
        if not isinstance(group_size, (int, np.integer)) or group_size < 1:
            raise ValueError(f"group_size {group_size!r} is not a positive group size, -1 or None")
        mode = (_dtypes.FINEGRAINED_SCALE_AND_ZEROS if zero_point
                else _dtypes.FINEGRAINED_SCALE_ONLY)
        g = int(group_size)
        if k % g:
            raise ValueError(f"group_size {g} does not divide K = {k}")
    groups = k // g
    codes = np.empty((n, k), dtype=np.uint8)
    scales = np.empty((groups, n), dtype=np.uint16)
    zeros = np.empty((groups, n), dtype=np.uint16) if zero_point else None
    c_group = 0 if mode == _dtypes.PER_COLUMN_SCALE_ONLY else g
    _quantize_rows(w, host_type, mode, c_group, _dtypes.c_dtype(dt), bool(clip_search), codes,
                   scales, zeros)
    packed = np.empty((n, k // 2), dtype=np.uint8)
    check(lib().w4a16_pack_weights(_ptr(codes), n, k, _ptr(packed)))
    qw = QuantizedWeight(packed, _dtypes.from_bits(scales, dt),
                         None if zeros is None else _dtypes.from_bits(zeros, dt),
                         group_size=g, n=n, k=k, dtype=dt)
    return qw.to_torch() if _is_torch(weight) else qw


def _quantize_rows(w: np.ndarray, host_type: int, mode: int, c_group: int, c_dtype: int,
                   clip_search: bool, codes: np.ndarray, scales: np.ndarray,
                   zeros: Optional[np.ndarray]) -> None:
    """``w4a16_quantize_ex`` over blocks of rows on a thread pool (ctypes releases the GIL).

    Rows are quantized independently, so blocks give the same bits as one call; each block's
    [G, rows] scales and zeros are copied into their columns of the [G, N] outputs. The first
    failing block's error is raised (the outputs are then partly written, as in C).
    """
    n, k = w.shape
    L = lib()
    opts = QUANTIZE_OPTIONS(struct_size=ctypes.sizeof(QUANTIZE_OPTIONS), clip_search=clip_search)
    rows = max(16, (1 << 22) // max(k, 1))
    blocks = [(r, min(n, r + rows)) for r in range(0, n, rows)]

    def run(block: Tuple[int, int]) -> Tuple[int, str]:
        r0, r1 = block
        s = np.empty((scales.shape[0], r1 - r0), np.uint16)
        z = np.empty_like(s) if zeros is not None else None
        st = L.w4a16_quantize_ex(_ptr(w) + r0 * k * w.itemsize, host_type, r1 - r0, k, mode,
                                 c_group, c_dtype, opts, _ptr(codes) + r0 * k, _ptr(s),
                                 _ptr(z) if z is not None else None)
        if st:
            return st, last_error_message()
        scales[:, r0:r1] = s
        if zeros is not None:
            zeros[:, r0:r1] = z
        return 0, ""

    workers = min(len(blocks), os.cpu_count() or 1)
    if workers > 1:
        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(run, blocks))
    else:
        results = [run(b) for b in blocks]
    if any(st for st, _ in results):
        # the library's message names the row within its block: one call over all rows names it
        # in the whole weight
        check(L.w4a16_quantize_ex(_ptr(w), host_type, n, k, mode, c_group, c_dtype, opts,
                                  _ptr(codes), _ptr(scales),
                                  _ptr(zeros) if zeros is not None else None))
        st, msg = next(r for r in results if r[0])
        raise W4A16Error(st, msg)


class QuantizedWeight:
    """A 4-bit weight in the library's layout, with its scales and zero points.

    The logical weight is ``W[N, K]`` (like ``torch.nn.Linear.weight``); the kernels compute
    ``a @ dequant(W).T``. Dequantization (include/w4a16/w4a16.h):
    ``s[k // g, n] * (q - 8)`` without zeros, ``s[k // g, n] * q + z[k // g, n]`` with them.

    Attributes:
        qweight: packed codes ``[N, K/2]`` uint8 (docs/LAYOUT.md).
        scales: ``[G, N]``, G = K / group_size; a torch tensor of ``dtype``, or on the numpy side
            float32 values exactly representable in ``dtype``.
        zeros: ``[G, N]`` float zero points (``z = -s * zq`` for an integer zero point zq), like
            scales, or None.
        group_size: elements of K per scale row (K for one scale per column).
        n, k: the logical shape.
        dtype: ``"float16"`` or ``"bfloat16"``: the activation dtype (scales, zeros, bias and the
            output share it).
        perm: act-order permutation, int64 ``[K]``, or None: the stored weight's column ``j`` is
            the checkpoint's column ``perm[j]``, so the op must be given ``a[..., perm]``
            (``w4a16.nn.Linear`` does this gather).
    """

    def __init__(self, qweight: Array, scales: Array, zeros: Optional[Array] = None, *,
                 group_size: int, n: int, k: int, dtype: Any = "bfloat16",
                 perm: Optional[Array] = None) -> None:
        self.qweight = qweight
        self.scales = scales
        self.zeros = zeros
        self.group_size = int(group_size)
        self.n = int(n)
        self.k = int(k)
        self.dtype = _dtypes.canonical_dtype(dtype)
        self.perm = perm
        self._validate()

    def _validate(self) -> None:
        n, k, g = self.n, self.k, self.group_size
        if g < 1 or k % g:
            raise ValueError(f"group_size {g} does not divide K = {k}")
        if tuple(self.qweight.shape) != (n, k // 2):
            raise ValueError(f"qweight has shape {tuple(self.qweight.shape)}, expected "
                             f"[N, K/2] = [{n}, {k // 2}]")
        if tuple(self.scales.shape) != (k // g, n):
            raise ValueError(f"scales have shape {tuple(self.scales.shape)}, expected "
                             f"[G, N] = [{k // g}, {n}]")
        if self.zeros is not None and tuple(self.zeros.shape) != (k // g, n):
            raise ValueError(f"zeros have shape {tuple(self.zeros.shape)}, expected "
                             f"[G, N] = [{k // g}, {n}]")
        if self.perm is not None and tuple(self.perm.shape) != (k,):
            raise ValueError(f"perm has shape {tuple(self.perm.shape)}, expected [K] = [{k}]")

    @property
    def mode(self) -> int:
        """The ``w4a16_quant_mode`` the op runs this weight with."""
        if self.zeros is not None:
            return _dtypes.FINEGRAINED_SCALE_AND_ZEROS
        if self.group_size == self.k:
            return _dtypes.PER_COLUMN_SCALE_ONLY
        return _dtypes.FINEGRAINED_SCALE_ONLY

    @property
    def is_torch(self) -> bool:
        """Whether the tensors are torch tensors (else numpy arrays)."""
        return _is_torch(self.qweight)

    @property
    def device(self) -> Any:
        """The torch device of the tensors (``"cpu"`` for numpy arrays)."""
        return self.qweight.device if self.is_torch else "cpu"

    def _map(self, fn: Callable[[Array, str], Array]) -> "QuantizedWeight":
        return QuantizedWeight(fn(self.qweight, "qweight"), fn(self.scales, "scales"),
                               None if self.zeros is None else fn(self.zeros, "zeros"),
                               group_size=self.group_size, n=self.n, k=self.k, dtype=self.dtype,
                               perm=None if self.perm is None else fn(self.perm, "perm"))

    def to_torch(self) -> "QuantizedWeight":
        """The same weight as CPU torch tensors (scales and zeros in ``dtype``); exact."""
        import torch
        tdt = getattr(torch, self.dtype)

        def conv(x: Array, name: str) -> Any:
            if _is_torch(x):
                return x
            if name in ("scales", "zeros"):
                return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(tdt)
            return torch.from_numpy(np.ascontiguousarray(x))
        return self._map(conv)

    def numpy(self) -> "QuantizedWeight":
        """The same weight as numpy arrays (scales and zeros as exact float32 values)."""
        def conv(x: Array, name: str) -> np.ndarray:
            if _is_torch(x):
                t = x.detach().cpu()
                if name in ("scales", "zeros"):
                    t = t.float()
                return t.numpy()
            return x
        return self._map(conv)

    def to(self, device: Any) -> "QuantizedWeight":
        """The weight as torch tensors on device (e.g. ``"cuda"``); a copy where it moves."""
        qw = self if self.is_torch else self.to_torch()
        return qw._map(lambda x, name: x.to(device))

    def codes(self) -> Array:
        """The logical ``[N, K]`` uint8 codes in the stored (act-order permuted) column order."""
        return unpack(self.qweight, self.n, self.k)

    def dequantize(self) -> Array:
        """The float32 weight ``[N, K]`` in the checkpoint's own column order (act-order undone).

        Exactly what the kernels multiply by: ``s * (q - 8)`` or ``s * q + z`` in float32 from the
        stored dtype values. A torch tensor on the weight's device, or a numpy array.
        """
        host = self.numpy()
        q = unpack(host.qweight, self.n, self.k).astype(np.float32)
        g = self.group_size
        s = np.repeat(np.asarray(host.scales, dtype=np.float32).T, g, axis=1)
        if host.zeros is not None:
            z = np.repeat(np.asarray(host.zeros, dtype=np.float32).T, g, axis=1)
            w = s * q + z
        else:
            w = s * (q - 8.0)
        if host.perm is not None:
            out = np.empty_like(w)
            out[:, np.asarray(host.perm, dtype=np.int64)] = w
            w = out
        if self.is_torch:
            import torch
            return torch.from_numpy(w).to(self.device)
        return w

    def __repr__(self) -> str:
        kind = f"torch, {self.device}" if self.is_torch else "numpy"
        extra = ", act-order" if self.perm is not None else ""
        return (f"QuantizedWeight(n={self.n}, k={self.k}, group_size={self.group_size}, "
                f"mode={_dtypes.MODES[self.mode]}, dtype={self.dtype}{extra}, {kind})")
