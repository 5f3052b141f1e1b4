"""Reference packers and decoders of the 4-bit checkpoint formats (test helper, numpy only).

Written from each format's published packing and dequantization logic, independently of
``w4a16.checkpoints`` (loops over words and nibbles where the importers vectorise), to make
checkpoints for the tests and to check the importers against:

- GPTQ: AutoGPTQ's ``QuantLinear.pack`` (``qweight`` ``[K/8, N]`` packed along K, ``qzeros``
  ``[G, N/8]`` packed along N, v1 storing ``zero - 1``) and its forward (unpack, ``zeros + 1``,
  ``scales[g_idx] * (w - zeros[g_idx])``); GPTQModel's ``gptq_v2`` stores the zero itself.
- AWQ: AutoAWQ's ``WQLinear_GEMM.from_linear`` (``qweight`` ``[K, N/8]`` and ``qzeros``
  ``[G, N/8]``, the 8 columns of a word in the nibble order of ``[0, 2, 4, 6, 1, 3, 5, 7]``) and
  its ``dequantize_gemm`` (unpack, undo the order with ``[0, 4, 1, 5, 2, 6, 3, 7]``).
- compressed-tensors: ``pack_to_int32`` / ``unpack_from_int32`` (signed values + 8, eight to an
  int32 along the packed dim, the first lowest) and its ``dequantize`` (``(x - zp) * scale``).
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

BITS = 4
PACK = 32 // BITS
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]           # nibble i of a word holds column AWQ_ORDER[i]
AWQ_REVERSE_ORDER = [0, 4, 1, 5, 2, 6, 3, 7]   # column j comes from nibble AWQ_REVERSE_ORDER[j]


def _as_int32(words_u32: np.ndarray) -> np.ndarray:
    return words_u32.astype(np.uint32).view(np.int32)


# --- GPTQ ---------------------------------------------------------------------------------------

def gptq_pack(intweight: np.ndarray, zeros: np.ndarray, v2: bool = False
              ) -> Tuple[np.ndarray, np.ndarray]:
    """AutoGPTQ's pack of codes ``[N, K]`` (0..15) and integer zeros ``[G, N]``.

    Returns ``(qweight int32 [K/8, N], qzeros int32 [G, N/8])``. v1 stores ``zero - 1`` in each
    nibble (a zero of 0 becomes nibble 15; AutoGPTQ's own pack lets that -1 spill into the higher
    nibbles, which this one masks); v2 stores the zero.
    """
    iw = np.asarray(intweight, dtype=np.int64).T.copy()  # [K, N]
    k, n = iw.shape
    qweight = np.zeros((k // 32 * BITS, n), dtype=np.uint64)
    i, row = 0, 0
    while row < qweight.shape[0]:
        for j in range(i, i + PACK):
            qweight[row] |= (iw[j].astype(np.uint64) & 0xF) << np.uint64(BITS * (j - i))
        i += PACK
        row += 1
    z = np.asarray(zeros, dtype=np.int64)
    if not v2:
        z = z - 1
    z = z & 0xF
    qzeros = np.zeros((z.shape[0], n // 32 * BITS), dtype=np.uint64)
    i, col = 0, 0
    while col < qzeros.shape[1]:
        for j in range(i, i + PACK):
            qzeros[:, col] |= z[:, j].astype(np.uint64) << np.uint64(BITS * (j - i))
        i += PACK
        col += 1
    return _as_int32(qweight), _as_int32(qzeros)


def gptq_dequant(qweight: np.ndarray, qzeros: np.ndarray, scales: np.ndarray,
                 g_idx: np.ndarray, v2: bool = False) -> np.ndarray:
    """AutoGPTQ's forward dequantization, float64 ``[N, K]`` (v1: the unmasked ``zeros + 1``)."""
    qw = qweight.view(np.uint32).astype(np.int64)
    qz = qzeros.view(np.uint32).astype(np.int64)
    shifts = np.arange(0, 32, BITS)
    w = (qw[:, None, :] >> shifts[None, :, None]) & 0xF       # [K/8, 8, N]
    w = w.reshape(-1, qw.shape[1])                            # [K, N]
    z = (qz[:, :, None] >> shifts[None, None, :]) & 0xF       # [G, N/8, 8]
    z = z.reshape(qz.shape[0], -1)                            # [G, N]
    if not v2:
        z = z + 1
    s = np.asarray(scales, dtype=np.float64)
    gi = np.asarray(g_idx, dtype=np.int64)
    return (s[gi] * (w - z[gi])).T


