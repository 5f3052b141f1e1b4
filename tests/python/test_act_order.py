"""``torch.ops.w4a16.gather_k`` (the act-order gather) and ``w4a16.nn.Linear``'s two gathers:
fake-tensor shapes and argument errors (torch, no GPU), then on a GPU the op against
``index_select`` (a copy: bit-exact) on fresh random data, rows with padding, M = 0, a bad index,
opcheck, torch.compile, CUDA-graph capture, and an act-order Linear against its float64
reference with either gather."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import w4a16  # noqa: E402
from w4a16.nn import Linear  # noqa: E402

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
    with pytest.raises(ValueError, match="gather = 'bogus'"):
        lin(torch.zeros(1, 128, dtype=torch.bfloat16))


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
@pytest.mark.parametrize("gather", ["op", "index_select"])
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
