"""Import 4-bit checkpoints (GPTQ v1/v2, AWQ GEMM, compressed-tensors pack-quantized) exactly.

Each importer decodes one format's packed words into the logical codes ``q[N, K]`` (0..15), its
integer zero points and its scales, and rebuilds them in the library's layout as a
:class:`w4a16.QuantizedWeight` whose :meth:`~w4a16.QuantizedWeight.dequantize` is the float32
weight ``[N, K]`` in the checkpoint's own column order (act-order undone). Host-side only: numpy
arrays or torch tensors in (any device; copied to the host), no GPU needed; torch in gives CPU
torch tensors out, numpy in gives numpy out.

Exactness. The codes, the act-order permutation and the scales are carried over bit for bit (the
scales are rounded to ``dtype`` only where the checkpoint stores them in another float type). A
checkpoint whose integer zero point is 8 everywhere (every symmetric GPTQ / compressed-tensors
checkpoint) maps to a scale-only mode, ``w = s * (q - 8)``, exactly what the format computes. Any
other zero point ``zq`` is stored as the library's float zero ``z = -s * zq`` rounded to ``dtype``
(round to nearest even, in :func:`_assemble`): the kernels then compute ``s * q + z``, which differs
from the format's ``s * (q - zq)`` by that one rounding, at most half an ulp of ``s * zq`` in dtype
(``|s| * zq * 2**-11`` for float16, ``2**-8`` for bfloat16). This is the import's one inexact step;
on uniformly random codes and zero points it is a relative (Frobenius) weight error of about 3e-4
in float16 and 2.3e-3 in bfloat16 (tests/python/test_checkpoints_gpu.py's layers), far below the
4-bit quantization error itself.

:func:`load_quantized` reads a whole checkpoint folder (``config.json`` or ``quantize_config.json``
and single or sharded safetensors) through the ``safetensors`` library's numpy API.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from . import _dtypes
from ._weight import QuantizedWeight, _host_numpy, _is_torch, pack

__all__ = ["from_gptq", "from_awq", "from_compressed_tensors", "load_quantized",
           "QuantizedCheckpoint"]

Array = Any  # numpy.ndarray or torch.Tensor

#: AWQ GEMM: the nibble (0 = lowest 4 bits) of a packed word that holds column j of its 8 columns.
AWQ_NIBBLE_OF_COLUMN = (0, 4, 1, 5, 2, 6, 3, 7)


# --- input conversion -------------------------------------------------------------------------

def _words(x: Array, name: str, shape_hint: str) -> np.ndarray:
    """x as a 2-D uint32 array of packed words (int32 / uint32 in; the bits are kept)."""
    if x is None:
        raise TypeError(f"{name} is required ({shape_hint} int32)")
    a = _host_numpy(x, name)
    if a.dtype not in (np.int32, np.uint32):
        raise TypeError(f"{name} must be int32 {shape_hint} packed words, got dtype {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D {shape_hint}, got shape {tuple(a.shape)}")
    return a.view(np.uint32)


def _float_values(x: Array, name: str, shape_hint: str) -> np.ndarray:
    """x's values as float32 (float16, bfloat16 and float32 exactly; float64 rounded)."""
    if x is None:
        raise TypeError(f"{name} is required ({shape_hint})")
    if _is_torch(x):
        import torch
        if not x.is_floating_point():
            raise TypeError(f"{name} must be a float tensor {shape_hint}, got dtype {x.dtype}")
        if x.dtype == torch.bfloat16:
            return _dtypes.from_bits(_host_numpy(x, name), "bfloat16")
        return _host_numpy(x, name).astype(np.float32)
    a = _host_numpy(x, name)
    if a.dtype.kind != "f":
        raise TypeError(f"{name} must be a float array {shape_hint}, got dtype {a.dtype}")
    return a.astype(np.float32)


def _ints(x: Array, name: str) -> np.ndarray:
    """x as an int64 array (any integer dtype)."""
    a = _host_numpy(x, name)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got dtype {a.dtype}")
    return a.astype(np.int64)


def _check_bits(bits: int, name: str = "bits") -> None:
    if bits != 4:
        raise ValueError(f"{name} = {bits!r}: w4a16 imports 4-bit weights only")


def _check_layout(n: int, k: int, what: str) -> None:
    if n % 16 or k % 64 or n < 1 or k < 1:
        raise ValueError(f"{what}: the library's packed layout needs N % 16 == 0 and K % 64 == 0, "
                         f"got N = {n}, K = {k}")


def _group(group_size: Optional[int], k: int, groups: int, what: str) -> int:
    """The group size in K elements (K for one group per column), checked against G = groups."""
    if group_size is None or group_size in (-1, 0):
        g = k
    else:
        if isinstance(group_size, bool) or not isinstance(group_size, (int, np.integer)) \
                or group_size < 1:
            raise ValueError(f"group_size = {group_size!r} is not a positive group size or -1")
        g = int(group_size)
        if k % g:
            raise ValueError(f"group_size = {g} does not divide K = {k}")
    if k // g != groups:
        raise ValueError(f"{what}: group_size {group_size} gives K / group_size = {k // g} groups "
                         f"but the scales hold G = {groups}")
    return g


