"""ctypes binding of ``libw4a16.so``: prototypes, statuses and the exception type.

The C library is the single source of behaviour; this module only declares its functions
(include/w4a16/w4a16.h, include/w4a16/select.h) and turns a status other than
``W4A16_STATUS_OK`` into :class:`W4A16Error`.

The library is looked up, in order, at ``$W4A16_LIBRARY`` (a path to the shared object, used by
the tests of a build tree) and next to this file (``libw4a16.so``, where ``pip install`` puts it).
It is loaded on first use, so that ``import w4a16`` works without a built library and says what is
missing only when something needs it.

Thread-safety: the C library is thread-safe and keeps its error messages per thread; loading is
guarded by a lock.
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading
from pathlib import Path
from typing import Optional

__all__ = ["W4A16Error", "lib", "check", "GEMM_ARGS", "GROUPED_ARGS", "PROBLEM", "STATUS_NAMES"]

#: Status values of include/w4a16/w4a16.h's W4A16_STATUS_TABLE (explicit and stable).
STATUS_NAMES = {
    0: "OK", 1: "INVALID_VALUE", 2: "NULL_POINTER", 3: "INVALID_SHAPE", 4: "MISALIGNED",
    5: "UNSUPPORTED_GROUP_SIZE", 6: "WORKSPACE_TOO_SMALL", 7: "DTYPE_MISMATCH",
    8: "MODE_MISMATCH", 9: "UNKNOWN_KERNEL", 10: "NOT_SUPPORTED", 11: "ARCH_MISMATCH",
    12: "NO_KERNEL", 13: "NO_DEVICE", 14: "CUDA_ERROR", 15: "OUT_OF_MEMORY", 16: "IO_ERROR",
    17: "INTERNAL_ERROR",
}


class W4A16Error(RuntimeError):
    """A call into the C library returned a status other than OK.

    Attributes:
        status: the status value (``int``), as in ``w4a16_status``.
        name: its name without prefix, e.g. ``"NO_KERNEL"``.
        message: ``w4a16_last_error_message()`` of the failing call (names the bad value).
    """

    def __init__(self, status: int, message: str) -> None:
        self.status = int(status)
        self.name = STATUS_NAMES.get(self.status, "UNKNOWN")
        self.message = message
        super().__init__(f"W4A16_STATUS_{self.name}: {message}")


# --- struct layouts (C ABI of x86-64 / aarch64 Linux) ---------------------------------------

class PROBLEM(ctypes.Structure):
    """``w4a16_problem``: m, n, k, lda, ldd (int64), group_size, mode, dtype, has_bias and
    act_order (int; act_order nonzero: A's columns are taken in the order of the args' a_perm)."""

    _fields_ = [("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
                ("lda", ctypes.c_int64), ("ldd", ctypes.c_int64), ("group_size", ctypes.c_int),
                ("mode", ctypes.c_int), ("dtype", ctypes.c_int), ("has_bias", ctypes.c_int),
                ("act_order", ctypes.c_int)]


class GEMM_ARGS(ctypes.Structure):
    """``w4a16_gemm_args``: the problem, six device pointers, alpha, the act-order
    permutation a_perm (device int32 [K], or NULL) and the launch flags (:data:`GEMM_NO_PDL`)."""

    _fields_ = [("problem", PROBLEM), ("a", ctypes.c_void_p), ("w", ctypes.c_void_p),
                ("scales", ctypes.c_void_p), ("zeros", ctypes.c_void_p),
                ("bias", ctypes.c_void_p), ("d", ctypes.c_void_p), ("alpha", ctypes.c_float),
                ("a_perm", ctypes.c_void_p), ("flags", ctypes.c_uint)]


#: ``W4A16_GEMM_NO_PDL``: the call's first kernel in plain stream order (no programmatic
#: dependent launch), for calls that follow a kernel not of this library (include/w4a16/w4a16.h).
GEMM_NO_PDL = 1


class KERNEL_DESC(ctypes.Structure):
    """``w4a16_kernel_desc``: one registered kernel instantiation."""

    _fields_ = [("name", ctypes.c_char_p), ("family", ctypes.c_int), ("sm_min", ctypes.c_int),
                ("sm_max", ctypes.c_int), ("arch", ctypes.c_char_p), ("dtype", ctypes.c_int),
                ("mode", ctypes.c_int), ("tile_n", ctypes.c_int), ("tile_m", ctypes.c_int),
                ("tile_k", ctypes.c_int), ("cluster_n", ctypes.c_int),
                ("cluster_m", ctypes.c_int), ("cluster_k", ctypes.c_int),
                ("schedule", ctypes.c_int), ("stages", ctypes.c_int), ("split_k", ctypes.c_int),
                ("threads", ctypes.c_int), ("smem_bytes", ctypes.c_int),
                ("min_group", ctypes.c_int), ("impl", ctypes.c_void_p),
                ("n_multiple", ctypes.c_int), ("k_multiple", ctypes.c_int),
                ("grouped", ctypes.c_int)]


class GROUPED_ARGS(ctypes.Structure):
    """``w4a16_grouped_gemm_args``: one grouped (mixture-of-experts) GEMM."""

    _fields_ = [("struct_size", ctypes.c_size_t), ("experts", ctypes.c_int64),
                ("rows", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
                ("lda", ctypes.c_int64), ("ldd", ctypes.c_int64), ("a_rows", ctypes.c_int64),
                ("group_size", ctypes.c_int), ("mode", ctypes.c_int), ("dtype", ctypes.c_int),
                ("offsets_type", ctypes.c_int), ("a", ctypes.c_void_p), ("w", ctypes.c_void_p),
                ("scales", ctypes.c_void_p), ("zeros", ctypes.c_void_p),
                ("offsets", ctypes.c_void_p), ("row_index", ctypes.c_void_p),
                ("row_scale", ctypes.c_void_p), ("d", ctypes.c_void_p), ("alpha", ctypes.c_float),
                ("status", ctypes.c_void_p), ("flags", ctypes.c_uint)]


class CACHE_ENV(ctypes.Structure):
    """``w4a16_cache_env``: the device and library a config cache file belongs to."""

    _fields_ = [("device_name", ctypes.c_char * 256), ("sm_count", ctypes.c_int),
                ("cc", ctypes.c_int), ("cuda_runtime", ctypes.c_int),
                ("registry_fingerprint", ctypes.c_uint64)]


class QUANTIZE_OPTIONS(ctypes.Structure):
    """``w4a16_quantize_options``: the range search of ``w4a16_quantize_ex``."""

    _fields_ = [("struct_size", ctypes.c_size_t), ("clip_search", ctypes.c_int),
                ("grid", ctypes.c_int), ("max_shrink", ctypes.c_float)]


class PROFILE_OPTIONS(ctypes.Structure):
    """``w4a16_profile_options`` (zero = the defaults)."""

    _fields_ = [("warmup", ctypes.c_int), ("iterations", ctypes.c_int),
                ("rotate_min_bytes", ctypes.c_int), ("seed", ctypes.c_uint)]


class PROFILE_RESULT(ctypes.Structure):
    """``w4a16_profile_result``: one row of the profiler's table."""

    _fields_ = [("kernel", ctypes.POINTER(KERNEL_DESC)), ("status", ctypes.c_int),
                ("median_us", ctypes.c_float), ("tflops", ctypes.c_float),
                ("gbps", ctypes.c_float)]


