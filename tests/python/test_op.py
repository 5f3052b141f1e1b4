"""``torch.ops.w4a16.gemm`` and ``w4a16.nn``: fake-tensor shapes and argument errors (torch, no GPU),
then the op on a GPU against a float64 reference, opcheck, torch.compile, CUDA graphs, a side
stream, an MLP with its linears replaced, and bad inputs leaving a poisoned output untouched."""

from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import w4a16  # noqa: E402
from w4a16 import _dtypes  # noqa: E402

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DTYPES = [torch.float16, torch.bfloat16]


def meta(*shape: int, dtype=torch.bfloat16):
    return torch.empty(*shape, dtype=dtype, device="meta")


# --- without a GPU ---------------------------------------------------------------------------

def test_fake_shapes() -> None:
    a, w, s = meta(3, 5, 256), meta(64, 128, dtype=torch.uint8), meta(2, 64)
    out = torch.ops.w4a16.gemm(a, w, s)
    assert out.shape == (3, 5, 64) and out.dtype == torch.bfloat16
    out = torch.ops.w4a16.gemm(a, w, meta(1, 64), None, meta(64), -1)
    assert out.shape == (3, 5, 64)
    o = meta(15, 64)
    assert torch.ops.w4a16.gemm.out(meta(15, 256), w, s, meta(2, 64), out=o) is None
    assert w4a16.ops.gemm(meta(15, 256), w, s, meta(2, 64), out=o) is o


@pytest.mark.parametrize("args,exc,msg", [
    ((meta(4, 256, dtype=torch.float32), meta(64, 128, dtype=torch.uint8), meta(2, 64)),
     TypeError, "a has dtype torch.float32"),
    ((meta(4, 256), meta(64, 128, dtype=torch.int8), meta(2, 64)), TypeError, "w has dtype"),
    ((meta(4, 256), meta(64, 64, dtype=torch.uint8), meta(2, 64)), ValueError,
     r"w has shape \(64, 64\) but a has K = 256"),
    ((meta(4, 256), meta(64, 128, dtype=torch.uint8), meta(2, 64, dtype=torch.float16)),
     TypeError, "scales have dtype torch.float16"),
    ((meta(4, 256), meta(64, 128, dtype=torch.uint8), meta(3, 64)), ValueError,
     r"scales have shape \(3, 64\)"),
    ((meta(4, 256), meta(64, 128, dtype=torch.uint8), meta(2, 64), meta(2, 32)), ValueError,
     r"zeros have shape \(2, 32\)"),
    ((meta(4, 256), meta(64, 128, dtype=torch.uint8), meta(2, 64), None, meta(63)),
     ValueError, r"bias has shape \(63,\)"),
    ((meta(4, 256), meta(64, 128, dtype=torch.uint8), meta(2, 64), None, None, 64),
     ValueError, "group_size = 64 but scales"),
    ((meta(4, 256), meta(64, 128, dtype=torch.uint8), meta(1, 64)), ValueError,
     "one scale per column"),
    ((torch.empty((), dtype=torch.bfloat16, device="meta"), meta(64, 128, dtype=torch.uint8),
      meta(2, 64)),
     ValueError, "a must have at least one dimension"),
    ((meta(4, 256), meta(64, 128, 1, dtype=torch.uint8), meta(2, 64)), ValueError,
     r"w has shape \(64, 128, 1\); it must be \[N, K/2\]"),
    ((meta(4, 256), meta(64, 128, dtype=torch.uint8), meta(2, 64),
      meta(2, 64, dtype=torch.float16)), TypeError, "zeros have dtype torch.float16"),
    ((meta(4, 256), meta(64, 128, dtype=torch.uint8), meta(2, 64), None,
      meta(64, dtype=torch.float16)), TypeError, "bias has dtype torch.float16"),
])
def test_argument_errors(args, exc, msg) -> None:
    with pytest.raises(exc, match=msg):
        torch.ops.w4a16.gemm(*args)