# --- bit fields ----------------------------------------------------------------------------------

_PLAIN = tuple(range(8))


def _nibbles_along_rows(words: np.ndarray, order: Tuple[int, ...] = _PLAIN) -> np.ndarray:
    """``[R, C]`` words -> ``[8R, C]`` uint8: row ``8r + i`` is nibble ``order[i]`` (bits
    ``4 * order[i]`` up) of row r."""
    r, c = words.shape
    out = np.empty((r, 8, c), dtype=np.uint8)
    for i in range(8):
        out[:, i, :] = (words >> np.uint32(4 * order[i])) & np.uint32(15)
    return out.reshape(8 * r, c)


def _nibbles_along_cols(words: np.ndarray, order: Tuple[int, ...] = _PLAIN) -> np.ndarray:
    """``[R, C]`` words -> ``[R, 8C]`` uint8: column ``8c + i`` is nibble ``order[i]`` of
    column c."""
    r, c = words.shape
    out = np.empty((r, c, 8), dtype=np.uint8)
    for i in range(8):
        out[:, :, i] = (words >> np.uint32(4 * order[i])) & np.uint32(15)
    return out.reshape(r, 8 * c)


# --- act-order and assembly --------------------------------------------------------------------

def _act_order(g_idx: Optional[Array], k: int, g: int, groups: int,
               name: str) -> Optional[np.ndarray]:
    """The permutation ``perm = argsort(g_idx)`` (stable), or None where it is the identity.

    After it, stored column j belongs to group ``j // g``: each group must hold exactly g columns.
    """
    if g_idx is None:
        return None
    gi = _ints(g_idx, name)
    if gi.shape != (k,):
        raise ValueError(f"{name} has shape {tuple(gi.shape)}, expected [K] = [{k}]")
    if gi.size and (gi.min() < 0 or gi.max() >= groups):
        bad = int(np.argmax((gi < 0) | (gi >= groups)))
        raise ValueError(f"{name}[{bad}] = {gi[bad]} is not a group index in [0, {groups})")
    perm = np.argsort(gi, kind="stable")
    want = np.arange(k, dtype=np.int64) // g
    sorted_groups = gi[perm]
    if not np.array_equal(sorted_groups, want):
        counts = np.bincount(gi, minlength=groups)
        bad = int(np.argmax(counts != g))
        raise ValueError(f"{name}: group {bad} holds {counts[bad]} columns, but the library needs "
                         f"every group to hold exactly group_size = {g} columns after act-order "
                         "sorting")
    if np.array_equal(perm, np.arange(k)):
        return None
    return perm.astype(np.int64)


def _assemble(codes: np.ndarray, zq: Optional[np.ndarray], scales: np.ndarray,
              perm: Optional[np.ndarray], g: int, dtype: str, torch_out: bool,
              scale_name: str) -> QuantizedWeight:
    """A QuantizedWeight from checkpoint-order codes ``[N, K]``, integer zeros ``[G, N]`` (or None
    for 8), float32 scales ``[G, N]`` and the act-order permutation.

    The one inexact step of every import is here: ``z = -s * zq`` rounded to dtype.
    """
    n, k = codes.shape
    s = _dtypes.round_to(scales, dtype)
    if not np.all(np.isfinite(s)):
        bad = np.argwhere(~np.isfinite(s))[0]
        raise ValueError(f"{scale_name}[{bad[0]}, {bad[1]}] = {scales[bad[0], bad[1]]} is not "
                         f"finite in {dtype}")
    zeros = None
    if zq is not None and not np.all(zq == 8):
        zeros = _dtypes.round_to(-s.astype(np.float64) * zq.astype(np.float64), dtype)
        if not np.all(np.isfinite(zeros)):
            bad = np.argwhere(~np.isfinite(zeros))[0]
            raise ValueError(f"the zero point -s * zq at [{bad[0]}, {bad[1]}] overflows {dtype}")
    stored = codes if perm is None else np.take(codes, perm, axis=1)
    qw = QuantizedWeight(pack(np.ascontiguousarray(stored)), s, zeros, group_size=g, n=n, k=k,
                         dtype=dtype, perm=perm)
    return qw.to_torch() if torch_out else qw


def _any_torch(*xs: Any) -> bool:
    return any(_is_torch(x) for x in xs if x is not None)


# --- GPTQ ---------------------------------------------------------------------------------------

