"""w4a16.parallel: tensor-parallel sharding of 4-bit weights (issue 42).

Without torch (numpy, plain python3): the shards' shapes and bits (an N split is a row slice of
the packed bytes and of the codes; a K split packs the K slice of the codes and, for grouped
weights, equals quantizing the K slice of the float weight; one scale per column is replicated),
the refusals and their messages, and act-order folding checked on dequantized float64 weights: a
Llama MLP computed shard by shard and summed equals the whole MLP.

With torch on the CPU: the torch-tensor path gives the numpy path's bits, and two gloo processes
run ColumnParallelLinear / RowParallelLinear / shard_mlp (the collectives, bias on rank 0) with
the GEMM replaced by its dequantized float64 twin.

With torch on one GPU: the shards run through ``torch.ops.w4a16.gemm`` in turn, concatenated
(column-parallel) or summed (row-parallel), against the unsharded op and float64, for both dtypes
and every mode, act-order folded; an NCCL all-reduce of one rank captured in a CUDA graph with
the op. The two-GPU run is tests/python/tp_mlp.py (torchrun).
"""

from __future__ import annotations

import socket
from typing import Any, Optional, Tuple

import numpy as np
import pytest

import w4a16
from w4a16 import parallel
from w4a16.parallel import fold_act_order, permute_rows, shard, shard_bias

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")
gpu = pytest.mark.skipif(torch is None or not torch.cuda.is_available(), reason="needs a CUDA GPU")

# (group_size, zero_point): per-column scale-only, grouped scale-only, grouped with zeros,
# per-column with zeros, and a small group
MODES = [(None, False), (128, False), (128, True), (None, True), (64, False)]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng()  # fresh data every run


def make(rng: np.random.Generator, n: int, k: int, group: Optional[int], zp: bool,
         dtype: str = "bfloat16") -> Tuple[np.ndarray, w4a16.QuantizedWeight]:
    w = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    return w, w4a16.quantize(w, group_size=group, zero_point=zp, dtype=dtype)


def with_perm(qw: w4a16.QuantizedWeight, perm: np.ndarray) -> w4a16.QuantizedWeight:
    return w4a16.QuantizedWeight(qw.qweight, qw.scales, qw.zeros, group_size=qw.group_size,
                                 n=qw.n, k=qw.k, dtype=qw.dtype, perm=perm)


def block_perm(rng: np.random.Generator, k: int, parts: int) -> np.ndarray:
    """A permutation of 0..k-1 that maps each of parts equal blocks into itself."""
    b = k // parts
    return np.concatenate([i * b + rng.permutation(b) for i in range(parts)])


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


# --- shapes and bits ---------------------------------------------------------------------------

def test_exported() -> None:
    assert w4a16.shard is parallel.shard


@pytest.mark.skipif(torch is not None, reason="torch is installed (python_tests_without_torch "
                                              "hides it)")
def test_modules_without_torch_name_it() -> None:
    with pytest.raises(ImportError, match=r"w4a16.parallel.ColumnParallelLinear needs torch"):
        parallel.ColumnParallelLinear
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        parallel.nothing


@pytest.mark.parametrize("group,zp", MODES)
@pytest.mark.parametrize("ws", [1, 2, 4])
def test_n_split_is_a_row_slice(rng, group, zp, ws) -> None:
    n, k = 256, 512
    w, qw = make(rng, n, k, group, zp)
    codes = qw.codes()
    parts = [shard(qw, r, ws, 0) for r in range(ws)]
    for r, s in enumerate(parts):
        n0, n1 = r * n // ws, (r + 1) * n // ws
        assert (s.n, s.k, s.group_size, s.dtype, s.mode) == (n1 - n0, k, qw.group_size,
                                                              qw.dtype, qw.mode)
        assert np.array_equal(s.qweight, qw.qweight[n0:n1])  # contiguous bytes
        assert np.array_equal(s.codes(), codes[n0:n1])
        assert np.array_equal(s.scales, qw.scales[:, n0:n1])
        assert s.scales.flags.c_contiguous and not np.shares_memory(s.qweight, qw.qweight)
        if zp:
            assert np.array_equal(s.zeros, qw.zeros[:, n0:n1])
        else:
            assert s.zeros is None
        direct = w4a16.quantize(w[n0:n1], group_size=group, zero_point=zp)
        assert np.array_equal(s.qweight, direct.qweight)
        assert np.array_equal(s.scales, direct.scales)
    assert np.array_equal(np.concatenate([s.dequantize() for s in parts]), qw.dequantize())


