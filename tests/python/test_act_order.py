"""Act-order: ``torch.ops.w4a16.gather_k``, ``torch.ops.w4a16.gemm``'s ``perm`` argument and
``w4a16.nn.Linear``'s three gathers. Without a GPU: fake-tensor shapes and argument errors. On a
GPU: gather_k against ``index_select`` (a copy: bit-exact) on fresh random data, rows with
padding, M = 0, a bad index, opcheck, torch.compile, CUDA-graph capture; the GEMM with ``perm``
against ``a.double()[:, perm] @ W.double().T`` (poisoned outputs; M = 1 at decode sizes), a bad
index giving NaN, its errors, opcheck, compile and capture;
an act-order Linear against its float64 reference with each gather, and the gathers against each
other."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import w4a16  # noqa: E402
from w4a16 import _dtypes  # noqa: E402
from w4a16.nn import GATHER_MODES, Linear  # noqa: E402

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DTYPES = [torch.float16, torch.bfloat16]


def meta(*shape: int, dtype=torch.bfloat16):
    return torch.empty(*shape, dtype=dtype, device="meta")


# --- without a GPU ---------------------------------------------------------------------------

def test_fake_shape() -> None:
    out = torch.ops.w4a16.gather_k(meta(3, 5, 64), meta(64, dtype=torch.int32))
    assert out.shape == (3, 5, 64) and out.dtype == torch.bfloat16


@pytest.mark.parametrize("a,perm,exc,msg", [
    (meta(4, 64, dtype=torch.float32), meta(64, dtype=torch.int32), TypeError,
     "a has dtype torch.float32"),
    (meta(4, 60), meta(60, dtype=torch.int32), ValueError, "K = 60"),
    (meta(4, 64), meta(64, dtype=torch.int64), TypeError, "perm has dtype torch.int64"),
    (meta(4, 64), meta(32, dtype=torch.int32), ValueError, r"perm has shape \(32,\)"),
    (meta(4, 64), meta(128, dtype=torch.int32)[::2], ValueError,
     r"perm \(stride 2\) must be contiguous"),
    (torch.empty((), dtype=torch.bfloat16, device="meta"), meta(64, dtype=torch.int32), ValueError,
     "a must have at least one dimension"),
])
def test_fake_errors(a, perm, exc, msg) -> None:
    with pytest.raises(exc, match=msg):
        torch.ops.w4a16.gather_k(a, perm)


def test_cpu_refused() -> None:
    with pytest.raises(ValueError, match="runs on CUDA devices"):
        torch.ops.w4a16.gather_k(torch.zeros(2, 64, dtype=torch.bfloat16),
                                 torch.arange(64, dtype=torch.int32))


def test_linear_gather_choice_checked() -> None:
    lin = Linear(128, 64, dtype=torch.bfloat16)
    lin.perm = torch.arange(128)
    lin.perm_i32 = lin.perm.to(torch.int32)
    lin.gather = "bogus"
    with pytest.raises(ValueError, match="gather = 'bogus'; it must be one of 'op', 'fused', "
                                         "'index_select'"):
        lin(torch.zeros(1, 128, dtype=torch.bfloat16))


def _meta_act_order_linear(n: int, k: int, group: int) -> Linear:
    lin = Linear(k, n, group_size=group, dtype=torch.bfloat16, device="meta")
    lin.perm = torch.empty(k, dtype=torch.int64, device="meta")
    lin.perm_i32 = torch.empty(k, dtype=torch.int32, device="meta")
    return lin


@pytest.mark.parametrize("gather", GATHER_MODES)
def test_linear_gather_modes_accepted(gather) -> None:
    assert GATHER_MODES == ("op", "fused", "index_select")
    lin = _meta_act_order_linear(64, 256, 128)
    assert lin.gather == "fused"  # the default
    lin.gather = gather
    out = lin(meta(3, 5, 256))
    assert out.shape == (3, 5, 64) and out.dtype == torch.bfloat16


# --- torch.ops.w4a16.gemm with perm, without a GPU ------------------------------------------

def _gemm_args(m: int = 4, n: int = 64, k: int = 256):
    return meta(m, k), meta(n, k // 2, dtype=torch.uint8), meta(k // 128, n)


def test_gemm_perm_fake_shape() -> None:
    a, w, s = _gemm_args()
    p = meta(256, dtype=torch.int32)
    assert torch.ops.w4a16.gemm(a, w, s, None, None, 128, 1.0, p).shape == (4, 64)
    assert torch.ops.w4a16.gemm(meta(3, 5, 256), w, s, perm=p).shape == (3, 5, 64)
    o = meta(4, 64)
    assert torch.ops.w4a16.gemm.out(a, w, s, None, None, 128, 1.0, p, out=o) is None
    assert w4a16.ops.gemm(a, w, s, perm=p, out=o) is o
    assert w4a16.ops.gemm(a, w, s, None, None, 128, 1.0, p).shape == (4, 64)
    assert "Tensor? perm=None" in str(torch.ops.w4a16.gemm.default._schema)
    assert "Tensor? perm=None, *, Tensor(a!) out" in str(torch.ops.w4a16.gemm.out._schema)


@pytest.mark.parametrize("perm,exc,msg", [
    (meta(256, dtype=torch.int64), TypeError, "perm has dtype torch.int64; it must be torch.int32"),
    (meta(256, dtype=torch.float32), TypeError, "perm has dtype torch.float32"),
    (meta(128, dtype=torch.int32), ValueError,
     r"perm has shape \(128,\); it must be \[K\] = \[256\]"),
    (meta(1, 256, dtype=torch.int32), ValueError, r"perm has shape \(1, 256\)"),
    (meta(512, dtype=torch.int32)[::2], ValueError, r"perm \(shape \(256,\), strides \(2,\)\) "
     "must be contiguous"),
])
def test_gemm_perm_fake_errors(perm, exc, msg) -> None:
    a, w, s = _gemm_args()
    with pytest.raises(exc, match=msg):
        torch.ops.w4a16.gemm(a, w, s, None, None, 128, 1.0, perm)
    with pytest.raises(exc, match=msg):
        torch.ops.w4a16.gemm.out(a, w, s, None, None, 128, 1.0, perm, out=meta(4, 64))


def test_gemm_perm_cpu_refused() -> None:
    with pytest.raises(ValueError, match="runs on CUDA devices"):
        torch.ops.w4a16.gemm(torch.zeros(2, 256, dtype=torch.bfloat16),
                             torch.zeros(64, 128, dtype=torch.uint8),
                             torch.ones(2, 64, dtype=torch.bfloat16), None, None, 128, 1.0,
                             torch.arange(256, dtype=torch.int32))


# --- on a GPU --------------------------------------------------------------------------------

def _perm(k: int) -> torch.Tensor:
    return torch.randperm(k, device="cuda").to(torch.int32)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 64), (7, 136), (16, 4096), (3, 5, 14336), (300, 1024)])
def test_matches_index_select(dtype, shape) -> None:
    a = torch.randn(shape, device="cuda").to(dtype)
    perm = _perm(shape[-1])
    out = torch.ops.w4a16.gather_k(a, perm)
    ref = a.index_select(-1, perm.long())
    assert out.shape == a.shape and out.dtype == dtype and out.is_contiguous()
    assert torch.equal(out.view(torch.int16), ref.view(torch.int16))


@gpu
def test_padded_rows_and_empty() -> None:
    base = torch.randn(9, 200, device="cuda").to(torch.bfloat16)
    a = base[:, 8:136]  # rows of 200 elements, K = 128, not 16-byte aligned at its start
    perm = _perm(128)
    assert torch.equal(torch.ops.w4a16.gather_k(a, perm), a.index_select(-1, perm.long()))
    empty = torch.ops.w4a16.gather_k(torch.empty(0, 128, device="cuda", dtype=torch.float16), perm)
    assert empty.shape == (0, 128)


@gpu
def test_bad_index_gives_nan() -> None:
    a = torch.randn(4, 64, device="cuda").to(torch.float16)
    perm = _perm(64)
    perm[5] = 64
    out = torch.ops.w4a16.gather_k(a, perm)
    assert torch.isnan(out[:, 5]).all()
    keep = [i for i in range(64) if i != 5]
    assert torch.equal(out[:, keep], a[:, perm[keep].long()])


@gpu
def test_device_and_layout_errors() -> None:
    a = torch.randn(4, 64, device="cuda").to(torch.bfloat16)
    with pytest.raises(ValueError, match="perm is on cpu"):
        torch.ops.w4a16.gather_k(a, torch.arange(64, dtype=torch.int32))
    with pytest.raises(ValueError, match="last dimension must be contiguous"):
        torch.ops.w4a16.gather_k(torch.randn(64, 4, device="cuda").to(torch.bfloat16).t(),
                                 _perm(64))


@gpu
def test_opcheck_compile_and_graph() -> None:
    a = torch.randn(3, 256, device="cuda").to(torch.bfloat16)
    perm = _perm(256)
    torch.library.opcheck(torch.ops.w4a16.gather_k.default, (a, perm))
    f = torch.compile(lambda x, p: torch.ops.w4a16.gather_k(x, p) * 2, fullgraph=True)
    assert torch.equal(f(a, perm), a.index_select(-1, perm.long()) * 2)
    static = a.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.ops.w4a16.gather_k(static, perm)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = torch.ops.w4a16.gather_k(static, perm)
    static.copy_(torch.randn(3, 256, device="cuda").to(torch.bfloat16))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, static.index_select(-1, perm.long()))


@gpu
@pytest.mark.parametrize("gather", GATHER_MODES)
@pytest.mark.parametrize("m", [1, 16, 128])
def test_act_order_linear(gather, m) -> None:
    n, k, group = 256, 512, 128
    rng = np.random.default_rng()
    w = rng.standard_normal((n, k)).astype(np.float32) * 0.05
    g_idx = rng.permutation(np.repeat(np.arange(k // group), group)).astype(np.int32)
    perm = np.argsort(g_idx, kind="stable")
    qw = w4a16.quantize(w[:, perm], group_size=group, dtype="bfloat16")
    qw = w4a16.QuantizedWeight(qw.qweight, qw.scales, qw.zeros, group_size=group, n=n, k=k,
                               dtype="bfloat16", perm=perm)
    lin = Linear.from_quantized(qw.to("cuda"))
    lin.gather = gather
    w_ref = torch.as_tensor(qw.dequantize(), dtype=torch.float64, device="cuda")
    x = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    out.copy_(lin(x))
    ref = x.double() @ w_ref.T
    err = (out.double() - ref).abs().max().item() / ref.abs().max().item()
    assert err < 2e-2, err


# --- torch.ops.w4a16.gemm with perm, on a GPU -----------------------------------------------

def _rel_err(x: torch.Tensor, ref: torch.Tensor) -> float:
    return ((x.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def _tol(dtype) -> float:
    return 1e-2 if dtype == torch.bfloat16 else 2e-3


def _layer(n: int, k: int, group: int, zp: bool, dtype):
    """A random quantized layer on the GPU (stored column order) and its float64 dequantization;
    skips where no kernel of the build takes the shape."""
    g = k if group == -1 else group
    mode = (_dtypes.FINEGRAINED_SCALE_AND_ZEROS if zp else
            _dtypes.PER_COLUMN_SCALE_ONLY if g == k else _dtypes.FINEGRAINED_SCALE_ONLY)
    why = w4a16.nn._refusal(n, k, g, mode, _dtypes.canonical_dtype(dtype))
    if why:
        pytest.skip(why)
    w = torch.randn(n, k) * 0.05
    qw = w4a16.quantize(w, group_size=group, zero_point=zp, dtype=dtype).to("cuda")
    return qw, qw.dequantize().double()


def _perm_gemm_check(qw, wref, group: int, dtype, m: int, bias=None, alpha: float = 1.0) -> None:
    n, k = wref.shape
    a = torch.randn(m, k, device="cuda").to(dtype)
    perm = _perm(k)
    out = torch.full((m, n), float("nan"), dtype=dtype, device="cuda")
    torch.ops.w4a16.gemm.out(a, qw.qweight, qw.scales, qw.zeros, bias, group, alpha, perm,
                             out=out)
    ref = alpha * a.double()[:, perm.long()] @ wref.T
    if bias is not None:
        ref = ref + bias.double()
    assert not out.isnan().any(), f"M = {m}, K = {k}: unwritten or NaN outputs"
    err = _rel_err(out, ref)
    assert err < _tol(dtype), f"M = {m}, K = {k}: error {err:.3g}"
    out2 = torch.ops.w4a16.gemm(a, qw.qweight, qw.scales, qw.zeros, bias, group, alpha, perm)
    assert torch.equal(out, out2)
    # without perm the product differs: the check above would catch a perm left unused
    plain = torch.ops.w4a16.gemm(a, qw.qweight, qw.scales, qw.zeros, bias, group, alpha)
    assert _rel_err(plain, ref) > 10 * _tol(dtype)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("group,zp", [(128, False), (128, True), (32, False), (32, True),
                                      (-1, True)])
def test_gemm_perm_against_float64(dtype, group: int, zp: bool) -> None:
    n, k = 256, 1024
    qw, wref = _layer(n, k, group, zp, dtype)
    for m in (1, 16, 128):
        bias = torch.randn(n, device="cuda").to(dtype) if m == 16 else None
        _perm_gemm_check(qw, wref, group, dtype, m, bias, 0.5 if m == 128 else 1.0)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [4096, 14336])
def test_gemm_perm_decode(dtype, k: int) -> None:
    """M = 1 at a decoder's sizes (the TMA GEMV on sm_90, on the rows gathered into the
    workspace; under W4A16_GEMV_TMA_PERM=1 it gathers them itself where they fit)."""
    qw, wref = _layer(4096, k, 128, False, dtype)
    for _ in range(2):  # a second permutation and activation through the same layer
        _perm_gemm_check(qw, wref, 128, dtype, 1)


@gpu
@pytest.mark.parametrize("m", [1, 16])
def test_gemm_perm_bad_index_gives_nan(m: int) -> None:
    dtype, n, k = torch.bfloat16, 4096, 4096
    qw, _ = _layer(n, k, 128, False, dtype)
    a = torch.randn(m, k, device="cuda").to(dtype)
    for bad in (k, -1, 1 << 30):
        perm = _perm(k)
        perm[37] = bad
        out = torch.zeros(m, n, dtype=dtype, device="cuda")
        torch.ops.w4a16.gemm.out(a, qw.qweight, qw.scales, None, None, 128, 1.0, perm, out=out)
        torch.cuda.synchronize()
        assert out.isnan().all(), f"perm[37] = {bad}: {(~out.isnan()).sum().item()} outputs " \
                                  "are not NaN"


@gpu
def test_gemm_perm_errors_leave_output_untouched() -> None:
    dtype, n, k = torch.bfloat16, 256, 512
    qw, _ = _layer(n, k, 128, False, dtype)
    a = torch.randn(8, k, device="cuda").to(dtype)
    base = _perm(k + 4)
    cases = [
        ("perm on the CPU", torch.arange(k, dtype=torch.int32), ValueError,
         "perm is on cpu but a is on cuda"),
        ("misaligned perm", base[1:k + 1], w4a16.W4A16Error, "MISALIGNED.*a_perm"),
        ("non-contiguous perm", _perm(2 * k)[::2], ValueError, "perm .* must be contiguous"),
        ("int64 perm", _perm(k).long(), TypeError, "perm has dtype torch.int64"),
    ]
    for what, perm, exc, msg in cases:
        out = torch.full((8, n), float("nan"), dtype=dtype, device="cuda")
        with pytest.raises(exc, match=msg):
            torch.ops.w4a16.gemm.out(a, qw.qweight, qw.scales, None, None, 128, 1.0, perm,
                                     out=out)
        torch.cuda.synchronize()
        assert out.isnan().all(), f"{what}: the output was written"
    empty = torch.ops.w4a16.gemm(a[:0], qw.qweight, qw.scales, None, None, 128, 1.0, _perm(k))
    assert empty.shape == (0, n)


@gpu
def test_gemm_perm_opcheck_compile_and_graph() -> None:
    dtype, n, k = torch.bfloat16, 4096, 4096
    qw, wref = _layer(n, k, 128, False, dtype)
    perm = _perm(k)
    for m in (1, 9):
        a = torch.randn(m, k, device="cuda").to(dtype)
        torch.library.opcheck(torch.ops.w4a16.gemm.default,
                              (a, qw.qweight, qw.scales, None, None, 128, 1.0, perm))
        out = torch.empty(m, n, dtype=dtype, device="cuda")
        torch.library.opcheck(torch.ops.w4a16.gemm.out,
                              (a, qw.qweight, qw.scales, None, None, 128, 2.0, perm), {"out": out})

    def f(x, p):
        return torch.ops.w4a16.gemm(x * 2.0, qw.qweight, qw.scales, None, None, 128, 1.0, p)

    cf = torch.compile(f, fullgraph=True, dynamic=False)
    for m in (1, 16):
        x = torch.randn(m, k, device="cuda").to(dtype)
        assert torch.equal(cf(x, perm), f(x, perm))
    for m in (1, 16):  # capture after an eager call (the workspace holds the gathered rows)
        static_x = torch.randn(m, k, device="cuda").to(dtype)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            torch.ops.w4a16.gemm(static_x, qw.qweight, qw.scales, None, None, 128, 1.0, perm)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_y = torch.ops.w4a16.gemm(static_x, qw.qweight, qw.scales, None, None, 128,
                                            1.0, perm)
        for _ in range(2):
            static_x.copy_(torch.randn(m, k, device="cuda").to(dtype))
            static_y.fill_(float("nan"))
            g.replay()
            torch.cuda.synchronize()
            ref = static_x.double()[:, perm.long()] @ wref.T
            assert _rel_err(static_y, ref) < _tol(dtype), f"M = {m}"


@gpu
def test_gemm_perm_capture_without_workspace_raises(monkeypatch) -> None:
    """A capture whose gathered activations do not fit the reserved workspace says so (nothing
    is launched), and runs once it is reserved."""
    dtype, n, k, m = torch.bfloat16, 256, 1024, 16
    qw, wref = _layer(n, k, 128, False, dtype)
    monkeypatch.setattr(w4a16.ops, "_graph_ws", {})
    x = torch.randn(m, k, device="cuda").to(dtype)
    perm = _perm(k)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="reserve_workspace"):
        with torch.cuda.graph(g):
            torch.ops.w4a16.gemm(x, qw.qweight, qw.scales, None, None, 128, 1.0, perm)
    w4a16.ops.reserve_workspace(m * k * 2 + (1 << 20))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.ops.w4a16.gemm(x, qw.qweight, qw.scales, None, None, 128, 1.0, perm)
    g.replay()
    torch.cuda.synchronize()
    assert _rel_err(y, x.double()[:, perm.long()] @ wref.T) < _tol(dtype)


# --- nn.Linear's gathers against each other, on a GPU ---------------------------------------

@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("zp", [False, True])
def test_linear_gather_modes_agree(dtype, zp: bool) -> None:
    """An act-order Linear (a checkpoint's g_idx, its columns stored sorted by group) gives the
    same output with each gather: "op" and "index_select" bit for bit (the same gathered input
    into the same GEMM), "fused" to the kernel's tolerance; all against the float64 reference."""
    n, k, group = 1024, 4096, 128
    rng = np.random.default_rng()
    w = rng.standard_normal((n, k)).astype(np.float32) * 0.05
    g_idx = rng.permutation(np.repeat(np.arange(k // group), group)).astype(np.int32)
    perm = np.argsort(g_idx, kind="stable")
    name = "bfloat16" if dtype == torch.bfloat16 else "float16"
    sq = w4a16.quantize(w[:, perm], group_size=group, zero_point=zp, dtype=name)
    qw = w4a16.QuantizedWeight(sq.qweight, sq.scales, sq.zeros, group_size=group, n=n, k=k,
                               dtype=name, perm=perm)
    bias = torch.randn(n)
    lin = Linear.from_quantized(qw.to("cuda"), bias=bias)
    w_ref = torch.as_tensor(qw.dequantize(), dtype=torch.float64, device="cuda")
    for m in (1, 16, 128):
        x = torch.randn(m, k, device="cuda").to(dtype)
        ref = x.double() @ w_ref.T + lin.bias.double()
        outs = {}
        for gather in GATHER_MODES:
            lin.gather = gather
            out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
            out.copy_(lin(x))
            assert not out.isnan().any(), f"{gather}, M = {m}"
            assert _rel_err(out, ref) < _tol(dtype), f"{gather}, M = {m}"
            outs[gather] = out
        assert torch.equal(outs["op"], outs["index_select"]), f"M = {m}"
        assert _rel_err(outs["fused"], outs["op"].double()) < _tol(dtype), f"M = {m}"