def _qweight_qzeros_scales(qweight: Array, qzeros: Optional[Array], scales: Array,
                           group_size: Optional[int], along_k: bool, what: str
                           ) -> Tuple[np.ndarray, Optional[np.ndarray], np.ndarray, int]:
    """GPTQ / AWQ tensors checked against each other: qweight words (``[K/8, N]`` packed along
    K, or ``[K, N/8]`` along N), qzeros words ``[G, N/8]`` (or None), float32 scales ``[G, N]``
    and the group size in K elements."""
    hint = "[K/8, N]" if along_k else "[K, N/8]"
    qw_words = _words(qweight, "qweight", hint)
    s = _float_values(scales, "scales", "[G, N]")
    r, c = qw_words.shape
    k, n = (8 * r, c) if along_k else (r, 8 * c)
    if s.ndim != 2 or s.shape[1] != n:
        raise ValueError(f"scales has shape {tuple(s.shape)}, expected [G, N] with N = {n} "
                         f"(qweight is {hint} = {[r, c]})")
    _check_layout(n, k, what)
    groups = s.shape[0]
    g = _group(group_size, k, groups, what)
    zw = None
    if qzeros is not None:
        zw = _words(qzeros, "qzeros", "[G, N/8]")
        if zw.shape != (groups, n // 8):
            raise ValueError(f"qzeros has shape {tuple(zw.shape)}, expected [G, N/8] = "
                             f"[{groups}, {n // 8}]")
    return qw_words, zw, s, g

def from_gptq(qweight: Array, qzeros: Optional[Array], scales: Array,
              g_idx: Optional[Array] = None, *, group_size: Optional[int], sym: bool = True,
              checkpoint_format: str = "gptq", dtype: Any = "float16",
              bits: int = 4) -> QuantizedWeight:
    """Import one GPTQ linear layer (AutoGPTQ / GPTQModel / transformers ``QuantLinear``).

    Format (AutoGPTQ's ``QuantLinear.pack`` and GPTQModel's v1 / v2 checkpoint formats; vLLM's
    ``gptq`` loader reads the same tensors): codes ``q`` in 0..15, weight
    ``W[n, k] = scales[g_idx[k], n] * (q[n, k] - zq[g_idx[k], n])``.

    - ``qweight`` int32 ``[K/8, N]``: packed along K; word ``[r, n]`` holds ``q[n, 8r + i]`` in
      bits ``4i .. 4i+3`` (low nibble first), so the word ``0x76543210`` is codes 0..7 along K.
    - ``qzeros`` int32 ``[G, N/8]``: packed along N the same way (word ``[g, c]``, nibble i is
      column ``8c + i``). ``"gptq"`` (v1) stores ``zq - 1``: the format's forward adds 1 to the
      unmasked nibble, so a stored 15 means 16 (what a zero point of 0 packs to). ``"gptq_v2"``
      (GPTQModel) stores ``zq`` itself.
    - ``scales`` ``[G, N]`` float (float16 in practice).
    - ``g_idx`` int ``[K]``: the group of each checkpoint column (``k // group_size`` without
      act-order; a permutation of that with ``desc_act``), or None.

    Args:
        group_size: the checkpoint's group size, ``-1`` (or None) for one group per column.
        sym: the checkpoint's ``sym`` flag. The stored zeros decide the mode (the format's own
            forward reads them even where ``sym`` is set); with ``sym`` True ``qzeros`` may be
            None, meaning 8.
        checkpoint_format: ``"gptq"`` (v1, zero offset) or ``"gptq_v2"``; others (Marlin,
            BitBLAS, ...) are refused.
        dtype: the activation dtype (scales and zeros are stored in it).
        bits: must be 4.

    Returns:
        A :class:`QuantizedWeight` ``[N, K]`` (group_size K for per-column), with ``perm`` set for
        act-order; scale-only where every zero point is 8, else float zeros (see the module doc).

    Raises:
        ValueError, TypeError: naming the tensor and value (bits, shapes, dtypes, a group size that
        does not divide K, an act-order g_idx whose groups are not all group_size columns, a shape
        the packed layout refuses).
    """
    _check_bits(bits)
    fmt = str(checkpoint_format).lower()
    if fmt not in ("gptq", "gptq_v2"):
        raise ValueError(f"checkpoint_format = {checkpoint_format!r}: only \"gptq\" (v1) and "
                         "\"gptq_v2\" are imported (convert Marlin / BitBLAS checkpoints back)")
    dt = _dtypes.canonical_dtype(dtype)
    if qzeros is None and not sym:
        raise TypeError("qzeros is required ([G, N/8] int32) for an asymmetric (sym=False) "
                        "checkpoint")
    qw_words, zw, s, g = _qweight_qzeros_scales(qweight, qzeros, scales, group_size, True,
                                                "from_gptq")
    k = 8 * qw_words.shape[0]
    zq = None
    if zw is not None:
        zq = _nibbles_along_cols(zw).astype(np.int16)
        if fmt == "gptq":
            zq += 1
    perm = _act_order(g_idx, k, g, s.shape[0], "g_idx")
    codes = _nibbles_along_cols(np.ascontiguousarray(qw_words.T))  # words [N, K/8] -> [N, K]
    return _assemble(codes, zq, s, perm, g, dt, _any_torch(qweight, qzeros, scales, g_idx),
                     "scales")


# --- AWQ ----------------------------------------------------------------------------------------

def from_awq(qweight: Array, qzeros: Array, scales: Array, *, group_size: Optional[int],
             dtype: Any = "float16", version: str = "gemm", bits: int = 4) -> QuantizedWeight:
    """Import one AWQ linear layer packed for the GEMM kernels (AutoAWQ ``WQLinear_GEMM``).

    Format (AutoAWQ's ``WQLinear_GEMM.from_linear`` packing and its ``dequantize_gemm``; vLLM's
    ``awq`` loader reads the same tensors): ``W[n, k] = scales[k // g, n] * (q[n, k] - zq[k // g,
    n])`` with codes and zero points in 0..15.

    - ``qweight`` int32 ``[K, N/8]``: packed along N with interleaved nibbles: word ``[k, c]``
      holds column ``8c + j`` in nibble ``(0, 4, 1, 5, 2, 6, 3, 7)[j]`` (bits ``4 * nibble``
      up), i.e. nibbles 0..7 hold columns 0, 2, 4, 6, 1, 3, 5, 7.
    - ``qzeros`` int32 ``[G, N/8]``: the zero points, packed the same way (no offset).
    - ``scales`` ``[G, N]`` float (float16 in practice).

    Args:
        group_size: the checkpoint's ``q_group_size``; ``-1`` (or None) for one group per column.
        dtype: the activation dtype (scales and zeros are stored in it).
        version: AutoAWQ's ``version``: only ``"gemm"``; ``"gemv"``, ``"gemv_fast"``,
            ``"marlin"``... pack differently and are refused.
        bits: must be 4.

    Returns:
        A :class:`QuantizedWeight`: scale-only where every zero point is 8, else float zeros.

    Raises:
        ValueError, TypeError: naming the tensor and value.
    """
    _check_bits(bits)
    if str(version).lower() != "gemm":
        raise ValueError(f"AWQ version = {version!r}: only the GEMM packing is imported (GEMV, "
                         "GEMV_fast and Marlin checkpoints pack their words differently)")
    dt = _dtypes.canonical_dtype(dtype)
    if qzeros is None:
        raise TypeError("qzeros is required ([G, N/8] int32)")
    qw_words, zw, s, g = _qweight_qzeros_scales(qweight, qzeros, scales, group_size, False,
                                                "from_awq")
    assert zw is not None  # (qzeros given)
    # words [N/8, K] -> [N, K]: row 8c + j is nibble AWQ_NIBBLE_OF_COLUMN[j] of word row c
    codes = _nibbles_along_rows(np.ascontiguousarray(qw_words.T), AWQ_NIBBLE_OF_COLUMN)
    zq = _nibbles_along_cols(zw, AWQ_NIBBLE_OF_COLUMN).astype(np.int16)
    return _assemble(codes, zq, s, None, g, dt, _any_torch(qweight, qzeros, scales), "scales")


# --- compressed-tensors ------------------------------------------------------------------------

def from_compressed_tensors(weight_packed: Array, weight_scale: Array,
                            weight_zero_point: Optional[Array] = None,
                            weight_g_idx: Optional[Array] = None, *,
                            weight_shape: Optional[Any] = None, group_size: Optional[int],
                            symmetric: bool = True, strategy: str = "group",
                            dtype: Any = "bfloat16", num_bits: int = 4) -> QuantizedWeight:
    """Import one compressed-tensors ``pack-quantized`` linear layer (llm-compressor output).

    Format (compressed-tensors' ``PackedQuantizationCompressor`` and ``pack_to_int32``; vLLM's
    ``compressed_tensors`` WNA16 scheme reads the same tensors): signed codes ``c`` in -8..7 and
    zero points ``zp`` in -8..7, ``W[n, k] = weight_scale[n, g_idx[k]] * (c[n, k] - zp[n,
    g_idx[k]])``. Packed values are offset by +8 (``q = c + 8`` in 0..15), eight to an int32, the
    first in the lowest 4 bits:

    - ``weight_packed`` int32 ``[N, K/8]``: word ``[n, r]`` holds ``q[n, 8r + i]`` in bits
      ``4i .. 4i+3``.
    - ``weight_scale`` ``[N, G]`` float (bfloat16 in practice; G = 1 for ``"channel"``).
    - ``weight_zero_point``: asymmetric checkpoints store it packed along N, int32 ``[N/8, G]``
      (word ``[r, g]`` holds ``zp[8r + i, g] + 8`` in nibble i); an unpacked int8 ``[N, G]`` (the
      signed values) is also taken. Symmetric checkpoints have none, or all zeros.
    - ``weight_g_idx`` int ``[K]``: the group of each column (actorder ``"group"``), or None
      (no act-order, or actorder ``"weight"``, which needs no index at run time).
    - ``weight_shape`` ``[2]`` int: ``(N, K)``; K defaults to ``8 * weight_packed.shape[1]``.

    Args:
        group_size: the config's ``group_size`` (``strategy="group"``); ignored for
            ``"channel"``.
        symmetric: the config's ``symmetric``.
        strategy: ``"group"`` or ``"channel"`` (one scale per output channel); ``"tensor"``,
            ``"block"``, ... are refused.
        dtype: the activation dtype (scales and zeros are stored in it).
        num_bits: must be 4.

    Returns:
        A :class:`QuantizedWeight` (group_size K for ``"channel"``): scale-only where every zero
        point is 0 (code 8), else float zeros ``z = -s * (zp + 8)``.

    Raises:
        ValueError, TypeError: naming the tensor and value.
    """
    _check_bits(num_bits, "num_bits")
    strat = str(strategy).lower()
    if strat not in ("group", "channel"):
        raise ValueError(f"strategy = {strategy!r}: only \"group\" and \"channel\" weights are "
                         "imported")
    dt = _dtypes.canonical_dtype(dtype)
    wp = _words(weight_packed, "weight_packed", "[N, K/8]")
    n, k = wp.shape[0], 8 * wp.shape[1]
    if weight_shape is not None:
        ws = _ints(weight_shape, "weight_shape") if not isinstance(weight_shape, (tuple, list)) \
            else np.asarray(weight_shape, dtype=np.int64)
        ws = ws.reshape(-1)
        if ws.shape != (2,) or int(ws[0]) != n or not (k - 8 < int(ws[1]) <= k):
            raise ValueError(f"weight_shape = {ws.tolist()} disagrees with weight_packed "
                             f"[N, K/8] = {list(wp.shape)}")
        k = int(ws[1])
    _check_layout(n, k, "from_compressed_tensors")
    st = _float_values(weight_scale, "weight_scale", "[N, G]")
    if st.ndim == 1:
        st = st.reshape(-1, 1)
    if st.ndim != 2 or st.shape[0] != n:
        raise ValueError(f"weight_scale has shape {tuple(st.shape)}, expected [N, G] with "
                         f"N = {n}")
    groups = st.shape[1]
    if strat == "channel":
        if groups != 1:
            raise ValueError(f"weight_scale has shape {tuple(st.shape)}: strategy \"channel\" "
                             f"needs [N, 1]")
        g = k
    else:
        if group_size is None or group_size in (-1, 0):
            raise ValueError(f"group_size = {group_size!r}: strategy \"group\" needs a group size")
        g = _group(group_size, k, groups, "from_compressed_tensors")
    zq: Optional[np.ndarray] = None
    if weight_zero_point is not None:
        za = _host_numpy(weight_zero_point, "weight_zero_point")
        if za.ndim == 1:
            za = za.reshape(-1, 1)
        if za.dtype in (np.int32, np.uint32) and za.shape == (n // 8, groups) and \
                not (symmetric and not np.any(za)):
            zq = _nibbles_along_rows(za.view(np.uint32)).T.astype(np.int16)  # [G, N]
        elif za.dtype.kind in "iu" and za.shape == (n, groups):
            zi = za.astype(np.int64)
            if zi.size and (zi.min() < -8 or zi.max() > 7):
                bad = np.argwhere((zi < -8) | (zi > 7))[0]
                raise ValueError(f"weight_zero_point[{bad[0]}, {bad[1]}] = {zi[bad[0], bad[1]]} "
                                 "is outside the 4-bit range -8..7")
            zq = (zi.T + 8).astype(np.int16)
        elif za.dtype.kind in "iu" and symmetric and not np.any(za):
            zq = None  # a symmetric checkpoint's all-zero zero point, in any layout
        else:
            raise ValueError(f"weight_zero_point has shape {tuple(za.shape)} and dtype "
                             f"{za.dtype}, expected int32 [N/8, G] = [{n // 8}, {groups}] "
                             f"(packed) or int8 [N, G] = [{n}, {groups}]")
        if symmetric and zq is not None and not np.all(zq == 8):
            raise ValueError("weight_zero_point is not zero but symmetric = True")
    elif not symmetric:
        raise TypeError("weight_zero_point is required (int32 [N/8, G], packed) for an asymmetric "
                        "(symmetric=False) checkpoint")
    perm = _act_order(weight_g_idx, k, g, groups, "weight_g_idx")
    codes = _nibbles_along_cols(wp)[:, :k]
    return _assemble(np.ascontiguousarray(codes), zq, np.ascontiguousarray(st.T), perm, g, dt,
                     _any_torch(weight_packed, weight_scale, weight_zero_point, weight_g_idx),
                     "weight_scale")


# --- checkpoint folders ------------------------------------------------------------------------

@dataclass
class QuantizedCheckpoint:
    """What :func:`load_quantized` read from a checkpoint.

    Attributes:
        quantized: ``{module name: QuantizedWeight}`` (e.g. ``"model.layers.0.mlp.up_proj"``),
            ready for ``w4a16.nn.replace_linears(model, quantized)``.
        tensors: every other tensor of the checkpoint by its name (embeddings, norms, the quantized
            layers' biases, layers left unquantized), as numpy arrays; bfloat16 tensors come as
            float32 arrays of the same values (numpy has no bfloat16).
        tensor_dtypes: the safetensors dtype of each entry of ``tensors`` (``"BF16"``, ``"F16"``,
            ...), to restore the original types.
        method: ``"gptq"``, ``"awq"`` or ``"compressed-tensors"``.
        config: the quantization configuration read.
        skipped: modules holding packed tensors that the configuration's ignore list keeps
            unconverted (their tensors are in ``tensors``), with the reason.
    """

    quantized: Dict[str, QuantizedWeight]
    tensors: Dict[str, np.ndarray]
    tensor_dtypes: Dict[str, str]
    method: str
    config: Dict[str, Any]
    skipped: Dict[str, str] = field(default_factory=dict)

    def state_dict(self) -> Dict[str, Any]:
        """The non-quantized tensors as torch tensors in their checkpoint dtypes (needs torch),
        for ``model.load_state_dict(..., strict=False)``."""
        import torch
        out = {}
        for name, a in self.tensors.items():
            t = torch.from_numpy(np.ascontiguousarray(a))
            if self.tensor_dtypes.get(name) == "BF16":
                t = t.to(torch.bfloat16)
            out[name] = t
        return out


def _read_json(path: Path) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read JSON ({e})") from e
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


class _TensorReader:
    """The tensors of a checkpoint's safetensors files, read one at a time (so that a large
    checkpoint is never held twice in memory) with the ``safetensors`` library's numpy API.

    Every file's header is opened and validated up front (a corrupt or truncated file fails
    before anything is converted). numpy has no bfloat16: BF16 tensors are read from the bytes at
    the offsets of the validated header and widened exactly to float32.
    """

    def __init__(self, files: List[Path]) -> None:
        try:
            from safetensors import safe_open
        except ImportError as e:  # pragma: no cover - environment
            raise ImportError("w4a16.load_quantized needs the safetensors package "
                              "(pip install safetensors)") from e
        self._stack = contextlib.ExitStack()
        self._handles: Dict[Path, Any] = {}
        self.file_of: Dict[str, Path] = {}
        self.dtypes: Dict[str, str] = {}
        try:
            for file in files:
                try:
                    handle = self._stack.enter_context(safe_open(str(file), framework="np"))
                    keys = list(handle.keys())
                    dts = {key: handle.get_slice(key).get_dtype() for key in keys}
                except Exception as e:  # SafetensorError, OSError, ...
                    raise ValueError(f"{file}: not a readable safetensors file (corrupt or "
                                     f"truncated?): {e}") from e
                self._handles[file] = handle
                for key in keys:
                    if key in self.file_of:
                        raise ValueError(f"{file}: tensor {key} is also in "
                                         f"{self.file_of[key]}")
                    self.file_of[key] = file
                self.dtypes.update(dts)
        except BaseException:
            self._stack.close()
            raise

    def __enter__(self) -> "_TensorReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack.close()

    def __contains__(self, key: str) -> bool:
        return key in self.file_of

    def keys(self) -> List[str]:
        return list(self.file_of)

    def get(self, key: str) -> np.ndarray:
        file = self.file_of[key]
        try:
            if self.dtypes[key] != "BF16":
                return self._handles[file].get_tensor(key)
            return self._bf16(file, key)
        except ValueError:
            raise
        except Exception as e:
            raise ValueError(f"{file}: cannot read tensor {key} (corrupt or truncated "
                             f"file?): {e}") from e

    @staticmethod
    def _bf16(file: Path, key: str) -> np.ndarray:
        with open(file, "rb") as fh:
            (hlen,) = struct.unpack("<Q", fh.read(8))
            info = json.loads(fh.read(hlen))[key]
            begin, end = info["data_offsets"]
            fh.seek(8 + hlen + begin)
            raw = fh.read(end - begin)
        if len(raw) != end - begin:
            raise ValueError(f"{file}: tensor {key} is truncated")
        bits = np.frombuffer(raw, dtype="<u2").reshape(info["shape"])
        return _dtypes.from_bits(bits, "bfloat16")


def _checkpoint_files(folder: Path) -> List[Path]:
    index = folder / "model.safetensors.index.json"
    if index.exists():
        data = _read_json(index)
        wmap = data.get("weight_map")
        if not isinstance(wmap, dict) or not wmap:
            raise ValueError(f"{index}: no weight_map")
        files = sorted(set(wmap.values()))
        for name in files:
            if not (folder / name).is_file():
                raise ValueError(f"{index}: shard {name} is missing from {folder}")
        return [folder / name for name in files]
    single = folder / "model.safetensors"
    if single.is_file():
        return [single]
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ValueError(f"{folder}: no model.safetensors, model.safetensors.index.json or "
                         "*.safetensors file")
    return files


def _quant_config(folder: Path) -> Dict[str, Any]:
    """The quantization config: config.json's ``quantization_config`` (or ``compression_config``,
    the name of early compressed-tensors checkpoints), else quantize_config.json (AutoGPTQ) or
    quant_config.json (AutoAWQ), with ``quant_method`` filled in."""
    cfg_file = folder / "config.json"
    if cfg_file.is_file():
        cfg = _read_json(cfg_file)
        qc = cfg.get("quantization_config")
        if isinstance(qc, dict):
            return dict(qc)
        qc = cfg.get("compression_config")
        if isinstance(qc, dict):
            qc = dict(qc)
            qc.setdefault("quant_method", "compressed-tensors")
            return qc
    for name, method in (("quantize_config.json", "gptq"), ("quant_config.json", "awq")):
        f = folder / name
        if f.is_file():
            qc = dict(_read_json(f))
            qc.setdefault("quant_method", method)
            return qc
    raise ValueError(f"{folder}: no quantization config (config.json without "
                     "quantization_config, and no quantize_config.json)")


def _cfg(qc: Dict[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if key in qc and qc[key] is not None:
            return qc[key]
    return default


def _dtype_for(explicit: Any, scale_dtype: str, config_dtype: Any, fallback: str) -> str:
    if explicit is not None:
        return _dtypes.canonical_dtype(explicit)
    if scale_dtype == "F16":
        return "float16"
    if scale_dtype == "BF16":
        return "bfloat16"
    try:
        return _dtypes.canonical_dtype(config_dtype)
    except TypeError:
        return fallback


def _modules(tensors: Iterable[str], suffix: str) -> List[str]:
    return sorted(name[: -len(suffix)] for name in tensors if name.endswith(suffix))


def _gptq_dynamic(qc: Dict[str, Any], module: str) -> Optional[Dict[str, Any]]:
    """GPTQModel's ``dynamic`` rules for a module: None where a ``-:`` rule skips it, else the
    overrides of the first matching positive rule (``{}`` where none matches)."""
    dynamic = qc.get("dynamic") or {}
    for pattern, override in dynamic.items():
        if pattern.startswith("-:"):
            if re.match(pattern[2:], module):
                return None
    for pattern, override in dynamic.items():
        if pattern.startswith("-:"):
            continue
        pat = pattern[2:] if pattern.startswith("+:") else pattern
        if re.match(pat, module):
            return dict(override or {})
    return {}


def _ct_matches(target: str, module: str) -> bool:
    if target.startswith("re:"):
        return re.match(target[3:], module) is not None
    return target == module


def _ct_scheme(qc: Dict[str, Any], module: str) -> Tuple[Optional[Dict[str, Any]], str]:
    """compressed-tensors: the weights args of the config group targeting a module (by name or
    ``re:`` pattern first, else by a class-name target such as ``"Linear"``) and its format."""
    groups = qc.get("config_groups") or {}
    by_name, by_class = None, None
    for gname, grp in groups.items():
        targets = grp.get("targets") or []
        for t in targets:
            if _ct_matches(t, module):
                by_name = by_name or grp
            elif t[:1].isupper() and "." not in t:  # a class name such as "Linear"
                by_class = by_class or grp
    grp = by_name or by_class
    if grp is None:
        return None, ""
    fmt = grp.get("format") or qc.get("format") or ""
    if grp.get("input_activations") is not None:
        raise ValueError(f"{module}: its compressed-tensors scheme quantizes activations "
                         "(W4A16 imports weight-only schemes)")
    return grp.get("weights"), fmt


def _ignored(patterns: Iterable[str], module: str, substring: bool) -> bool:
    for p in patterns or ():
        if p.startswith("re:"):
            if re.match(p[3:], module):
                return True
        elif p == module or (substring and p in module) or module.endswith("." + p):
            return True
    return False


def load_quantized(path: Union[str, os.PathLike], *, dtype: Any = None) -> QuantizedCheckpoint:
    """Read a 4-bit GPTQ, AWQ (GEMM) or compressed-tensors (pack-quantized) checkpoint folder.

    The configuration comes from ``config.json``'s ``quantization_config``, else
    ``quantize_config.json`` (AutoGPTQ; or ``quant_config.json``, AutoAWQ); the tensors from
    ``model.safetensors``, the shards of ``model.safetensors.index.json``, or else every
    ``*.safetensors`` file of the folder, read with the ``safetensors`` library's numpy API (no
    torch needed). Each module holding a format's packed tensors (``<name>.qweight`` for GPTQ /
    AWQ, ``<name>.weight_packed`` for compressed-tensors) is imported with :func:`from_gptq`,
    :func:`from_awq` or :func:`from_compressed_tensors`; everything else is returned as it is.
    Ignore lists are honoured: compressed-tensors' ``ignore``, AWQ's ``modules_to_not_convert``,
    GPTQModel's ``dynamic`` ``-:`` rules (its positive rules override bits / group_size / sym /
    desc_act per module).

    Args:
        path: the checkpoint folder (or a file inside it).
        dtype: the activation dtype of every layer; None takes each layer's scale dtype (float16
            or bfloat16; float32 scales follow the config's ``torch_dtype``), so that the scales
            are carried over exactly. A model that runs in another dtype (a bfloat16 model
            with float16 GPTQ scales) needs its dtype here: the op takes activations of the
            scales' dtype only, and the scales are then rounded to it.

    Returns:
        A :class:`QuantizedCheckpoint`: ``.quantized`` ``{module name: QuantizedWeight}``,
        ``.tensors`` the other tensors, ``.skipped`` the ignored modules.

    Raises:
        ValueError: a missing, truncated or corrupt file (named), a format or setting the library
            does not import (named with the module), a layer whose tensors disagree. Nothing is
            returned half-loaded.
    """
    folder = Path(path)
    if folder.is_file():
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{path}: no such checkpoint folder")
    qc = _quant_config(folder)
    method = str(qc.get("quant_method", "")).lower().replace("_", "-")
    if method not in ("gptq", "awq", "compressed-tensors"):
        raise ValueError(f"{folder}: quant_method = {qc.get('quant_method')!r} is not imported "
                         "(gptq, awq or compressed-tensors)")
    config_dtype = None
    if (folder / "config.json").is_file():
        config_dtype = _read_json(folder / "config.json").get("torch_dtype")

    with _TensorReader(_checkpoint_files(folder)) as reader:
        return _convert(reader, qc, method, dtype, config_dtype)


def _convert(tensors: _TensorReader, qc: Dict[str, Any], method: str, dtype: Any,
             config_dtype: Any) -> QuantizedCheckpoint:
    """load_quantized's conversion of every module of an opened checkpoint."""
    tdtypes = tensors.dtypes
    quantized: Dict[str, QuantizedWeight] = {}
    skipped: Dict[str, str] = {}
    consumed: List[str] = []

    def take(module: str, leaf: str, required: bool = True) -> Optional[np.ndarray]:
        key = f"{module}.{leaf}"
        if key not in tensors:
            if required:
                raise ValueError(f"{module}: the checkpoint has no tensor {key}")
            return None
        consumed.append(key)
        return tensors.get(key)

    def fail(module: str, e: Exception) -> ValueError:
        return ValueError(f"{module}: {e}")

    if method in ("gptq", "awq"):
        for module in _modules(tensors.keys(), ".qweight"):
            overrides: Optional[Dict[str, Any]] = {}
            if method == "gptq":
                overrides = _gptq_dynamic(qc, module)
                if overrides is None or _ignored(qc.get("modules_to_not_convert") or (), module,
                                                 False):
                    skipped[module] = "excluded by the quantization config"
                    continue
            elif _ignored(qc.get("modules_to_not_convert") or (), module, True):
                skipped[module] = "listed in modules_to_not_convert"
                continue
            cfg = {**qc, **(overrides or {})}
            bits = int(_cfg(cfg, "bits", "w_bit", default=4))
            gsize = _cfg(cfg, "group_size", "q_group_size", default=-1)
            try:
                qweight = take(module, "qweight")
                scales = take(module, "scales")
                dt = _dtype_for(dtype, tdtypes[f"{module}.scales"], config_dtype, "float16")
                if method == "gptq":
                    fmt = _cfg(cfg, "checkpoint_format", default="gptq")
                    if cfg.get("is_marlin_format"):
                        fmt = "marlin"
                    quantized[module] = from_gptq(
                        qweight, take(module, "qzeros", required=False), scales,
                        take(module, "g_idx", required=False), group_size=gsize,
                        sym=bool(_cfg(cfg, "sym", default=True)), checkpoint_format=fmt,
                        dtype=dt, bits=bits)
                else:
                    if not _cfg(cfg, "zero_point", default=True):
                        raise ValueError("zero_point = False AWQ checkpoints are not imported")
                    quantized[module] = from_awq(
                        qweight, take(module, "qzeros"), scales, group_size=gsize, dtype=dt,
                        version=_cfg(cfg, "version", default="gemm"), bits=bits)
            except (ValueError, TypeError) as e:
                raise fail(module, e) from e
    else:
        fmt_top = str(qc.get("format", ""))
        ignore = qc.get("ignore") or []
        for module in _modules(tensors.keys(), ".weight_packed"):
            if _ignored(ignore, module, False):
                skipped[module] = "listed in the config's ignore"
                continue
            try:
                args, fmt = _ct_scheme(qc, module)
                if args is None:
                    raise ValueError("no config group targets it")
                fmt = fmt or fmt_top
                if fmt != "pack-quantized":
                    raise ValueError(f"format = {fmt!r}: only pack-quantized is imported")
                if str(args.get("type", "int")) != "int":
                    raise ValueError(f"weights type = {args.get('type')!r}: only int is imported")
                strategy = str(args.get("strategy", "group"))
                actorder = args.get("actorder")
                if actorder not in (None, False, "group", "weight", "static", "dynamic"):
                    raise ValueError(f"actorder = {actorder!r} is not understood")
                packed = take(module, "weight_packed")
                scale = take(module, "weight_scale")
                dt = _dtype_for(dtype, tdtypes[f"{module}.weight_scale"], config_dtype,
                                "bfloat16")
                quantized[module] = from_compressed_tensors(
                    packed, scale, take(module, "weight_zero_point", required=False),
                    take(module, "weight_g_idx", required=False),
                    weight_shape=take(module, "weight_shape", required=False),
                    group_size=args.get("group_size"),
                    symmetric=bool(args.get("symmetric", True)), strategy=strategy,
                    dtype=dt, num_bits=int(args.get("num_bits", 4)))
            except (ValueError, TypeError) as e:
                raise fail(module, e) from e

    used = set(consumed)
    rest = {name: tensors.get(name) for name in tensors.keys() if name not in used}
    return QuantizedCheckpoint(quantized=quantized, tensors=rest,
                               tensor_dtypes={name: tdtypes[name] for name in rest},
                               method=method, config=qc, skipped=skipped)