def test_cpu_tensors_are_refused() -> None:
    a = torch.zeros(4, 256, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="runs on CUDA devices"):
        torch.ops.w4a16.gemm(a, torch.zeros(64, 128, dtype=torch.uint8),
                             torch.ones(2, 64, dtype=torch.bfloat16))


def test_quantize_torch_matches_numpy() -> None:
    w = torch.randn(64, 256) * 0.05
    for dtype in ("bfloat16", "float16"):
        qt = w4a16.quantize(w.to(torch.bfloat16), group_size=64, zero_point=True, dtype=dtype)
        qn = w4a16.quantize(w.to(torch.bfloat16).float().numpy(), group_size=64,
                            zero_point=True, dtype=dtype)
        assert qt.is_torch and qt.scales.dtype == getattr(torch, dtype)
        assert torch.equal(qt.qweight, torch.from_numpy(qn.qweight))
        assert torch.equal(qt.scales.float(), torch.from_numpy(qn.scales))
        assert torch.equal(qt.zeros.float(), torch.from_numpy(qn.zeros))
        assert torch.equal(qt.dequantize(), torch.from_numpy(qn.dequantize()))


def test_quantize_refuses_torch_float64() -> None:
    with pytest.raises(TypeError, match="weight dtype torch.float64 is not float32, float16 or "
                                        "bfloat16"):
        w4a16.quantize(torch.zeros(64, 256, dtype=torch.float64), group_size=64)


def test_replace_linears_reports_skips() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(512, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 40), torch.nn.Linear(40, 512))
    model.to(torch.bfloat16)
    report = w4a16.nn.replace_linears(model, predicate=lambda name, m: name != "3",
                                      group_size=128)
    assert report.replaced == ["0"]
    assert "packed layout" in report.skipped["2"] and "predicate" in report.skipped["3"]
    lin = model[0]
    assert isinstance(lin, w4a16.nn.Linear)
    assert "in_features=512, out_features=256, group_size=128" in repr(lin)
    assert lin.qweight.shape == (256, 256) and lin.scales.shape == (4, 256)
    assert lin.dtype == torch.bfloat16 and lin.bias.dtype == torch.bfloat16


@pytest.mark.parametrize("k,n,group,msg", [
    (256, 64, 96, "group_size 96 does not divide in_features = 256"),
    (256, 40, 128, "out_features = 40, in_features = 256"),
    (96, 64, 32, "out_features = 64, in_features = 96"),
])
def test_linear_refuses_shapes(k, n, group, msg) -> None:
    with pytest.raises(ValueError, match=msg):
        w4a16.nn.Linear(k, n, group_size=group)


def test_tune_reads_a_modules_linears() -> None:
    """tune's problems come from a module's w4a16 linears (N, K, group, mode, dtype, each M);
    a module without one is refused before anything runs."""
    from w4a16 import _select
    model = torch.nn.Sequential(w4a16.nn.Linear(256, 64, group_size=64, zero_point=True),
                                torch.nn.ReLU(),
                                w4a16.nn.Linear(64, 128, group_size=-1, dtype=torch.float16))
    assert _select._problems_of(model, (1, 16), 128, None, "bfloat16") == [
        (1, 64, 256, 64, _dtypes.FINEGRAINED_SCALE_AND_ZEROS, "bfloat16"),
        (16, 64, 256, 64, _dtypes.FINEGRAINED_SCALE_AND_ZEROS, "bfloat16"),
        (1, 128, 64, 64, _dtypes.PER_COLUMN_SCALE_ONLY, "float16"),
        (16, 128, 64, 64, _dtypes.PER_COLUMN_SCALE_ONLY, "float16")]
    with pytest.raises(ValueError, match="the module holds no w4a16.nn.Linear"):
        w4a16.tune(torch.nn.Sequential(torch.nn.Linear(64, 64)), progress=False)


