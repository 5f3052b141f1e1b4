"""The Python package without a GPU: import, version, the binding's layouts, pack / unpack against
an independent packer written from docs/LAYOUT.md, quantize against the C quantizer and a float64
model of its rule, and every argument error's message."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import numpy as np
import pytest

import w4a16
from w4a16 import _dtypes, _lib


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng()  # fresh data every run


def test_version_matches_library() -> None:
    lib = _lib.lib()
    assert w4a16.__version__ == lib.w4a16_version_string().decode()
    major, minor, patch = (int(v) for v in w4a16.__version__.split("."))
    assert lib.w4a16_version() == major * 10000 + minor * 100 + patch


def test_torch_registration_follows_torch() -> None:
    """HAS_TORCH is whether torch imports (python_tests_without_torch hides it); the ops are
    registered exactly then."""
    import sys
    try:
        import torch  # noqa: F401
        has_torch = True
    except ImportError:
        has_torch = False
    assert w4a16.HAS_TORCH is has_torch
    assert ("w4a16.ops" in sys.modules) is has_torch


def test_info_and_kernels() -> None:
    info = w4a16.info()
    assert info["version"] == w4a16.__version__
    assert info["kernels"] == len(w4a16.kernels()) > 0
    assert set(info["archs"]) <= {"sm80", "sm90a"}
    ks = w4a16.kernels("*sm90*")
    assert all("sm90" in k.name for k in ks)
    assert [k.name for k in w4a16.kernels()] == sorted(k.name for k in w4a16.kernels())
    for k in w4a16.kernels()[:20]:
        assert k.family in ("sm80", "sm90", "gemv") and k.dtype in ("float16", "bfloat16")
        assert min(k.tile) >= 1 and k.threads > 0
    sm80 = w4a16.kernels("w4a16_sm80_*")
    if sm80:  # part-full tiles along N and K (docs: the sm80 family runs any N % 16, K % 64)
        assert {(k.n_multiple, k.k_multiple) for k in sm80} == {(16, 64)}


def test_gemm_args_layout_matches_ctypes() -> None:
    """The struct.pack layout of the hot path equals the C ABI layout ctypes computes."""
    assert ctypes.sizeof(_lib.PROBLEM) == 64  # 5 int64, 5 int, 4 bytes of padding
    assert _lib.PROBLEM.act_order.offset == 56
    fmt = _lib.GEMM_ARGS_STRUCT
    assert fmt.size == ctypes.sizeof(_lib.GEMM_ARGS) == 136
    assert (_lib.GEMM_ARGS.a.offset, _lib.GEMM_ARGS.alpha.offset, _lib.GEMM_ARGS.a_perm.offset,
            _lib.GEMM_ARGS.flags.offset) == (64, 112, 120, 128)
    vals = (11, 22, 33, 44, 55, 66, 1, 0, 1, 1, 0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000,
            0.5, 0x7000, _lib.GEMM_NO_PDL)
    buf = ctypes.create_string_buffer(fmt.size)
    fmt.pack_into(buf, 0, *vals)
    args = _lib.GEMM_ARGS.from_buffer_copy(buf.raw)
    p = args.problem
    assert (p.m, p.n, p.k, p.lda, p.ldd, p.group_size, p.mode, p.dtype, p.has_bias,
            p.act_order) == vals[:10]
    assert (args.a, args.w, args.scales, args.zeros, args.bias, args.d) == vals[10:16]
    assert args.alpha == 0.5 and args.a_perm == 0x7000 and args.flags == _lib.GEMM_NO_PDL
    # and back: a Structure filled field by field packs to the same bytes
    assert bytes(args) == buf.raw
    gfmt = _lib.GROUPED_ARGS_STRUCT
    assert gfmt.size == ctypes.sizeof(_lib.GROUPED_ARGS)


HEADER = Path(__file__).resolve().parents[2] / "include" / "w4a16" / "w4a16.h"
_C_TYPES = {"int64_t": ctypes.c_int64, "int": ctypes.c_int, "unsigned": ctypes.c_uint,
            "size_t": ctypes.c_size_t, "float": ctypes.c_float, "w4a16_quant_mode": ctypes.c_int,
            "w4a16_dtype": ctypes.c_int, "w4a16_index_type": ctypes.c_int,
            "w4a16_problem": _lib.PROBLEM}


def header_fields(name: str) -> list:
    """``typedef struct <name> {...}``'s fields in include/w4a16/w4a16.h as (name, ctypes type):
    pointers are c_void_p, enums c_int."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", HEADER.read_text(), flags=re.S)
    body = re.search(r"typedef struct " + name + r" \{(.*?)\} " + name + ";", text, re.S)
    assert body, f"no typedef struct {name} in {HEADER}"
    fields = []
    for decl in body.group(1).split(";"):
        decl = decl.strip()
        if not decl:
            continue
        m = re.match(r"(?:const\s+)?(\w+)\s*(\**)\s*(.*)", decl)
        assert m, decl
        ctype, stars, names = m.groups()
        for var in names.split(","):
            var = var.strip()
            ptr = stars or var.startswith("*")
            fields.append((var.lstrip("*").strip(),
                           ctypes.c_void_p if ptr else _C_TYPES[ctype]))
    return fields


