"""``torch.ops.w4a16.grouped_gemm`` and ``w4a16.moe``: fake shapes, argument errors, routing,
stacked expert weights and ``MoE.from_float``'s quantization (torch, no GPU); then on a GPU the op
against a per-expert float64 reference (both dtypes, every mode, row gather, per-row scales, empty
experts, 0..300 rows an expert; 512 rows an expert on rows gathered first), the status word of bad
offsets, device and layout refusals, CUDA-graph replay with new routing, the MoE layer
against its dequantized weights, and (where ``transformers`` is installed) a tiny Mixtral /
Qwen3-MoE sparse block with its experts replaced."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import w4a16  # noqa: E402
from w4a16 import _lib  # noqa: E402
from w4a16.moe import GroupedQuantizedWeight, MoE, route  # noqa: E402

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DTYPES = [torch.float16, torch.bfloat16]


def meta(*shape: int, dtype=torch.bfloat16):
    return torch.empty(*shape, dtype=dtype, device="meta")


# --- without a GPU ---------------------------------------------------------------------------

def test_grouped_args_layout() -> None:
    fields = [f[0] for f in _lib.GROUPED_ARGS._fields_]
    offs = [getattr(_lib.GROUPED_ARGS, f).offset for f in fields]
    packed = _lib.GROUPED_ARGS_STRUCT
    assert packed.size == ctypes.sizeof(_lib.GROUPED_ARGS)
    # the struct format's field offsets: Q, 7q, 4i, 8Q, f, pad, Q, I, pad
    want = [0] + [8 + 8 * i for i in range(7)] + [64 + 4 * i for i in range(4)] + \
        [80 + 8 * i for i in range(8)] + [144, 152, 160]
    assert offs == want
    vals = (packed.size, 8, 100, 256, 512, 512, 256, 50, 128, 1, 1, 0) + \
        tuple(0x1000 * (i + 1) for i in range(8)) + (0.5, 0x9000, _lib.GEMM_NO_PDL)
    buf = ctypes.create_string_buffer(packed.size)
    packed.pack_into(buf, 0, *vals)
    args = _lib.GROUPED_ARGS.from_buffer_copy(buf.raw)
    assert (args.experts, args.rows, args.a_rows, args.alpha, args.status, args.flags) == \
        (8, 100, 50, 0.5, 0x9000, _lib.GEMM_NO_PDL)
    assert bytes(args) == buf.raw


def test_fake_shapes() -> None:
    a, w, s = meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64)
    off = meta(5, dtype=torch.int32)
    out = torch.ops.w4a16.grouped_gemm(a, w, s, None, off)
    assert out.shape == (7, 64) and out.dtype == torch.bfloat16
    idx = meta(11, dtype=torch.int32)
    out = torch.ops.w4a16.grouped_gemm(a, w, s, meta(4, 2, 64), off, idx,
                                       meta(11, dtype=torch.float32))
    assert out.shape == (11, 64)


@pytest.mark.parametrize("args,msg", [
    ((meta(7, 256, dtype=torch.float32), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64), None,
      meta(5, dtype=torch.int32)), "a has dtype"),
    ((meta(7, 256), meta(4, 64, 100, dtype=torch.uint8), meta(4, 2, 64), None,
      meta(5, dtype=torch.int32)), "w has shape"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(3, 2, 64), None,
      meta(5, dtype=torch.int32)), "scales have shape"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64), None,
      meta(4, dtype=torch.int32)), "offsets have shape"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64), None,
      meta(5, dtype=torch.float32)), "offsets have shape"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64), None,
      meta(5, dtype=torch.int32), meta(9, dtype=torch.int64)), "row_index"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64), None,
      meta(5, dtype=torch.int32), None, meta(6, dtype=torch.float32)), "row_scale"),
    ((meta(2, 7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64), None,
      meta(5, dtype=torch.int32)), r"a has shape \(2, 7, 256\); it must be \[T, K\]"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64, dtype=torch.float16), None,
      meta(5, dtype=torch.int32)), "scales have dtype torch.float16"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64),
      meta(4, 2, 64, dtype=torch.float16), meta(5, dtype=torch.int32)),
     "zeros have shape .* and dtype torch.float16"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64), meta(4, 1, 64),
      meta(5, dtype=torch.int32)), r"zeros have shape \(4, 1, 64\)"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64), None,
      meta(5, dtype=torch.int32), None, None, 128, 1.0, meta(1, dtype=torch.int64)),
     "status has dtype torch.int64"),
    ((meta(7, 256), meta(4, 64, 128, dtype=torch.uint8), meta(4, 2, 64), None,
      meta(5, dtype=torch.int32), None, None, 128, 1.0, meta(0, dtype=torch.int32)),
     "status .* 0 elements"),
])
def test_bad_arguments(args, msg) -> None:
    with pytest.raises((ValueError, TypeError), match=msg):
        torch.ops.w4a16.grouped_gemm(*args)


def test_route() -> None:
    ids = torch.tensor([[2, 0], [2, 3], [0, 2]])
    order, offsets, row_index = route(ids, 5)
    assert offsets.tolist() == [0, 2, 2, 5, 6, 6]
    flat = ids.reshape(-1)
    assert flat[order].tolist() == [0, 0, 2, 2, 2, 3]
    assert row_index.tolist() == (order // 2).tolist()


def test_grouped_weight_stack_and_checks() -> None:
    """stack keeps each expert's bits (expert(i) and dequantize give back what quantize made);
    mismatched experts, act-order, an empty list and bad shapes are refused by name."""
    g = torch.Generator().manual_seed(int(np.random.default_rng().integers(1 << 31)))
    ws = [torch.randn(64, 256, generator=g) * 0.05 for _ in range(3)]
    qs = [w4a16.quantize(w, group_size=64, zero_point=True, dtype="bfloat16") for w in ws]
    gw = GroupedQuantizedWeight.stack(qs)
    assert (gw.experts, tuple(gw.qweight.shape), tuple(gw.scales.shape)) == \
        (3, (3, 64, 128), (3, 4, 64))
    for i, q in enumerate(qs):
        assert torch.equal(gw.expert(i).qweight, torch.as_tensor(q.qweight))
        assert torch.equal(gw.dequantize()[i], torch.as_tensor(q.dequantize()))
    with pytest.raises(ValueError, match="no weights"):
        GroupedQuantizedWeight.stack([])
    other = w4a16.quantize(ws[0], group_size=128, zero_point=True, dtype="bfloat16")
    with pytest.raises(ValueError, match="expert 1 is .*group 128"):
        GroupedQuantizedWeight.stack([qs[0], other])
    q = qs[1]
    permuted = w4a16.QuantizedWeight(q.qweight, q.scales, q.zeros, group_size=64, n=64, k=256,
                                     perm=np.arange(256))
    with pytest.raises(ValueError, match="expert 1 has an act-order permutation"):
        GroupedQuantizedWeight.stack([qs[0], permuted])
    with pytest.raises(ValueError, match=r"qweight has shape \(3, 64, 128\), expected \[E, N, "
                                         r"K/2\] = \[3, 64, 64\]"):
        GroupedQuantizedWeight(gw.qweight, gw.scales, gw.zeros, group_size=64, n=64, k=128)
    with pytest.raises(ValueError, match=r"zeros have shape \(3, 2, 64\), expected"):
        GroupedQuantizedWeight(gw.qweight, gw.scales, gw.zeros[:, :2], group_size=64, n=64,
                               k=256)


def test_moe_from_float_and_shape_check() -> None:
    """from_float quantizes each expert as w4a16.quantize does (gate rows then up rows);
    gate_up and down of mismatched shapes are refused."""
    g = torch.Generator().manual_seed(int(np.random.default_rng().integers(1 << 31)))
    e, hid, inter = 2, 128, 64
    gate, up = (torch.randn(e, inter, hid, generator=g) * 0.05 for _ in range(2))
    down = torch.randn(e, hid, inter, generator=g) * 0.05
    moe = MoE.from_float(gate, up, down, group_size=64)
    assert (moe.experts, moe.hidden, moe.inter) == (e, hid, inter)
    for x in range(e):
        want = w4a16.quantize(torch.cat([gate[x], up[x]]), group_size=64, dtype="bfloat16")
        assert torch.equal(moe.gate_up_weight().dequantize()[x],
                           torch.as_tensor(want.dequantize()))
        want = w4a16.quantize(down[x], group_size=64, dtype="bfloat16")
        assert torch.equal(moe.down_weight().expert(x).qweight, torch.as_tensor(want.qweight))
    narrow = GroupedQuantizedWeight.stack(
        [w4a16.quantize(torch.randn(96, hid, generator=g), group_size=64)] * e)
    with pytest.raises(ValueError, match=r"gate_up is \[2, 96, 128\] and down \[2, 128, 64\]"):
        MoE(narrow, moe.down_weight())
    with pytest.raises(ValueError, match=r"gate_up is \[2, 128, 128\] and down \[1, 128, 64\]"):
        MoE(moe.gate_up_weight(), GroupedQuantizedWeight.stack([moe.down_weight().expert(0)]))


# --- on a GPU --------------------------------------------------------------------------------

def _experts(e: int, n: int, k: int, group: int, zp: bool, dtype, seed: int):
    g = torch.Generator().manual_seed(seed)
    qs = [w4a16.quantize(torch.randn(n, k, generator=g) * 0.05, group_size=group, zero_point=zp,
                         dtype=str(dtype).split(".")[-1]) for _ in range(e)]
    return GroupedQuantizedWeight.stack(qs)


def _reference(a, gw, offsets, row_index, row_scale):
    deq = gw.dequantize().double()
    out = torch.full((row_index.numel() if row_index is not None else a.shape[0], gw.n),
                     float("nan"), dtype=torch.float64)
    for e in range(gw.experts):
        lo, hi = int(offsets[e]), int(offsets[e + 1])
        if hi <= lo:
            continue
        rows = a[row_index[lo:hi].long()] if row_index is not None else a[lo:hi]
        y = rows.double() @ deq[e].T
        if row_scale is not None:
            y *= row_scale[lo:hi, None].double()
        out[lo:hi] = y
    return out


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["pc", "fgs", "fgsz"])
@pytest.mark.parametrize("counts", [[0, 1, 5, 16, 17, 0, 33, 2], [0, 0, 300, 0],
                                    [1, 0, 0, 2, 0, 4, 0, 8], list(range(0, 301, 20))])
def test_grouped_op(dtype, mode, counts) -> None:
    e, n, k = len(counts), 256, 512
    group = k if mode == "pc" else 128
    gw = _experts(e, n, k, group, mode == "fgsz", dtype, seed=sum(counts)).to("cuda")
    rows = sum(counts)
    tokens = max(rows // 2, 1) + 3
    a = (torch.randn(tokens, k) * 0.5).to(dtype).cuda()
    offsets = torch.tensor([0] + list(np.cumsum(counts)), dtype=torch.int32).cuda()
    row_index = torch.randint(0, tokens, (rows,), dtype=torch.int32).cuda()
    row_scale = torch.rand(rows).cuda()
    status = torch.full((1,), 77, dtype=torch.int32, device="cuda")
    g = -1 if mode == "pc" else group
    out = torch.ops.w4a16.grouped_gemm(a, gw.qweight, gw.scales, gw.zeros, offsets, row_index,
                                       row_scale, g, 1.0, status)
    ref = _reference(a.cpu(), gw.to("cpu"), offsets.cpu(), row_index.cpu(), row_scale.cpu())
    tol = 2e-3 if dtype == torch.float16 else 1e-2
    err = (out.cpu().double() - ref).norm() / ref.norm()
    assert err < tol, f"relative error {err:.3g}"
    assert int(status) == 0
    # int64 offsets, A in grouped order, no row scale
    a2 = a[row_index.long()].contiguous()
    out2 = torch.ops.w4a16.grouped_gemm(a2, gw.qweight, gw.scales, gw.zeros, offsets.long(), None,
                                        None, g)
    ref2 = _reference(a2.cpu(), gw.to("cpu"), offsets.cpu(), None, None)
    err = (out2.cpu().double() - ref2).norm() / ref2.norm()
    assert err < tol, f"relative error {err:.3g}"


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_grouped_op_rows_gathered_first(dtype) -> None:
    """512 rows an expert with a row index: the Hopper form's 256-token tile on rows gathered into
    the op's workspace first; eagerly, in a captured graph (the capture buffer), and in one
    captured without a capture buffer (the selection's in-kernel gather); a bad index reads zeros
    and sets the status word's bit either way."""
    e, n, k, counts = 2, 256, 512, [600, 424]
    gw = _experts(e, n, k, 128, False, dtype, seed=11).to("cuda")
    rows, tokens = sum(counts), 700
    a = (torch.randn(tokens, k) * 0.5).to(dtype).cuda()
    offsets = torch.tensor([0] + list(np.cumsum(counts)), dtype=torch.int32).cuda()
    row_index = torch.randint(0, tokens, (rows,), dtype=torch.int32).cuda()
    row_index[5] = tokens + 3  # out of range: a zero row, BAD_ROW_INDEX
    status = torch.full((1,), 77, dtype=torch.int32, device="cuda")
    ref = _reference(a.cpu(), gw.to("cpu"), offsets.cpu(), row_index.clamp(max=tokens - 1).cpu(),
                     None)
    ref[5] = 0.0
    tol = 2e-3 if dtype == torch.float16 else 1e-2

    def call() -> torch.Tensor:
        return torch.ops.w4a16.grouped_gemm(a, gw.qweight, gw.scales, None, offsets, row_index,
                                            None, 128, 1.0, status)

    def check(out: torch.Tensor, what: str) -> None:
        torch.cuda.synchronize()
        err = (out.cpu().double() - ref).norm() / ref.norm()
        assert err < tol, f"{what}: relative error {err:.3g}"
        assert torch.all(out[5] == 0), f"{what}: the row of a bad index is not zero"
        assert int(status) == 4, f"{what}: status {int(status)}"

    eager = call()
    check(eager, "eager")
    index = a.get_device()
    for reserved in (True, False):
        saved = None if reserved else w4a16.ops._graph_ws.pop(index, None)
        try:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = call()
            out.fill_(float("nan"))
            status.fill_(77)
            graph.replay()
            check(out, f"graph, capture buffer {'reserved' if reserved else 'absent'}")
            if reserved:
                assert torch.equal(out, eager)
        finally:
            if saved is not None:
                w4a16.ops._graph_ws[index] = saved


@gpu
def test_bad_offsets_status() -> None:
    gw = _experts(4, 128, 256, 128, False, torch.bfloat16, seed=1).to("cuda")
    a = torch.randn(20, 256, dtype=torch.bfloat16, device="cuda")
    status = torch.zeros(1, dtype=torch.int32, device="cuda")
    for offs, bit in (([0, 10, 5, 15, 20], 1), ([0, 5, 10, 15, 40], 2)):
        out = torch.ops.w4a16.grouped_gemm(a, gw.qweight, gw.scales, None,
                                           torch.tensor(offs, dtype=torch.int32, device="cuda"),
                                           None, None, 128, 1.0, status)
        torch.cuda.synchronize()
        assert int(status) & bit, f"offsets {offs}: status {int(status)}"
        assert out.shape == (20, 128)


@gpu
def test_device_and_layout_errors() -> None:
    """A tensor on another device or not contiguous is refused by name before any launch."""
    gw = _experts(4, 64, 256, 128, False, torch.bfloat16, seed=2).to("cuda")
    a = torch.randn(7, 256, dtype=torch.bfloat16, device="cuda")
    offs = torch.tensor([0, 2, 2, 5, 7], dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match="offsets is on cpu but a is on cuda"):
        torch.ops.w4a16.grouped_gemm(a, gw.qweight, gw.scales, None, offs.cpu())
    strided = gw.scales.transpose(1, 2).contiguous().transpose(1, 2)
    with pytest.raises(ValueError, match=r"scales \(shape \(4, 2, 64\), strides .*\) must be "
                                         "contiguous"):
        torch.ops.w4a16.grouped_gemm(a, gw.qweight, strided, None, offs)


@gpu
def test_graph_replay_new_routing() -> None:
    """One captured graph serves any routing: the offsets and indices are read on the device."""
    e, h, inter, t, k = 8, 256, 128, 16, 2
    gen = torch.Generator().manual_seed(3)
    moe = MoE.from_float(torch.randn(e, inter, h, generator=gen) * 0.05,
                         torch.randn(e, inter, h, generator=gen) * 0.05,
                         torch.randn(e, h, inter, generator=gen) * 0.05, group_size=64,
                         device="cuda")
    x = torch.randn(t, h, dtype=torch.bfloat16, device="cuda")
    ids = torch.randint(0, e, (t, k), device="cuda")
    wts = torch.rand(t, k, device="cuda")
    moe(x, ids, wts)  # warm-up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = moe(x, ids, wts)
    for _ in range(3):
        ids.copy_(torch.randint(0, e, (t, k), device="cuda"))
        wts.copy_(torch.rand(t, k, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        ref = moe(x, ids, wts)
        assert torch.equal(y, ref)


def _moe_reference(moe: MoE, x, ids, wts):
    gu = moe.gate_up_weight().dequantize().cuda()
    dn = moe.down_weight().dequantize().cuda()
    xf = x.float()
    out = torch.zeros_like(xf)
    for j in range(ids.shape[1]):
        for e in range(moe.experts):
            sel = ids[:, j] == e
            if not sel.any():
                continue
            h = xf[sel] @ gu[e].T
            act = torch.nn.functional.silu(h[:, :moe.inter]) * h[:, moe.inter:]
            out[sel] += wts[sel, j, None].float() * (act @ dn[e].T)
    return out


@gpu
@pytest.mark.parametrize("tokens", [1, 5, 64, 300])
def test_moe_layer(tokens) -> None:
    e, h, inter, k = 16, 512, 256, 4
    gen = torch.Generator().manual_seed(tokens)
    moe = MoE.from_float(torch.randn(e, inter, h, generator=gen) * 0.05,
                         torch.randn(e, inter, h, generator=gen) * 0.05,
                         torch.randn(e, h, inter, generator=gen) * 0.05, group_size=128,
                         device="cuda")
    x = torch.randn(tokens, h, dtype=torch.bfloat16, device="cuda")
    logits = torch.randn(tokens, e, device="cuda")
    wts, ids = torch.topk(logits.softmax(-1), k, dim=-1)
    y = moe(x, ids, wts)
    ref = _moe_reference(moe, x, ids, wts)
    err = (y.float() - ref).norm() / ref.norm()
    assert err < 2e-2, f"relative error {err:.3g}"


def _hf_block(kind: str):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    if kind == "mixtral":
        cfg = transformers.MixtralConfig(hidden_size=256, intermediate_size=64,
                                         num_local_experts=8, num_experts_per_tok=2,
                                         num_hidden_layers=1,
                                         num_attention_heads=4, num_key_value_heads=4)
        from transformers.models.mixtral import modeling_mixtral as mod
        block = mod.MixtralSparseMoeBlock(cfg)
    else:
        cfg = transformers.Qwen3MoeConfig(hidden_size=256, moe_intermediate_size=64,
                                          intermediate_size=512, num_experts=16,
                                          num_experts_per_tok=4, num_hidden_layers=1,
                                          num_attention_heads=4, num_key_value_heads=4)
        from transformers.models.qwen3_moe import modeling_qwen3_moe as mod
        block = mod.Qwen3MoeSparseMoeBlock(cfg)
    return block


@gpu
@pytest.mark.parametrize("kind", ["mixtral", "qwen3_moe"])
def test_transformers_block(kind) -> None:
    block = _hf_block(kind)
    with torch.no_grad():  # fused expert parameters may start uninitialized
        for prm in block.parameters():
            prm.normal_(0.0, 0.05)
    block = block.to(torch.bfloat16).cuda().eval()
    ex = block.experts
    if not hasattr(ex, "gate_up_proj") or not hasattr(ex, "down_proj"):
        pytest.skip("this transformers keeps per-expert modules: the fused experts call is needed")
    gu, dn = ex.gate_up_proj.data, ex.down_proj.data
    e = gu.shape[0]
    h = block.gate.weight.shape[1] if hasattr(block.gate, "weight") else gu.shape[-1]
    # hidden 256 and intermediate 64 (2I = 128): the orientation of each fused tensor is unambiguous
    if gu.shape[1] != h:  # [E, 2I, H]
        gate_up = gu
    else:  # [E, H, 2I]
        gate_up = gu.transpose(1, 2)
    down = dn if dn.shape[1] == h else dn.transpose(1, 2)  # [E, H, I]
    inter = down.shape[2]
    moe = MoE.from_float(gate_up[:, :inter], gate_up[:, inter:], down, group_size=64,
                         device="cuda")
    # the same block with the dequantized weights is the reference
    with torch.no_grad():
        deq_gu = moe.gate_up_weight().dequantize().to(torch.bfloat16).cuda()
        deq_dn = moe.down_weight().dequantize().to(torch.bfloat16).cuda()
        gu.copy_(deq_gu if gu.shape[1] != h else deq_gu.transpose(1, 2))
        dn.copy_(deq_dn if dn.shape[1] == h else deq_dn.transpose(1, 2))
    x = torch.randn(2, 7, h, dtype=torch.bfloat16, device="cuda")
    with torch.no_grad():
        ref = block(x)
        ref = ref[0] if isinstance(ref, tuple) else ref
        block.experts = moe
        got = block(x)
        got = got[0] if isinstance(got, tuple) else got
    err = (got.float() - ref.float()).norm() / ref.float().norm()
    assert err < 2e-2, f"{kind}: relative error {err:.3g} (E = {e})"