def test_capture_buffer_outlives_its_replacement(monkeypatch) -> None:
    """A capture buffer that a capture took stays alive when a larger one replaces it (its graph
    replays against the address); one that no capture took is dropped."""
    ops = w4a16.ops
    monkeypatch.setattr(ops, "_graph_ws", {})
    monkeypatch.setattr(ops, "_graph_ws_captured", set())
    monkeypatch.setattr(ops, "_graph_ws_kept", {})
    cpu = torch.device("cpu")
    assert ops._capture_ws(0) == (0, 0, None)
    ops._grow_graph_ws(0, 256, cpu)
    ptr, nbytes, _ = ops._capture_ws(0)
    assert nbytes == 256
    ops._grow_graph_ws(0, 128, cpu)  # large enough: kept as it is
    assert ops._graph_ws[0].data_ptr() == ptr and not ops._graph_ws_kept
    ops._grow_graph_ws(0, 512, cpu)
    assert ops._graph_ws[0].numel() == 512
    assert [t.data_ptr() for t in ops._graph_ws_kept[0]] == [ptr]
    ops._grow_graph_ws(0, 1024, cpu)  # the 512-byte buffer was never captured
    assert ops._graph_ws[0].numel() == 1024 and len(ops._graph_ws_kept[0]) == 1


# --- on a GPU --------------------------------------------------------------------------------

def make_layer(n: int, k: int, group: int, zp: bool, dtype, device="cuda"):
    """A random quantized layer on device: (QuantizedWeight, float64 dequantized weight)."""
    w = torch.randn(n, k) * 0.05
    qw = w4a16.quantize(w, group_size=group, zero_point=zp, dtype=dtype).to(device)
    return qw, qw.dequantize().double()


