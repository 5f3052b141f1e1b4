"""Activation dtypes and quantization modes: names, the C enums, and exact host conversions.

The library's activations, scales, zeros, bias and output share one 16-bit float type, fp16 or
bf16 (``w4a16_dtype``). Host-side code (quantize, checkpoint import) runs on numpy arrays as well as
torch tensors; numpy has no bfloat16, so on the numpy side such values travel as float32 arrays whose
every element is exactly representable in the dtype (see :func:`round_to`), or as their 16-bit
patterns (:func:`to_bits`, :func:`from_bits`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["canonical_dtype", "c_dtype", "round_to", "to_bits", "from_bits", "MODES",
           "PER_COLUMN_SCALE_ONLY", "FINEGRAINED_SCALE_ONLY", "FINEGRAINED_SCALE_AND_ZEROS"]

#: ``w4a16_quant_mode`` values (include/w4a16/w4a16.h).
PER_COLUMN_SCALE_ONLY = 0
FINEGRAINED_SCALE_ONLY = 1
FINEGRAINED_SCALE_AND_ZEROS = 2
MODES = {PER_COLUMN_SCALE_ONLY: "PER_COLUMN_SCALE_ONLY",
         FINEGRAINED_SCALE_ONLY: "FINEGRAINED_SCALE_ONLY",
         FINEGRAINED_SCALE_AND_ZEROS: "FINEGRAINED_SCALE_AND_ZEROS"}

_ALIASES = {
    "float16": "float16", "fp16": "float16", "f16": "float16", "half": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
}
#: ``w4a16_dtype`` values.
_C_DTYPE = {"float16": 0, "bfloat16": 1}


def canonical_dtype(dtype: Any) -> str:
    """Normalize an activation dtype to ``"float16"`` or ``"bfloat16"``.

    Accepts those strings and their short forms (``"fp16"``, ``"half"``, ``"bf16"``, ...),
    ``torch.float16`` / ``torch.bfloat16``, and numpy's ``float16`` (and ``bfloat16`` of
    ml_dtypes) as a dtype or type.

    Raises:
        TypeError: anything else, named in the message.
    """
    if isinstance(dtype, str):
        key = dtype.lower().removeprefix("torch.")
    else:
        key = str(dtype).removeprefix("torch.")
        try:
            key = np.dtype(dtype).name if not key.startswith(("float16", "bfloat16")) else key
        except TypeError:
            pass
    if key in _ALIASES:
        return _ALIASES[key]
    raise TypeError(f"dtype {dtype!r} is not an activation dtype of w4a16 "
                    "(float16 or bfloat16, as a string or a torch / numpy dtype)")


def c_dtype(dtype: Any) -> int:
    """The ``w4a16_dtype`` value of an activation dtype (see :func:`canonical_dtype`)."""
    return _C_DTYPE[canonical_dtype(dtype)]


def to_bits(x: np.ndarray, dtype: Any) -> np.ndarray:
    """float32 (or float64) values -> uint16 bit patterns of dtype, rounded to nearest even.

    bf16: the upper half of the float32 after adding 0x7fff plus the kept part's lowest bit (NaN
    kept quiet), as ``w4a16_float_to_bf16``; fp16: numpy's IEEE conversion, as
    ``w4a16_float_to_half``.
    """
    x32 = np.ascontiguousarray(x, dtype=np.float32)
    if canonical_dtype(dtype) == "float16":
        return x32.astype(np.float16).view(np.uint16)
    u = x32.view(np.uint32).astype(np.uint64)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    out = np.where(nan, (u >> 16) | 0x40, rounded).astype(np.uint16)
    return out


def from_bits(bits: np.ndarray, dtype: Any) -> np.ndarray:
    """uint16 bit patterns of dtype -> float32 values (exact)."""
    b = np.ascontiguousarray(bits, dtype=np.uint16)
    if canonical_dtype(dtype) == "float16":
        return b.view(np.float16).astype(np.float32)
    return (b.astype(np.uint32) << 16).view(np.float32)


def round_to(x: np.ndarray, dtype: Any) -> np.ndarray:
    """float32 values rounded to the nearest value of dtype (ties to even), as float32."""
    return from_bits(to_bits(x, dtype), dtype)