# --- AWQ ----------------------------------------------------------------------------------------

def awq_pack(intweight: np.ndarray, zeros: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """AutoAWQ's GEMM pack of codes ``[N, K]`` and zeros ``[G, N]``.

    Returns ``(qweight int32 [K, N/8], qzeros int32 [G, N/8])``.
    """
    iw = np.asarray(intweight, dtype=np.int64).T.copy()  # [K, N]
    k, n = iw.shape
    qweight = np.zeros((k, n // 32 * BITS), dtype=np.uint64)
    for col in range(n // PACK):
        for i in range(PACK):
            qweight[:, col] |= iw[:, col * PACK + AWQ_ORDER[i]].astype(np.uint64) << \
                np.uint64(i * BITS)
    z = np.asarray(zeros, dtype=np.int64)
    qzeros = np.zeros((z.shape[0], n // 32 * BITS), dtype=np.uint64)
    for col in range(n // PACK):
        for i in range(PACK):
            qzeros[:, col] |= z[:, col * PACK + AWQ_ORDER[i]].astype(np.uint64) << \
                np.uint64(i * BITS)
    return _as_int32(qweight), _as_int32(qzeros)


def awq_dequant(qweight: np.ndarray, qzeros: np.ndarray, scales: np.ndarray,
                group_size: int) -> np.ndarray:
    """AutoAWQ's ``dequantize_gemm``, float64 ``[N, K]``."""
    shifts = np.arange(0, 32, BITS)

    def unpack(words: np.ndarray) -> np.ndarray:
        x = words.view(np.uint32).astype(np.int64)
        u = ((x[:, :, None] >> shifts[None, None, :]) & 0xF).reshape(x.shape[0], -1)
        order = np.arange(u.shape[1]).reshape(-1, 8)[:, AWQ_REVERSE_ORDER].reshape(-1)
        return u[:, order]

    w = unpack(qweight)                                       # [K, N]
    z = np.repeat(unpack(qzeros), group_size, axis=0)         # [K, N]
    s = np.repeat(np.asarray(scales, dtype=np.float64), group_size, axis=0)
    return ((w - z) * s).T


# --- compressed-tensors ------------------------------------------------------------------------

def ct_pack_to_int32(value: np.ndarray, packed_dim: int = 1) -> np.ndarray:
    """compressed-tensors' ``pack_to_int32`` of signed 4-bit values (-8..7), int32 out."""
    v = np.asarray(value, dtype=np.int64)
    if v.min() < -8 or v.max() > 7:
        raise ValueError("value outside -8..7")
    u = (v + (1 << (BITS - 1))).astype(np.uint64)
    if packed_dim == 0:
        u = u.T
    rows, cols = u.shape
    padded = -(-cols // PACK) * PACK
    u = np.pad(u, ((0, 0), (0, padded - cols)))
    packed = np.zeros((rows, padded // PACK), dtype=np.uint64)
    for i in range(PACK):
        packed |= u[:, i::PACK] << np.uint64(BITS * i)
    if packed_dim == 0:
        packed = packed.T
    return _as_int32(np.ascontiguousarray(packed))


def ct_unpack_from_int32(value: np.ndarray, shape: Tuple[int, int],
                         packed_dim: int = 1) -> np.ndarray:
    """compressed-tensors' ``unpack_from_int32``: signed int64 values of the original shape."""
    x = value.view(np.uint32).astype(np.int64)
    if packed_dim == 1:
        out = np.zeros((x.shape[0], x.shape[1] * PACK), dtype=np.int64)
        for i in range(PACK):
            out[:, i::PACK] = (x >> (BITS * i)) & 0xF
        out = out[:, :shape[1]]
    else:
        out = np.zeros((x.shape[0] * PACK, x.shape[1]), dtype=np.int64)
        for i in range(PACK):
            out[i::PACK, :] = (x >> (BITS * i)) & 0xF
        out = out[:shape[0], :]
    return out - 8


def ct_dequant(weight_packed: np.ndarray, weight_scale: np.ndarray,
               weight_zero_point: Optional[np.ndarray], g_idx: np.ndarray,
               shape: Tuple[int, int]) -> np.ndarray:
    """compressed-tensors' dequantization ``(x - zp) * scale``, float64 ``[N, K]``.

    weight_zero_point: packed int32 ``[N/8, G]`` or None (symmetric).
    """
    n, k = shape
    x = ct_unpack_from_int32(weight_packed, shape)
    s = np.asarray(weight_scale, dtype=np.float64)
    groups = s.shape[1]
    if weight_zero_point is None:
        zp = np.zeros((n, groups), dtype=np.int64)
    else:
        zp = ct_unpack_from_int32(weight_zero_point, (n, groups), packed_dim=0)
    gi = np.asarray(g_idx, dtype=np.int64)
    return (x - zp[:, gi]) * s[:, gi]


# --- making checkpoints ------------------------------------------------------------------------

def act_order_g_idx(k: int, group_size: int, rng: np.random.Generator) -> np.ndarray:
    """A desc_act ``g_idx``: columns quantized in a random order, group = position // group_size."""
    order = rng.permutation(k)
    g_idx = np.empty(k, dtype=np.int32)
    g_idx[order] = np.arange(k) // group_size
    return g_idx


def random_scales(shape: Tuple[int, ...], rng: np.random.Generator, dtype: str) -> np.ndarray:
    """Positive scales exactly representable in dtype (float16 as np.float16, bfloat16 as
    float32)."""
    s = rng.uniform(0.002, 0.05, size=shape).astype(np.float32)
    if dtype == "float16":
        return s.astype(np.float16)
    bits = (s.view(np.uint32) + 0x8000) >> 16
    return (bits << 16).astype(np.uint32).view(np.float32)


# --- round-to-nearest checkpoints from float weights ---------------------------------------------
# Each format's range convention without calibration data (no Hessian, no activation scaling):
# enough to turn real float weights into checkpoints of every format for end-to-end tests.

def _f16(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float16).astype(np.float64)


def _group_ranges(w: np.ndarray, group_size: int, order: Optional[np.ndarray]
                  ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``g_idx`` [K] (columns fill the groups in ``order``, default 0..K-1) and each group's
    minimum and maximum ``[N, G]``, widened to include 0 (as GPTQ and compressed-tensors do)."""
    n, k = w.shape
    order = np.arange(k) if order is None else np.asarray(order)
    g_idx = np.empty(k, dtype=np.int32)
    g_idx[order] = np.arange(k) // group_size
    lo = np.empty((n, k // group_size))
    hi = np.empty_like(lo)
    for gi in range(lo.shape[1]):
        cols = w[:, g_idx == gi]
        lo[:, gi] = np.minimum(cols.min(axis=1), 0)
        hi[:, gi] = np.maximum(cols.max(axis=1), 0)
    return g_idx, lo, hi


def gptq_checkpoint(w: np.ndarray, group_size: int, sym: bool = True,
                    order: Optional[np.ndarray] = None, v2: bool = False) -> dict:
    """GPTQ tensors of float weights ``[N, K]`` by round-to-nearest.

    GPTQ's quantizer: asymmetric ``scale = (max - min) / 15``, ``zero = round(-min / scale)``;
    symmetric ranges ``[-max|w|, max|w|]`` with ``zero = 8``. ``order`` (act-order, e.g.
    descending Hessian diagonal) is the order in which columns fill the groups; ``g_idx`` records
    it. Scales float16. Returns ``qweight``, ``qzeros``, ``scales``, ``g_idx``.
    """
    w = np.asarray(w, dtype=np.float64)
    g_idx, lo, hi = _group_ranges(w, group_size, order)
    if sym:
        hi = np.maximum(-lo, hi)
        lo = -hi
    s = _f16(np.where(hi > lo, (hi - lo) / 15, 1.0))          # [N, G]
    zeros = np.full(s.shape, 8) if sym else np.clip(np.rint(-lo / s), 0, 15).astype(np.int64)
    codes = np.clip(np.rint(w / s[:, g_idx]) + zeros[:, g_idx], 0, 15).astype(np.int64)
    scales, zeros = s.T, zeros.T
    qweight, qzeros = gptq_pack(codes, zeros, v2=v2)
    return {"qweight": qweight, "qzeros": qzeros, "scales": scales.astype(np.float16),
            "g_idx": g_idx}


def awq_checkpoint(w: np.ndarray, group_size: int) -> dict:
    """AWQ GEMM tensors of float weights ``[N, K]`` by round-to-nearest with zero points
    (AutoAWQ's ``pseudo_quantize_tensor`` range: ``scale = (max - min) / 15``,
    ``zero = clamp(-round(min / scale), 0, 15)``), scales float16."""
    w = np.asarray(w, dtype=np.float64)
    n, k = w.shape
    wg = w.reshape(n, k // group_size, group_size)
    lo, hi = wg.min(axis=2), wg.max(axis=2)
    s = _f16(np.maximum(hi - lo, 1e-5) / 15)                  # [N, G]
    z = np.clip(-np.rint(lo / s), 0, 15)
    codes = np.clip(np.rint(wg / s[:, :, None]) + z[:, :, None], 0, 15).reshape(n, k)
    qweight, qzeros = awq_pack(codes.astype(np.int64), z.T.astype(np.int64))
    return {"qweight": qweight, "qzeros": qzeros, "scales": s.T.astype(np.float16)}


def ct_checkpoint(w: np.ndarray, group_size: Optional[int], symmetric: bool = True,
                  order: Optional[np.ndarray] = None) -> dict:
    """compressed-tensors pack-quantized tensors of float weights ``[N, K]`` by round-to-nearest.

    Its ``calculate_qparams``: symmetric ``scale = max|w| / 7.5``, ``zp = 0``; asymmetric
    ``scale = (max - min) / 15``, ``zp = clamp(round(-8 - min / scale), -8, 7)``; group_size None
    is the ``"channel"`` strategy. ``order`` as in :func:`gptq_checkpoint` (actorder
    ``"group"``: ``weight_g_idx`` saved). Scales float32 values exact in bfloat16.
    """
    w = np.asarray(w, dtype=np.float64)
    n, k = w.shape
    g_idx, lo, hi = _group_ranges(w, k if group_size is None else group_size, order)
    if symmetric:
        scale = bf16_round(np.maximum(np.maximum(-lo, hi), 1e-8) / 7.5)
        zp = np.zeros(scale.shape, dtype=np.int64)
    else:
        scale = bf16_round(np.maximum(hi - lo, 1e-8) / 15)
        zp = np.clip(np.rint(-8 - lo / scale), -8, 7).astype(np.int64)
    values = np.clip(np.rint(w / scale[:, g_idx]) + zp[:, g_idx], -8, 7).astype(np.int64)
    out = {"weight_packed": ct_pack_to_int32(values), "weight_scale": scale.astype(np.float32),
           "weight_shape": np.array([n, k], dtype=np.int64)}
    if not symmetric:
        out["weight_zero_point"] = ct_pack_to_int32(zp, packed_dim=0)
    if group_size is not None and order is not None:
        out["weight_g_idx"] = g_idx
    return out


def bf16_round(s: np.ndarray) -> np.ndarray:
    """float values rounded to bfloat16 (nearest even), as float64."""
    bits = np.asarray(s, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)