def rel_err(x, ref) -> float:
    return ((x.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def tol(dtype) -> float:
    return 1e-2 if dtype == torch.bfloat16 else 2e-3


def supported(n: int, k: int, group: int, zp: bool, dtype) -> Optional[str]:
    mode = (_dtypes.FINEGRAINED_SCALE_AND_ZEROS if zp else
            _dtypes.PER_COLUMN_SCALE_ONLY if group in (-1, k) else _dtypes.FINEGRAINED_SCALE_ONLY)
    return w4a16.nn._refusal(n, k, k if group == -1 else group, mode,
                             _dtypes.canonical_dtype(dtype))


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("group,zp", [(32, False), (64, False), (128, False), (256, False),
                                      (-1, False), (32, True), (64, True), (128, True),
                                      (256, True), (-1, True)])
def test_op_against_float64(dtype, group: int, zp: bool) -> None:
    n, k = 256, 1024
    why = supported(n, k, group, zp, dtype)
    if why:
        pytest.skip(why)
    qw, wref = make_layer(n, k, group, zp, dtype)
    g = -1 if group == -1 else group
    for m in (1, 7, 16, 128, 1000):
        a = torch.randn(m, k, device="cuda").to(dtype)
        bias = torch.randn(n, device="cuda").to(dtype) if m == 7 else None
        alpha = 0.5 if m == 16 else 1.0
        out = torch.full((m, n), float("nan"), dtype=dtype, device="cuda")
        torch.ops.w4a16.gemm.out(a, qw.qweight, qw.scales, qw.zeros, bias, g, alpha, out=out)
        ref = alpha * a.double() @ wref.T + (0 if bias is None else bias.double())
        assert not out.isnan().any(), f"M = {m}: unwritten or NaN outputs"
        assert rel_err(out, ref) < tol(dtype), f"M = {m}: error {rel_err(out, ref):.3g}"
        out2 = torch.ops.w4a16.gemm(a, qw.qweight, qw.scales, qw.zeros, bias, g, alpha)
        assert torch.equal(out, out2)


@gpu
def test_batched_and_strided_a_and_empty() -> None:
    dtype, n, k = torch.bfloat16, 512, 768
    qw, wref = make_layer(n, k, 128, False, dtype)
    a = torch.randn(3, 5, k, device="cuda").to(dtype)
    out = torch.ops.w4a16.gemm(a, qw.qweight, qw.scales, None, None, 128)
    assert out.shape == (3, 5, n)
    assert rel_err(out, a.double() @ wref.T) < tol(dtype)
    big = torch.randn(37, 2 * k, device="cuda").to(dtype)
    strided = big[:, :k]                                  # row stride 2K
    out = torch.ops.w4a16.gemm(strided, qw.qweight, qw.scales, None, None, 128)
    assert rel_err(out, strided.double() @ wref.T) < tol(dtype)
    wide = torch.full((37, 2 * n), float("nan"), dtype=dtype, device="cuda")
    torch.ops.w4a16.gemm.out(strided, qw.qweight, qw.scales, None, None, 128, out=wide[:, :n])
    assert wide[:, n:].isnan().all(), "wrote outside out's [M, N] elements"
    assert rel_err(wide[:, :n], strided.double() @ wref.T) < tol(dtype)
    empty = torch.ops.w4a16.gemm(a[:0], qw.qweight, qw.scales, None, None, 128)
    assert empty.shape == (0, 5, n)


@gpu
def test_opcheck() -> None:
    dtype, n, k = torch.float16, 256, 512
    qw, _ = make_layer(n, k, 64, True, dtype)
    a = torch.randn(9, k, device="cuda").to(dtype)
    bias = torch.randn(n, device="cuda").to(dtype)
    torch.library.opcheck(torch.ops.w4a16.gemm.default,
                          (a, qw.qweight, qw.scales, qw.zeros, bias, 64, 1.0))
    out = torch.empty(9, n, dtype=dtype, device="cuda")
    torch.library.opcheck(torch.ops.w4a16.gemm.out,
                          (a, qw.qweight, qw.scales, None, None, 64, 2.0), {"out": out})


@gpu
def test_torch_compile_fullgraph() -> None:
    dtype, n, k = torch.bfloat16, 512, 1024
    qw, wref = make_layer(n, k, 128, False, dtype)

    def f(x):  # the op between compiled elementwise code: x * 2 is exact, so the GEMM is too
        y = torch.ops.w4a16.gemm(x * 2.0, qw.qweight, qw.scales, None, None, 128)
        return y, torch.nn.functional.silu(y)

    cf = torch.compile(f, fullgraph=True, dynamic=False)
    for m in (1, 16, 33):
        x = torch.randn(m, k, device="cuda").to(dtype)
        (yc, sc), (ye, se) = cf(x), f(x)
        assert torch.equal(yc, ye)
        assert rel_err(sc, se.double()) < 1e-2  # inductor's silu may round differently
        assert rel_err(yc, 2.0 * x.double() @ wref.T) < tol(dtype)
    lin = w4a16.nn.Linear.from_quantized(qw)
    cl = torch.compile(lin, fullgraph=True)
    x = torch.randn(4, k, device="cuda").to(dtype)
    assert torch.equal(cl(x), lin(x))


@gpu
def test_cuda_graph_capture_and_replay() -> None:
    dtype, n, k = torch.bfloat16, 4096, 4096
    qw, wref = make_layer(n, k, 128, False, dtype)
    static_x = torch.randn(16, k, device="cuda").to(dtype)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):                           # warm-up: selection and workspace
        for _ in range(2):
            torch.ops.w4a16.gemm(static_x, qw.qweight, qw.scales, None, None, 128)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = torch.ops.w4a16.gemm(static_x, qw.qweight, qw.scales, None, None, 128)
    for _ in range(3):
        static_x.copy_(torch.randn(16, k, device="cuda").to(dtype))
        static_y.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert rel_err(static_y, static_x.double() @ wref.T) < tol(dtype)
    # a capture with no eager call before it (workspace reserved explicitly)
    w4a16.ops.reserve_workspace(64 << 20)
    qw2, wref2 = make_layer(8192, 1024, 64, True, dtype)
    x2 = torch.randn(64, 1024, device="cuda").to(dtype)
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2):
        y2 = torch.ops.w4a16.gemm(x2, qw2.qweight, qw2.scales, qw2.zeros, None, 64)
    g2.replay()
    torch.cuda.synchronize()
    assert rel_err(y2, x2.double() @ wref2.T) < tol(dtype)