@pytest.mark.parametrize("group,zp", MODES)
@pytest.mark.parametrize("ws", [1, 2, 4])
def test_k_split_packs_the_k_slice(rng, group, zp, ws) -> None:
    n, k = 128, 1024
    w, qw = make(rng, n, k, group, zp)
    codes = qw.codes()
    per_column = qw.group_size == k
    for r in range(ws):
        k0, k1 = r * k // ws, (r + 1) * k // ws
        s = shard(qw, r, ws, 1)
        assert (s.n, s.k, s.dtype, s.perm) == (n, k1 - k0, qw.dtype, None)
        assert np.array_equal(s.codes(), codes[:, k0:k1])
        assert np.array_equal(s.qweight, w4a16.pack(codes[:, k0:k1]))
        if ws > 1:  # the tiles are row-major: not a column slice of the [N, K/2] bytes
            assert not np.array_equal(s.qweight, qw.qweight[:, k0 // 2:k1 // 2])
        if per_column:  # replicated
            assert s.group_size == k1 - k0 and s.mode == qw.mode
            assert np.array_equal(s.scales, qw.scales)
            if zp:
                assert np.array_equal(s.zeros, qw.zeros)
        else:
            g = qw.group_size
            assert s.group_size == g
            assert np.array_equal(s.scales, qw.scales[k0 // g:k1 // g])
            if zp:
                assert np.array_equal(s.zeros, qw.zeros[k0 // g:k1 // g])
            # round-to-nearest is per group: the shard is the quantized K slice, bit for bit
            direct = w4a16.quantize(w[:, k0:k1], group_size=g, zero_point=zp)
            assert np.array_equal(s.qweight, direct.qweight)
            assert np.array_equal(s.scales, direct.scales)
            if zp:
                assert np.array_equal(s.zeros, direct.zeros)
        assert np.array_equal(s.dequantize(), qw.dequantize()[:, k0:k1])


@pytest.mark.parametrize("group,zp", MODES)
def test_row_parallel_partial_sums(rng, group, zp) -> None:
    """sum over K shards of x_shard @ W_shard.T == x @ W.T (float64, dequantized)."""
    n, k, ws = 64, 1024, 4
    _, qw = make(rng, n, k, group, zp)
    x = rng.standard_normal((7, k))
    ref = x @ qw.dequantize().astype(np.float64).T
    total = np.zeros_like(ref)
    for r in range(ws):
        k0, k1 = r * k // ws, (r + 1) * k // ws
        total += x[:, k0:k1] @ shard(qw, r, ws, 1).dequantize().astype(np.float64).T
    np.testing.assert_allclose(total, ref, rtol=1e-12, atol=1e-12)


def test_act_order_column_parallel_keeps_perm(rng) -> None:
    n, k = 128, 512
    _, qw = make(rng, n, k, 128, False)
    perm = rng.permutation(k)
    pq = with_perm(qw, perm)
    for r in range(2):
        s = shard(pq, r, 2, 0)
        assert np.array_equal(s.perm, perm)
        assert np.array_equal(s.dequantize(), pq.dequantize()[r * 64:(r + 1) * 64])


def test_act_order_within_shards_is_kept_local(rng) -> None:
    n, k, ws = 64, 1024, 4
    _, qw = make(rng, n, k, 128, True)
    perm = block_perm(rng, k, ws)
    pq = with_perm(qw, perm)
    x = rng.standard_normal((3, k))
    total = sum(x[:, r * 256:(r + 1) * 256] @ shard(pq, r, ws, 1).dequantize().T.astype(np.float64)
                for r in range(ws))
    np.testing.assert_allclose(total, x @ pq.dequantize().T.astype(np.float64), rtol=1e-12,
                               atol=1e-12)
    for r in range(ws):
        assert np.array_equal(shard(pq, r, ws, 1).perm, perm[r * 256:(r + 1) * 256] - r * 256)
    with pytest.raises(ValueError, match="fold_act_order"):
        shard(with_perm(qw, rng.permutation(k)), 0, 2, 1)


def test_identity_perm_shards_without_perm(rng) -> None:
    _, qw = make(rng, 64, 512, 128, False)
    s = shard(with_perm(qw, np.arange(512)), 1, 2, 1)
    assert s.perm is None


def test_shard_bias() -> None:
    b = np.arange(64, dtype=np.float32)
    assert np.array_equal(shard_bias(b, 1, 4, 0), b[16:32])
    assert np.array_equal(shard_bias(b, 0, 4, 1), b)
    assert shard_bias(b, 3, 4, 1) is None
    assert shard_bias(None, 0, 2, 0) is None
    out = shard_bias(b, 0, 1, 1)
    assert not np.shares_memory(out, b)


# --- refusals -------------------------------------------------------------------------------

@pytest.mark.parametrize("n,k,group,rank,ws,dim,exc,msg", [
    (64, 512, 128, 0, 5, 0, ValueError, "world_size 5 does not divide N = 64"),
    (96, 512, 128, 0, 4, 0, ValueError, "N = 24 rows, not a multiple of 16"),
    (64, 512, 128, 0, 3, 1, ValueError, "world_size 3 does not divide K = 512"),
    (64, 512, 128, 0, 8, 1, ValueError, "K / world_size = 64 is not a multiple of 128"),
    (64, 512, None, 0, 16, 1, ValueError, "K = 32 columns, not a multiple of 64"),
    (64, 768, 256, 0, 4, 1, ValueError, "K / world_size = 192 is not a multiple of 256"),
    (64, 512, 128, 2, 2, 0, ValueError, "rank 2 is out of range for world_size 2"),
    (64, 512, 128, -1, 2, 1, ValueError, "rank -1 is out of range"),
    (64, 512, 128, 0, 0, 0, ValueError, "world_size 0 is not a positive integer"),
    (64, 512, 128, 0, 2, 2, ValueError, "dim 2 must be 0"),
    (64, 512, 128, True, 2, 0, ValueError, "rank True"),
])
def test_refusals(rng, n, k, group, rank, ws, dim, exc, msg) -> None:
    _, qw = make(rng, n, k, group, False)
    with pytest.raises(exc, match=msg):
        shard(qw, rank, ws, dim)


def test_refusals_other(rng) -> None:
    _, qw = make(rng, 64, 512, 128, False)
    with pytest.raises(ValueError, match=r"groups of group_size 128 would straddle"):
        shard(qw, 0, 8, 1)
    with pytest.raises(TypeError, match="QuantizedWeight, not ndarray"):
        shard(qw.qweight, 0, 2, 0)
    with pytest.raises(ValueError, match=r"perm\[\d+\] = \d+ reads an input column of another"):
        shard(with_perm(qw, rng.permutation(512)), 1, 2, 1)
    bad = with_perm(qw, np.zeros(512, dtype=np.int64))
    with pytest.raises(ValueError, match="perm is not a permutation"):
        shard(bad, 0, 2, 1)
    with pytest.raises(ValueError, match="order is not a permutation"):
        permute_rows(qw, np.arange(63))
    with pytest.raises(ValueError, match="world_size 3 does not divide the bias's N = 64"):
        shard_bias(np.zeros(64, np.float32), 0, 3, 0)
    _, other = make(rng, 128, 256, 128, False)
    with pytest.raises(ValueError, match=r"previous\[0\] has N = 128 outputs but the following "
                                         r"layer has K = 512"):
        fold_act_order([other], with_perm(qw, rng.permutation(512)))
    with pytest.raises(ValueError, match="1 biases given for 2 previous layers"):
        fold_act_order([other, other], qw, [None])
    with pytest.raises(ValueError, match="dim 2 must be 0"):
        shard_bias(np.zeros(64, np.float32), 0, 2, 2)
    with pytest.raises(TypeError, match="order must hold integers, got dtype float64"):
        permute_rows(qw, np.arange(64, dtype=np.float64))


@needs_torch
def test_module_refusals(rng) -> None:
    """A row-parallel layer given the whole input checks its width; shard_mlp names a child
    that is not a w4a16.nn.Linear."""
    from w4a16.parallel import RowParallelLinear, shard_mlp
    qw = make(rng, 64, 256, 64, False)[1]
    row = RowParallelLinear.from_quantized(qw, None, 1, 2, input_is_parallel=False)
    with pytest.raises(ValueError, match="x has 128 features, expected the whole K = 256"):
        row.forward_local(torch.zeros(3, 128, dtype=torch.bfloat16))
    mlp = torch.nn.Module()
    mlp.gate_proj = w4a16.nn.Linear(256, 64)
    mlp.up_proj = torch.nn.Linear(256, 64)
    with pytest.raises(TypeError, match="Module.up_proj is Linear, not a w4a16.nn.Linear"):
        shard_mlp(mlp, 0, 2)
    mlp.up_proj = w4a16.nn.Linear(256, 64)
    with pytest.raises(TypeError, match="Module.down_proj is NoneType"):
        shard_mlp(mlp, 0, 2)


# --- act-order folding ------------------------------------------------------------------------

def test_permute_rows_exact(rng) -> None:
    _, qw = make(rng, 128, 256, 64, True)
    qw = with_perm(qw, rng.permutation(256))
    order = rng.permutation(128)
    p = permute_rows(qw, order)
    assert np.array_equal(p.dequantize(), qw.dequantize()[order])
    assert np.array_equal(p.codes(), qw.codes()[order])
    assert np.array_equal(p.perm, qw.perm)


def mlp64(x: np.ndarray, gate, up, down, bg, bu, bd) -> np.ndarray:
    """The Llama MLP in float64 on dequantized weights (checkpoint order: act-order undone)."""
    d = lambda q: q.dequantize().astype(np.float64)  # noqa: E731
    h = silu(x @ d(gate).T + bg) * (x @ d(up).T + bu)
    return h @ d(down).T + bd


@pytest.mark.parametrize("group,zp", [(128, False), (128, True), (None, False)])
@pytest.mark.parametrize("ws", [2, 4])
def test_fold_act_order_mlp(rng, group, zp, ws) -> None:
    """The folded MLP equals the original, and so does the sum of its shards."""
    hid, inter = 256, 512
    _, gate = make(rng, inter, hid, group, zp)
    _, up = make(rng, inter, hid, group, zp)
    _, down = make(rng, hid, inter, group, zp)
    gate, up = with_perm(gate, rng.permutation(hid)), with_perm(up, rng.permutation(hid))
    down = with_perm(down, rng.permutation(inter))
    bg, bu, bd = (rng.standard_normal(m) * 0.1 for m in (inter, inter, hid))
    x = rng.standard_normal((5, hid))
    ref = mlp64(x, gate, up, down, bg, bu, bd)

    with pytest.raises(ValueError, match="fold_act_order"):
        shard(down, 0, ws, 1)
    (g2, u2), d2, (bg2, bu2) = fold_act_order([gate, up], down, [bg, bu])
    assert d2.perm is None and d2.qweight is down.qweight
    assert np.array_equal(g2.perm, gate.perm)  # gate/up keep their own (column-parallel) perm
    np.testing.assert_allclose(mlp64(x, g2, u2, d2, bg2, bu2, bd), ref, rtol=1e-12, atol=1e-12)

    total = np.zeros_like(ref)
    for r in range(ws):
        gs, us, ds = shard(g2, r, ws, 0), shard(u2, r, ws, 0), shard(d2, r, ws, 1)
        h = (silu(x @ gs.dequantize().astype(np.float64).T + shard_bias(bg2, r, ws, 0))
             * (x @ us.dequantize().astype(np.float64).T + shard_bias(bu2, r, ws, 0)))
        part = h @ ds.dequantize().astype(np.float64).T
        b = shard_bias(bd, r, ws, 1)
        total += part if b is None else part + b
    np.testing.assert_allclose(total, ref, rtol=1e-11, atol=1e-12)


def test_fold_without_perm_is_a_no_op(rng) -> None:
    _, gate = make(rng, 128, 64, 64, False)
    _, down = make(rng, 64, 128, 64, False)
    prev, d2, bs = fold_act_order([gate], down)
    assert prev[0] is gate and d2 is down and bs == [None]


# --- torch on the CPU -------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("group,zp", MODES)
def test_torch_tensors_same_bits(rng, group, zp) -> None:
    w, qw = make(rng, 128, 512, group, zp, "float16")
    tq = qw.to_torch()
    perm = rng.permutation(128)
    for dim in (0, 1):
        for r in range(2):
            a, b = shard(qw, r, 2, dim), shard(tq, r, 2, dim)
            assert b.is_torch and b.scales.dtype == torch.float16
            assert b.qweight.is_contiguous() and b.scales.is_contiguous()
            assert np.array_equal(a.qweight, b.qweight.numpy())
            assert np.array_equal(a.scales, b.scales.float().numpy())
    p_np, p_t = permute_rows(qw, perm), permute_rows(tq, torch.from_numpy(perm))
    assert np.array_equal(p_np.qweight, p_t.qweight.numpy())
    assert np.array_equal(p_np.scales, p_t.scales.float().numpy())
    bias = torch.arange(128, dtype=torch.float16)
    _, _, (b2,) = fold_act_order([tq], with_perm(make(rng, 64, 128, 64, False)[1],
                                                 perm).to_torch(), [bias])
    assert torch.equal(b2, bias[torch.from_numpy(perm)])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gloo_worker(rank: int, world: int, port: int, payload: Any, results: Any) -> None:
    """One gloo rank: the parallel modules with the GEMM replaced by its float64 twin."""
    import torch.distributed as dist
    import w4a16.nn
    from w4a16.parallel import ColumnParallelLinear, RowParallelLinear, shard_mlp

    def twin(self: Any, x: Any) -> Any:  # x @ dequant(W).T + bias in float64 (perm undone)
        y = x.double() @ self.qweight_info().dequantize().double().T
        return y if self.bias is None else y + self.bias.double()

    w4a16.nn.Linear.forward = twin
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    try:
        gate, up, down, plain_down, bg, bu, bd, x = payload
        col = ColumnParallelLinear.from_quantized(gate, bg, gather_output=True)
        row = RowParallelLinear.from_quantized(plain_down, bd, input_is_parallel=False)
        assert (row.local.bias is None) == (rank != 0)
        mlp = torch.nn.Module()
        mlp.gate_proj, mlp.up_proj, mlp.down_proj = (
            w4a16.nn.Linear.from_quantized(q, b) for q, b in ((gate, bg), (up, bu), (down, bd)))
        shard_mlp(mlp)
        h = (torch.nn.functional.silu(mlp.gate_proj(x)) * mlp.up_proj(x))
        results[rank] = (col(x), row(torch.randn(2, down.k, generator=torch.Generator()
                                                 .manual_seed(7)).double()), mlp.down_proj(h))
    finally:
        dist.destroy_process_group()


@needs_torch
def test_gloo_two_ranks(rng) -> None:
    """Collectives and bias placement of the modules, on two CPU processes (gloo)."""
    import torch.multiprocessing as mp
    hid, inter, world = 128, 256, 2
    gate, up, down = (make(rng, n, k, 64, False)[1].to_torch()
                      for n, k in ((inter, hid), (inter, hid), (hid, inter)))
    plain_down = down
    down = with_perm(down, torch.from_numpy(rng.permutation(inter)))  # folded by shard_mlp
    bg, bu, bd = (torch.randn(m, dtype=torch.float64).to(torch.bfloat16)
                  for m in (inter, inter, hid))
    x = torch.randn(3, hid, dtype=torch.float64)
    manager = mp.Manager()
    results = manager.dict()
    mp.spawn(_gloo_worker, args=(world, _free_port(), (gate, up, down, plain_down, bg, bu, bd, x),
                                        results),
             nprocs=world, join=True)
    d = lambda q: q.dequantize().double()  # noqa: E731
    col_ref = x @ d(gate).T + bg.double()
    xr = torch.randn(2, inter, generator=torch.Generator().manual_seed(7)).double()
    row_ref = xr @ d(plain_down).T + bd.double()
    h = torch.nn.functional.silu(x @ d(gate).T + bg.double()) * (x @ d(up).T + bu.double())
    mlp_ref = h @ d(down).T + bd.double()
    for r in range(world):
        col, row, mlp = results[r]
        torch.testing.assert_close(col, col_ref, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(row, row_ref, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(mlp, mlp_ref, rtol=1e-11, atol=1e-11)


@needs_torch
def test_modules_without_distributed_need_rank() -> None:
    from w4a16.parallel import ColumnParallelLinear
    qw = make(np.random.default_rng(0), 64, 128, 64, False)[1]
    with pytest.raises(ValueError, match="rank and world_size are needed"):
        ColumnParallelLinear.from_quantized(qw)
    mod = ColumnParallelLinear.from_quantized(qw, None, 1, 2)
    assert (mod.out_start, mod.out_stop, mod.out_features, mod.in_features) == (32, 64, 64, 128)


# --- one GPU: the shards through the op ---------------------------------------------------------

def rel_err(x: Any, ref: Any) -> float:
    return ((x.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


@gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("group,zp", MODES)
def test_gpu_shards_in_turn(rng, dtype, group, zp) -> None:
    """Column shards concatenated and row shards summed (fp32) equal the unsharded op."""
    from w4a16.parallel import ColumnParallelLinear, RowParallelLinear
    tdt = getattr(torch, dtype)
    tol = 1e-2 if dtype == "bfloat16" else 2e-3
    n, k, ws, m = 512, 1024, 2, 9
    qw = make(rng, n, k, group, zp, dtype)[1].to("cuda")
    bias = (torch.randn(n, device="cuda") * 0.1).to(tdt)
    x = torch.randn(m, k, device="cuda").to(tdt)
    whole = w4a16.nn.Linear.from_quantized(qw, bias)(x)
    ref = x.double() @ qw.dequantize().double().T + bias.double()
    assert rel_err(whole, ref) < tol
    col = torch.cat([ColumnParallelLinear.from_quantized(qw, bias, r, ws).forward_local(x)
                     for r in range(ws)], dim=-1)
    assert rel_err(col, whole.double()) < tol and rel_err(col, ref) < tol
    row = sum(RowParallelLinear.from_quantized(qw, bias, r, ws, input_is_parallel=False)
              .forward_local(x).float() for r in range(ws))
    assert rel_err(row, whole.double()) < tol and rel_err(row, ref) < tol


@gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("group,zp", [(128, False), (128, True), (None, False)])
def test_gpu_mlp_act_order_folded(rng, dtype, group, zp) -> None:
    """An act-order Llama MLP sharded 4 ways by shard_mlp (down folded), ranks in turn."""
    from w4a16.parallel import shard_mlp
    tdt = getattr(torch, dtype)
    tol = 1e-2 if dtype == "bfloat16" else 2e-3
    hid, inter, ws = 512, 1024, 4
    qs = [make(rng, n_, k_, group, zp, dtype)[1].to("cuda")
          for n_, k_ in ((inter, hid), (inter, hid), (hid, inter))]
    qs = [with_perm(q, torch.randperm(q.k, device="cuda")) for q in qs]
    x = (torch.randn(6, hid, device="cuda")).to(tdt)
    lin = [w4a16.nn.Linear.from_quantized(q) for q in qs]
    d = [q.dequantize().double() for q in qs]
    ref = (torch.nn.functional.silu(x.double() @ d[0].T) * (x.double() @ d[1].T)) @ d[2].T
    whole = lin[2](torch.nn.functional.silu(lin[0](x)) * lin[1](x))
    assert rel_err(whole, ref) < 2 * tol
    total = torch.zeros_like(ref, dtype=torch.float32)
    for r in range(ws):
        mlp = torch.nn.Module()
        mlp.gate_proj, mlp.up_proj, mlp.down_proj = lin
        shard_mlp(mlp, r, ws)
        assert mlp.down_proj.local.perm is None
        h = torch.nn.functional.silu(mlp.gate_proj(x)) * mlp.up_proj(x)  # local: no gather
        total += mlp.down_proj.forward_local(h).float()
    assert rel_err(total, ref) < 2 * tol and rel_err(total, whole.double()) < 2 * tol


@gpu
def test_gpu_refusal_leaves_weight(rng) -> None:
    qw = make(rng, 256, 512, 128, False)[1].to("cuda")
    pq = with_perm(qw, torch.randperm(512, device="cuda"))
    with pytest.raises(ValueError, match="fold_act_order"):
        shard(pq, 0, 2, 1)
    s = shard(pq, 1, 2, 0)
    assert s.qweight.device == qw.qweight.device and torch.equal(s.perm, pq.perm)


@gpu
def test_gpu_nccl_all_reduce_in_graph(rng, monkeypatch) -> None:
    """One NCCL rank: the op and dist.all_reduce captured in one CUDA graph and replayed."""
    import torch.distributed as dist
    from w4a16.parallel import RowParallelLinear
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")  # the lent machines require it
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{_free_port()}", rank=0,
                            world_size=1)
    try:
        qw = make(rng, 256, 512, 128, False)[1].to("cuda")
        row = RowParallelLinear.from_quantized(qw, None, 0, 1)
        x = torch.randn(4, 512, device="cuda").to(torch.bfloat16)
        y0 = row(x)
        dist.all_reduce(y0)  # the communicator exists before the capture
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            y = row(x)
            dist.all_reduce(y)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = row(x)
            dist.all_reduce(y)
        x.copy_(torch.randn_like(x))
        g.replay()
        torch.cuda.synchronize()
        assert rel_err(y, row(x).double()) < 4e-3
    finally:
        dist.destroy_process_group()