#: ``w4a16_gemm_args`` packed by :mod:`struct` in one call (faster than filling a ctypes
#: Structure field by field on the op's hot path): the problem (5 int64, 5 int, padding to 64
#: bytes), 6 pointers, alpha, padding, a_perm, flags and padding. The offsets follow the C ABI; a
#: test checks them against ctypes' layout of :class:`GEMM_ARGS` and the header's field lists.
GEMM_ARGS_STRUCT = struct.Struct("=5q5i4x6Qf4xQI4x")
assert GEMM_ARGS_STRUCT.size == ctypes.sizeof(GEMM_ARGS)
#: ``w4a16_grouped_gemm_args`` packed by :mod:`struct` (struct_size, 7 int64, 4 int, 8 pointers,
#: alpha, padding, the status pointer, flags and padding); a test checks it against
#: :class:`GROUPED_ARGS`.
GROUPED_ARGS_STRUCT = struct.Struct("=Q7q4i8Qf4xQI4x")
assert GROUPED_ARGS_STRUCT.size == ctypes.sizeof(GROUPED_ARGS)

_c = ctypes
_VP, _I64, _INT, _SZ = _c.c_void_p, _c.c_int64, _c.c_int, _c.c_size_t
_PROTOTYPES = {
    "w4a16_version": (_c.c_uint, []),
    "w4a16_version_string": (_c.c_char_p, []),
    "w4a16_status_name": (_c.c_char_p, [_INT]),
    "w4a16_last_error_message": (_c.c_char_p, []),
    "w4a16_last_cuda_error": (_INT, []),
    "w4a16_kernel_count": (_SZ, []),
    "w4a16_kernel_get": (_c.POINTER(KERNEL_DESC), [_SZ]),
    "w4a16_kernel_find": (_c.POINTER(KERNEL_DESC), [_c.c_char_p]),
    "w4a16_registry_fingerprint": (_c.c_uint64, []),
    "w4a16_can_implement": (_INT, [_c.POINTER(KERNEL_DESC), _c.POINTER(PROBLEM)]),
    "w4a16_workspace_size": (_INT, [_VP, _VP, _INT, _c.POINTER(_SZ)]),
    "w4a16_gemm": (_INT, [_VP, _VP, _VP, _SZ, _VP]),
    "w4a16_grouped_gemm": (_INT, [_VP, _VP, _VP, _SZ, _VP]),
    "w4a16_grouped_gemm_workspace_size": (_INT, [_VP, _VP, _c.POINTER(_SZ)]),
    "w4a16_gather_k": (_INT, [_VP, _I64, _VP, _I64, _I64, _INT, _VP, _I64, _VP]),
    "w4a16_grouped_can_implement": (_INT, [_c.POINTER(KERNEL_DESC), _VP]),
    "w4a16_grouped_kernel_count": (_SZ, []),
    "w4a16_grouped_kernel_get": (_c.POINTER(KERNEL_DESC), [_SZ]),
    "w4a16_grouped_heuristic_query": (_INT, [_VP, _INT, _INT, _c.POINTER(_c.POINTER(KERNEL_DESC)),
                                             _c.POINTER(_INT)]),
    "w4a16_quantize": (_INT, [_VP, _INT, _I64, _I64, _INT, _INT, _INT, _VP, _VP, _VP]),
    "w4a16_quantize_ex": (_INT, [_VP, _INT, _I64, _I64, _INT, _INT, _INT,
                                 _c.POINTER(QUANTIZE_OPTIONS), _VP, _VP, _VP]),
    "w4a16_packed_size": (_INT, [_I64, _I64, _c.POINTER(_SZ)]),
    "w4a16_pack_weights": (_INT, [_VP, _I64, _I64, _VP]),
    "w4a16_unpack_weights": (_INT, [_VP, _I64, _I64, _VP]),
    "w4a16_cache_env_current": (_INT, [_c.POINTER(CACHE_ENV)]),
    "w4a16_cache_default_path": (_INT, [_c.c_char_p, _SZ]),
    "w4a16_select": (_INT, [_c.POINTER(PROBLEM), _c.POINTER(_c.POINTER(KERNEL_DESC)), _VP]),
    "w4a16_tune": (_INT, [_c.POINTER(PROBLEM), _c.POINTER(PROFILE_OPTIONS),
                          _c.POINTER(PROFILE_RESULT), _INT, _c.POINTER(_INT)]),
    "w4a16_float_to_bf16": (_c.c_uint16, [_c.c_float]),
    "w4a16_float_to_half": (_c.c_uint16, [_c.c_float]),
}

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None