@gpu
def test_graph_replays_after_the_capture_buffer_grew(monkeypatch) -> None:
    """A graph captured with the capture buffer replays correctly, and writes nothing outside
    it, after a larger eager call replaced that buffer and the cache was emptied."""
    monkeypatch.setattr(w4a16.ops, "_graph_ws", {})
    monkeypatch.setattr(w4a16.ops, "_graph_ws_captured", set())
    monkeypatch.setattr(w4a16.ops, "_graph_ws_kept", {})
    dtype, n, k = torch.bfloat16, 256, 1024
    qw, wref = make_layer(n, k, 128, False, dtype)
    perm = torch.randperm(k).to(torch.int32).cuda()  # act-order: the gathered A in the workspace
    x = torch.randn(16, k, device="cuda").to(dtype)
    torch.ops.w4a16.gemm(x, qw.qweight, qw.scales, None, None, 128, 1.0, perm)  # sizes the buffer
    old = w4a16.ops._graph_ws[torch.cuda.current_device()]
    old_bytes = old.numel()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.ops.w4a16.gemm(x, qw.qweight, qw.scales, None, None, 128, 1.0, perm)
    x_big = torch.randn(512, k, device="cuda").to(dtype)
    torch.ops.w4a16.gemm(x_big, qw.qweight, qw.scales, None, None, 128, 1.0, perm)  # grows it
    assert w4a16.ops._graph_ws[torch.cuda.current_device()].numel() > old_bytes
    del old
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    fillers = [torch.full((old_bytes,), 7, dtype=torch.uint8, device="cuda") for _ in range(4)]
    y.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    assert rel_err(y, x.double()[:, perm.long()] @ wref.T) < tol(dtype)
    assert all(bool((f == 7).all()) for f in fillers), "the replay wrote into freed memory"


@gpu
def test_side_stream() -> None:
    dtype, n, k = torch.float16, 1024, 2048
    qw, wref = make_layer(n, k, 128, True, dtype)
    x = torch.randn(256, k, device="cuda").to(dtype)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = torch.ops.w4a16.gemm(x, qw.qweight, qw.scales, qw.zeros, None, 128)
        y = y + 1.0
    torch.cuda.current_stream().wait_stream(s)
    assert rel_err(y - 1.0, x.double() @ wref.T) < 5 * tol(dtype)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_mlp_replacement_matches_dequantized_twin(dtype) -> None:
    torch.manual_seed(int.from_bytes(np.random.bytes(4), "little"))
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(),
                                torch.nn.Linear(1024, 512)).to("cuda", dtype)
    qmodel = torch.nn.Sequential(*[m for m in model])  # same modules, swapped in place below
    report = w4a16.nn.replace_linears(qmodel, group_size=64)
    assert report.replaced == ["0", "2"] and not report.skipped
    twin = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(),
                               torch.nn.Linear(1024, 512)).to("cuda", torch.float64)
    with torch.no_grad():
        for i in (0, 2):
            twin[i].weight.copy_(qmodel[i].qweight_info().dequantize().double())
            twin[i].bias.copy_(qmodel[i].bias.double())
    x = torch.randn(33, 512, device="cuda").to(dtype)
    with torch.no_grad():
        y, ref = qmodel(x), twin(x.double())
    assert rel_err(y, ref) < 2 * tol(dtype)


@gpu
def test_act_order_gather() -> None:
    dtype, n, k = torch.bfloat16, 256, 512
    qw, _ = make_layer(n, k, 128, False, dtype)
    perm = torch.randperm(k, device="cuda")
    pq = w4a16.QuantizedWeight(qw.qweight, qw.scales, group_size=128, n=n, k=k, dtype=dtype,
                               perm=perm)
    lin = w4a16.nn.Linear.from_quantized(pq)
    x = torch.randn(5, k, device="cuda").to(dtype)
    ref = x.double() @ pq.dequantize().double().T
    assert rel_err(lin(x), ref) < tol(dtype)