@pytest.mark.skipif(not HEADER.exists(), reason="needs the source tree's include/w4a16/w4a16.h")
@pytest.mark.parametrize("c_name,py", [("w4a16_problem", _lib.PROBLEM),
                                       ("w4a16_gemm_args", _lib.GEMM_ARGS),
                                       ("w4a16_grouped_gemm_args", _lib.GROUPED_ARGS)])
def test_binding_structs_match_header(c_name: str, py: type) -> None:
    """The ctypes structs declare the header's fields, in its order, with its types (so ctypes'
    layout is the C ABI's and the struct formats checked above follow)."""
    assert [(f[0], f[1]) for f in py._fields_] == header_fields(c_name)


def test_status_error_carries_name_and_message() -> None:
    lib = _lib.lib()
    st = lib.w4a16_packed_size(15, 64, ctypes.byref(ctypes.c_size_t()))
    with pytest.raises(w4a16.W4A16Error) as e:
        _lib.check(st)
    assert e.value.name == "INVALID_SHAPE" and e.value.status == 3
    assert "15" in e.value.message and "W4A16_STATUS_INVALID_SHAPE" in str(e.value)
    for value, name in _lib.STATUS_NAMES.items():
        assert lib.w4a16_status_name(value).decode() == "W4A16_STATUS_" + name


# --- pack / unpack ---------------------------------------------------------------------------