def library_path() -> Path:
    """The shared object this package loads: ``$W4A16_LIBRARY`` or ``libw4a16.so`` beside it."""
    env = os.environ.get("W4A16_LIBRARY")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    for name in ("libw4a16.so", "libw4a16.dylib", "w4a16.dll"):
        if (here / name).exists():
            return here / name
    return here / "libw4a16.so"


def lib() -> ctypes.CDLL:
    """The loaded C library with its prototypes declared (loaded on the first call).

    Raises:
        OSError: the shared object is missing or cannot be loaded; the message says where it
            was looked for and how to build it.
    """
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            path = library_path()
            try:
                handle = ctypes.CDLL(str(path))
            except OSError as e:
                raise OSError(
                    f"w4a16: cannot load the C library at {path} ({e}); install the package "
                    "with `pip install .` from the source tree, or set W4A16_LIBRARY to a built "
                    "libw4a16.so") from e
            for name, (restype, argtypes) in _PROTOTYPES.items():
                try:
                    fn = getattr(handle, name)
                except AttributeError:
                    raise OSError(
                        f"w4a16: the C library at {path} has no {name}: it is older than this "
                        "package; rebuild it from the same source tree (pip install ., or "
                        "cmake --build)") from None
                fn.restype = restype
                fn.argtypes = argtypes
            _lib = handle
    return _lib


def last_error_message() -> str:
    """``w4a16_last_error_message()`` of this thread's last failing call ("" if none)."""
    msg = lib().w4a16_last_error_message()
    return msg.decode("utf-8", "replace") if msg else ""


def check(status: int) -> None:
    """Raise :class:`W4A16Error` with the thread's last message unless status is OK (0)."""
    if status != 0:
        raise W4A16Error(status, last_error_message())