def _bad_cases(dtype) -> Tuple:
    n, k = 256, 512
    qw, _ = make_layer(n, k, 128, False, dtype)
    a = torch.randn(8, k, device="cuda").to(dtype)
    cases = [
        ("wrong dtype", (a.float(), qw.qweight, qw.scales), TypeError, "a has dtype"),
        ("w on the CPU", (a, qw.qweight.cpu(), qw.scales), ValueError, "w is on cpu"),
        ("K mismatch", (a[:, :256], qw.qweight, qw.scales), ValueError, "K = 256"),
        ("non-contiguous a", (a.t().contiguous().t(), qw.qweight, qw.scales), ValueError,
         "must be contiguous"),
        ("row stride not a multiple of 8",
         (torch.randn(8, k + 4, device="cuda").to(dtype)[:, :k], qw.qweight, qw.scales),
         ValueError, "row stride of 516"),
        ("misaligned a", (torch.randn(8 * k + 8, device="cuda").to(dtype)[4:4 + 8 * k].view(8, k),
                          qw.qweight, qw.scales), w4a16.W4A16Error, "MISALIGNED"),
        ("non-contiguous scales", (a, qw.qweight, qw.scales.t().contiguous().t()), ValueError,
         "scales"),
    ]
    return n, cases


@gpu
def test_bad_inputs_leave_output_untouched() -> None:
    dtype = torch.bfloat16
    n, cases = _bad_cases(dtype)
    for what, args, exc, msg in cases:
        out = torch.full((args[0].shape[0], n), float("nan"), dtype=dtype, device="cuda")
        with pytest.raises(exc, match=msg):
            torch.ops.w4a16.gemm.out(*args, None, None, 128, out=out)
        torch.cuda.synchronize()
        assert out.isnan().all(), f"{what}: the output was written"
    a = torch.randn(8, 512, device="cuda").to(dtype)
    qw, _ = make_layer(n, 512, 128, False, dtype)
    out = torch.full((8, n), float("nan"), dtype=torch.float16, device="cuda")
    with pytest.raises(TypeError, match="out has dtype torch.float16"):
        torch.ops.w4a16.gemm.out(a, qw.qweight, qw.scales, None, None, 128, out=out)
    with pytest.raises(ValueError, match="out has shape"):
        torch.ops.w4a16.gemm.out(a, qw.qweight, qw.scales, None, None, 128,
                                 out=torch.empty(8, n + 16, dtype=dtype, device="cuda"))
    assert math.isnan(out[0, 0].item())


@gpu
def test_no_kernel_raises_w4a16_error() -> None:
    """A shape no kernel of the build implements raises NO_KERNEL with the library's message
    (or runs, where the build covers it: then it must be right)."""
    dtype, n, k = torch.bfloat16, 80, 1408
    qw, wref = make_layer(n, k, 128, False, dtype)
    a = torch.randn(300, k, device="cuda").to(dtype)
    try:
        out = torch.ops.w4a16.gemm(a, qw.qweight, qw.scales, None, None, 128)
    except w4a16.W4A16Error as e:
        assert e.name == "NO_KERNEL" and "N=80" in e.message
        return
    assert rel_err(out, a.double() @ wref.T) < tol(dtype)


@gpu
def test_tune_stores_a_ranking_the_op_uses(tmp_path, monkeypatch) -> None:
    """w4a16.tune profiles a shape, stores its ranking in the config cache (a fresh file here)
    and the op's kernel-NULL selection then runs (and is right) for that problem."""
    monkeypatch.setenv("W4A16_CACHE_PATH", str(tmp_path / "configs.tsv"))
    res = w4a16.tune([(8, 512, 1024)], group_size=128, dtype="bfloat16", warmup=1,
                     iterations=2, progress=False)
    assert len(res) == 1 and res[0].ranking, res
    name, us = res[0].ranking[0]
    assert name.startswith("w4a16_") and us > 0
    assert name in {k.name for k in w4a16.kernels()}
    qw, wref = make_layer(512, 1024, 128, False, torch.bfloat16)
    x = torch.randn(8, 1024, device="cuda").to(torch.bfloat16)
    out = torch.ops.w4a16.gemm(x, qw.qweight, qw.scales, None, None, 128)
    assert rel_err(out, x.double() @ wref.T) < tol(torch.bfloat16)
    info = w4a16.info()
    assert info["gpu"] is not None and info["gpu"]["sm_count"] > 0