def reference_pack(codes: np.ndarray) -> np.ndarray:
    """docs/LAYOUT.md, written independently of runtime/pack.c: 16x64 tiles of 32 lanes x 4
    words; word j of lane l holds the mma.m16n8k16 A fragment of sub-tile j, nibble p holding
    element order[p] = (e0, e2, e4, e6, e1, e3, e5, e7)."""
    n, k = codes.shape
    out = np.zeros(n * k // 2, dtype=np.uint8)
    elem_rc = [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]  # (row+, col+)
    order = [0, 2, 4, 6, 1, 3, 5, 7]
    for nt in range(n // 16):
        for kt in range(k // 64):
            base = (nt * (k // 64) + kt) * 512
            for lane in range(32):
                g, t = lane // 4, lane % 4
                for j in range(4):
                    word = 0
                    for p in range(8):
                        dr, dc = elem_rc[order[p]]
                        q = int(codes[nt * 16 + g + dr, kt * 64 + 16 * j + 2 * t + dc])
                        word |= q << (4 * p)
                    off = base + lane * 16 + j * 4
                    out[off:off + 4] = np.frombuffer(word.to_bytes(4, "little"), np.uint8)
    return out.reshape(n, k // 2)


@pytest.mark.parametrize("n,k", [(16, 64), (32, 192), (48, 128)])
def test_pack_matches_layout_doc(rng: np.random.Generator, n: int, k: int) -> None:
    codes = rng.integers(0, 16, size=(n, k), dtype=np.uint8)
    packed = w4a16.pack(codes)
    assert packed.shape == (n, k // 2) and packed.dtype == np.uint8
    np.testing.assert_array_equal(packed, reference_pack(codes))
    np.testing.assert_array_equal(w4a16.unpack(packed), codes)
    np.testing.assert_array_equal(w4a16.unpack(packed.reshape(-1), n=n, k=k), codes)


def test_pack_large_layer_is_fast(rng: np.random.Generator) -> None:
    """A 8192 x 8192 layer round-trips (a 70B layer packs in seconds, not minutes)."""
    codes = rng.integers(0, 16, size=(8192, 8192), dtype=np.uint8)
    np.testing.assert_array_equal(w4a16.unpack(w4a16.pack(codes)), codes)


def test_pack_errors() -> None:
    with pytest.raises(ValueError, match="N % 16 == 0 and K % 64 == 0, got N = 15"):
        w4a16.pack(np.zeros((15, 64), np.uint8))
    with pytest.raises(ValueError, match="K = 96"):
        w4a16.pack(np.zeros((16, 96), np.uint8))
    bad = np.zeros((16, 64), np.int32)
    bad[3, 5] = 16
    with pytest.raises(ValueError, match=r"codes\[3, 5\] = 16 is not a 4-bit code"):
        w4a16.pack(bad)
    bad[3, 5] = -1
    with pytest.raises(ValueError, match=r"codes\[3, 5\] = -1"):
        w4a16.pack(bad)
    with pytest.raises(TypeError, match="integers"):
        w4a16.pack(np.zeros((16, 64), np.float32))
    with pytest.raises(ValueError, match="2-D"):
        w4a16.pack(np.zeros((16, 64, 1), np.uint8))
    with pytest.raises(TypeError, match="numpy array or a torch tensor"):
        w4a16.pack([[0] * 64] * 16)
    with pytest.raises(ValueError, match="holds 512 bytes, but N = 32, K = 64 needs 1024"):
        w4a16.unpack(np.zeros((16, 32), np.uint8), n=32, k=64)
    with pytest.raises(TypeError, match="uint8"):
        w4a16.unpack(np.zeros((16, 32), np.int8))
    with pytest.raises(ValueError, match=r"packed has shape \(512,\): give n and k"):
        w4a16.unpack(np.zeros(512, np.uint8))


# --- quantize --------------------------------------------------------------------------------

def c_quantize(w: np.ndarray, mode: int, group: int, dtype: str, clip_search: bool = False):
    """The C quantizer called directly, in one call: codes, scale bits, zero bits."""
    n, k = w.shape
    g = k if mode == _dtypes.PER_COLUMN_SCALE_ONLY else group
    codes = np.empty((n, k), np.uint8)
    scales = np.empty((k // g, n), np.uint16)
    zeros = np.empty((k // g, n), np.uint16)
    w32 = np.ascontiguousarray(w, np.float32)
    opts = _lib.QUANTIZE_OPTIONS(struct_size=ctypes.sizeof(_lib.QUANTIZE_OPTIONS),
                                 clip_search=clip_search)
    st = _lib.lib().w4a16_quantize_ex(w32.ctypes.data, 0, n, k, mode,
                                      0 if mode == _dtypes.PER_COLUMN_SCALE_ONLY else group,
                                      _dtypes.c_dtype(dtype), opts, codes.ctypes.data,
                                      scales.ctypes.data, zeros.ctypes.data)
    _lib.check(st)
    return codes, scales, zeros


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("group,zp", [(32, False), (64, False), (128, False), (256, False),
                                      (128, True), (64, True), (-1, False)])
def test_quantize_same_bits_as_c(rng: np.random.Generator, dtype: str, group: int,
                                 zp: bool) -> None:
    n, k = 48, 512
    w = rng.standard_normal((n, k)).astype(np.float32) * 0.05
    qw = w4a16.quantize(w, group_size=group, zero_point=zp, dtype=dtype)
    mode = (_dtypes.FINEGRAINED_SCALE_AND_ZEROS if zp else
            _dtypes.PER_COLUMN_SCALE_ONLY if group == -1 else _dtypes.FINEGRAINED_SCALE_ONLY)
    assert qw.mode == mode and qw.dtype == dtype and (qw.n, qw.k) == (n, k)
    codes, sbits, zbits = c_quantize(w, mode, group, dtype)
    np.testing.assert_array_equal(qw.codes(), codes)
    np.testing.assert_array_equal(qw.qweight, w4a16.pack(codes))
    np.testing.assert_array_equal(_dtypes.to_bits(qw.scales, dtype), sbits)
    if zp:
        np.testing.assert_array_equal(_dtypes.to_bits(qw.zeros, dtype), zbits)
    else:
        assert qw.zeros is None


@pytest.mark.parametrize("zp", [False, True])
def test_quantize_clip_search_same_bits_and_better(rng: np.random.Generator, zp: bool) -> None:
    """clip_search: the C function's bits (also across the thread pool's row blocks), and a
    smaller squared error than the plain rule on heavy-tailed weights."""
    w = (rng.laplace(size=(640, 1024)) * 0.02).astype(np.float32)
    qs = w4a16.quantize(w, group_size=128, zero_point=zp, clip_search=True)
    mode = _dtypes.FINEGRAINED_SCALE_AND_ZEROS if zp else _dtypes.FINEGRAINED_SCALE_ONLY
    codes, sbits, zbits = c_quantize(w, mode, 128, "bfloat16", clip_search=True)
    np.testing.assert_array_equal(qs.codes(), codes)
    np.testing.assert_array_equal(_dtypes.to_bits(qs.scales, "bfloat16"), sbits)
    plain = w4a16.quantize(w, group_size=128, zero_point=zp)
    err_s = ((qs.dequantize().astype(np.float64) - w) ** 2).sum()
    err_p = ((plain.dequantize().astype(np.float64) - w) ** 2).sum()
    assert err_s < 0.97 * err_p


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_quantize_dequantize_against_float64_rule(rng: np.random.Generator, dtype: str) -> None:
    """dequantize() is s * (q - 8) of the stored values, and within half a step of the weight."""
    n, k, g = 32, 256, 64
    w = rng.standard_normal((n, k)) * 0.02
    qw = w4a16.quantize(w.astype(np.float32), group_size=g, dtype=dtype)
    q = qw.codes().astype(np.float64)
    s = np.repeat(np.asarray(qw.scales, np.float64).T, g, axis=1)
    ref = s * (q - 8.0)
    np.testing.assert_array_equal(qw.dequantize(), ref.astype(np.float32))
    # round-to-nearest: |w - deq| <= s / 2 (plus the scale's own rounding), clipped at code 0
    amax = np.abs(w.reshape(n, k // g, g)).max(axis=2).repeat(g, axis=1)
    inside = np.abs(w) <= amax * 7 / 8
    assert np.all(np.abs(w - ref)[inside] <= 0.52 * s[inside] + 2e-3 * amax[inside])


def test_quantize_numpy_float16_and_float64_inputs(rng: np.random.Generator) -> None:
    w = (rng.standard_normal((16, 128)) * 0.1)
    a = w4a16.quantize(w, dtype="float16")               # float64 -> float32 -> C
    b = w4a16.quantize(w.astype(np.float32), dtype=np.float16)
    np.testing.assert_array_equal(a.qweight, b.qweight)
    c = w4a16.quantize(w.astype(np.float16), dtype="fp16")  # float16 host type
    codes, sbits, _ = c_quantize(w.astype(np.float16).astype(np.float32),
                                 _dtypes.FINEGRAINED_SCALE_ONLY, 128, "float16")
    np.testing.assert_array_equal(c.codes(), codes)
    np.testing.assert_array_equal(_dtypes.to_bits(c.scales, "float16"), sbits)


def test_quantize_errors() -> None:
    w = np.zeros((16, 128), np.float32)
    with pytest.raises(ValueError, match="group_size 48 does not divide K = 128"):
        w4a16.quantize(w, group_size=48)
    with pytest.raises(w4a16.W4A16Error, match="UNSUPPORTED_GROUP_SIZE"):
        w4a16.quantize(np.zeros((16, 192), np.float32), group_size=96)
    with pytest.raises(ValueError, match="N % 16 == 0 and K % 64 == 0, got N = 16, K = 100"):
        w4a16.quantize(np.zeros((16, 100), np.float32))
    with pytest.raises(TypeError, match="not an activation dtype"):
        w4a16.quantize(w, dtype="float32")
    with pytest.raises(TypeError, match="int32 is not float32"):
        w4a16.quantize(np.zeros((16, 128), np.int32))
    with pytest.raises(ValueError, match=r"weight must be 2-D \[N, K\], got shape \(2048,\)"):
        w4a16.quantize(np.zeros(2048, np.float32))
    for bad_group in (-2, 64.0, "64"):
        with pytest.raises(ValueError, match=f"group_size {bad_group!r} is not a positive group size"):
            w4a16.quantize(w, group_size=bad_group)
    bad = w.copy()
    bad[2, 7] = np.nan
    with pytest.raises(w4a16.W4A16Error, match=r"weight \[2, 7\] is not finite"):
        w4a16.quantize(bad)
    big = np.zeros((2048, 8192), np.float32)       # quantized in blocks of rows on threads
    big[1500, 7] = np.inf
    with pytest.raises(w4a16.W4A16Error, match=r"weight \[1500, 7\] is not finite"):
        w4a16.quantize(big)


def test_dtype_conversions_match_c(rng: np.random.Generator) -> None:
    x = np.concatenate([rng.standard_normal(2000).astype(np.float32) * 10.0 ** rng.integers(
        -8, 5, 2000), np.array([0.0, -0.0, 65504.0, 1e-8, np.inf, -np.inf], np.float32)])
    lib = _lib.lib()
    bf = np.array([lib.w4a16_float_to_bf16(float(v)) for v in x], np.uint16)
    hf = np.array([lib.w4a16_float_to_half(float(v)) for v in x], np.uint16)
    np.testing.assert_array_equal(_dtypes.to_bits(x, "bfloat16"), bf)
    np.testing.assert_array_equal(_dtypes.to_bits(x, "float16"), hf)
    assert _dtypes.canonical_dtype("bf16") == "bfloat16"
    assert _dtypes.canonical_dtype(np.float16) == "float16"
    with pytest.raises(TypeError, match="float32"):
        _dtypes.canonical_dtype(np.float32)


def test_quantized_weight_validation_and_act_order(rng: np.random.Generator) -> None:
    w = rng.standard_normal((16, 128)).astype(np.float32)
    qw = w4a16.quantize(w, group_size=64)
    with pytest.raises(ValueError, match=r"scales have shape \(3, 16\), expected \[G, N\] = \[2"):
        w4a16.QuantizedWeight(qw.qweight, np.ones((3, 16), np.float32), group_size=64, n=16,
                              k=128)
    with pytest.raises(ValueError, match=r"qweight has shape \(16, 32\)"):
        w4a16.QuantizedWeight(qw.qweight[:, :32], qw.scales, group_size=64, n=16, k=128)
    with pytest.raises(ValueError, match=r"group_size 48 does not divide K = 128"):
        w4a16.QuantizedWeight(qw.qweight, qw.scales, group_size=48, n=16, k=128)
    with pytest.raises(ValueError, match=r"zeros have shape \(2, 8\), expected \[G, N\] = \[2, 16\]"):
        w4a16.QuantizedWeight(qw.qweight, qw.scales, np.zeros((2, 8), np.float32), group_size=64,
                              n=16, k=128)
    with pytest.raises(ValueError, match=r"perm has shape \(127,\), expected \[K\] = \[128\]"):
        w4a16.QuantizedWeight(qw.qweight, qw.scales, group_size=64, n=16, k=128,
                              perm=np.arange(127))
    perm = rng.permutation(128)
    pw = w4a16.QuantizedWeight(qw.qweight, qw.scales, group_size=64, n=16, k=128,
                               dtype="bfloat16", perm=perm)
    np.testing.assert_array_equal(pw.dequantize()[:, perm], qw.dequantize())
    assert "act-order" in repr(pw) and "FINEGRAINED_SCALE_ONLY" in repr(pw)


def test_tune_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match=r"shape \(1, 2, 3, 4\) is neither"):
        w4a16.tune([(1, 2, 3, 4)], progress=False)
