"""Imported checkpoints on a GPU: the op on GPTQ (v1/v2, act-order), AWQ and compressed-tensors
weights against ``x.double() @ W_ref.double().T``, with W_ref each format's own float64
dequantization (tests/python/ref_packers.py). Skips without torch or a CUDA device."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path
from typing import Tuple

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ref_packers as rp  # noqa: E402
import w4a16  # noqa: E402
from w4a16.checkpoints import (from_awq, from_compressed_tensors, from_gptq,  # noqa: E402
                               load_quantized)

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

N, K = 256, 1024
DTYPES = ["float16", "bfloat16"]
#: (format, symmetric, act-order, group): group -1 is one group per column.
CASES = [("gptq", True, False, 128), ("gptq", False, True, 128), ("gptq", True, True, 32),
         ("gptq", False, False, -1), ("gptq_v2", False, True, 64), ("gptq_v2", True, False, 128),
         ("awq", False, False, 128), ("awq", False, False, 64),
         ("ct", True, False, 128), ("ct", False, True, 128), ("ct", True, False, -1),
         ("ct", False, False, -1)]


def imported_layer(fmt: str, sym: bool, act: bool, group: int, dtype: str
                   ) -> Tuple[w4a16.QuantizedWeight, np.ndarray]:
    """A random checkpoint layer packed by the reference packer and imported: (QuantizedWeight on
    the host, the format's own float64 dequantization [N, K])."""
    rng = np.random.default_rng(zlib.crc32(repr((fmt, sym, act, group, dtype)).encode()))
    g = K if group == -1 else group
    groups = K // g
    g_idx = rp.act_order_g_idx(K, g, rng) if act and group != -1 else np.arange(K) // g
    if fmt == "ct":
        values = rng.integers(-8, 8, (N, K))
        zp = np.zeros((N, groups), np.int64) if sym else rng.integers(-8, 8, (N, groups))
        scale = rp.random_scales((N, groups), rng, dtype)
        packed = rp.ct_pack_to_int32(values)
        zpp = None if sym else rp.ct_pack_to_int32(zp, packed_dim=0)
        qw = from_compressed_tensors(packed, scale, zpp, g_idx if act else None,
                                     group_size=None if group == -1 else g, symmetric=sym,
                                     strategy="channel" if group == -1 else "group", dtype=dtype)
        return qw, rp.ct_dequant(packed, scale, zpp, g_idx, (N, K))
    codes = rng.integers(0, 16, (N, K))
    zeros = np.full((groups, N), 8) if sym else rng.integers(1, 16, (groups, N))
    scales = rp.random_scales((groups, N), rng, dtype)
    if fmt == "awq":
        qweight, qzeros = rp.awq_pack(codes, zeros)
        return (from_awq(qweight, qzeros, scales, group_size=group, dtype=dtype),
                rp.awq_dequant(qweight, qzeros, scales, g))
    v2 = fmt == "gptq_v2"
    qweight, qzeros = rp.gptq_pack(codes, zeros, v2=v2)
    qw = from_gptq(qweight, qzeros, scales, g_idx, group_size=group, sym=sym,
                   checkpoint_format=fmt, dtype=dtype)
    return qw, rp.gptq_dequant(qweight, qzeros, scales, g_idx, v2=v2)


def rel_err(x, ref) -> float:
    return ((x.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def tol(dtype: str) -> float:
    return 1e-2 if dtype == "bfloat16" else 2e-3


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fmt,sym,act,group", CASES)
def test_imported_layer_against_float64(fmt, sym, act, group, dtype):
    qw, wref = imported_layer(fmt, sym, act, group, dtype)
    why = w4a16.nn._refusal(N, K, qw.group_size, qw.mode, qw.dtype)
    if why:
        pytest.skip(why)
    lin = w4a16.nn.Linear.from_quantized(qw.to("cuda"))
    assert (lin.perm is not None) == (act and group != -1)
    w = torch.from_numpy(wref).cuda()
    tdt = getattr(torch, dtype)
    for m in (1, 16, 128):
        x = torch.randn(m, K, device="cuda").to(tdt)
        y = lin(x)
        assert y.dtype == tdt and y.shape == (m, N)
        ref = x.double() @ w.T
        assert not y.isnan().any(), f"M = {m}: NaN outputs"
        assert rel_err(y, ref) < tol(dtype), f"M = {m}: error {rel_err(y, ref):.3g}"


@gpu
@pytest.mark.parametrize("fmt", ["gptq", "awq", "ct"])
def test_loaded_checkpoint_runs_in_a_model(tmp_path, fmt):
    """load_quantized -> replace_linears -> forward of a two-layer MLP, against the float64
    product with each format's own dequantized weights (act-order for GPTQ and
    compressed-tensors)."""
    pytest.importorskip("safetensors")
    import json
    from safetensors.numpy import save_file
    rng = np.random.default_rng(zlib.crc32(fmt.encode()))
    shapes = {"fc1": (512, 1024), "fc2": (1024, 512)}  # name: (N, K)
    g, tensors, refs = 128, {}, {}
    for name, (n, k) in shapes.items():
        groups = k // g
        g_idx = rp.act_order_g_idx(k, g, rng)
        if fmt == "ct":
            values, zp = rng.integers(-8, 8, (n, k)), rng.integers(-8, 8, (n, groups))
            scale = rp.random_scales((n, groups), rng, "float16")
            packed, zpp = rp.ct_pack_to_int32(values), rp.ct_pack_to_int32(zp, packed_dim=0)
            tensors.update({f"{name}.weight_packed": packed, f"{name}.weight_scale": scale,
                            f"{name}.weight_zero_point": zpp,
                            f"{name}.weight_shape": np.array([n, k], np.int64),
                            f"{name}.weight_g_idx": g_idx})
            refs[name] = rp.ct_dequant(packed, scale, zpp, g_idx, (n, k))
            continue
        codes, zeros = rng.integers(0, 16, (n, k)), rng.integers(1, 16, (groups, n))
        scales = rp.random_scales((groups, n), rng, "float16")
        if fmt == "awq":
            qweight, qzeros = rp.awq_pack(codes, zeros)
            refs[name] = rp.awq_dequant(qweight, qzeros, scales, g)
        else:
            qweight, qzeros = rp.gptq_pack(codes, zeros)
            tensors[f"{name}.g_idx"] = g_idx
            refs[name] = rp.gptq_dequant(qweight, qzeros, scales, g_idx)
        tensors.update({f"{name}.qweight": qweight, f"{name}.qzeros": qzeros,
                        f"{name}.scales": scales})
    qc = {"gptq": {"quant_method": "gptq", "bits": 4, "group_size": g, "desc_act": True,
                   "sym": False},
          "awq": {"quant_method": "awq", "bits": 4, "group_size": g, "zero_point": True,
                  "version": "gemm"},
          "ct": {"quant_method": "compressed-tensors", "format": "pack-quantized",
                 "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                     "num_bits": 4, "type": "int", "symmetric": False, "strategy": "group",
                     "group_size": g, "actorder": "group"}}}}}[fmt]
    save_file(tensors, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({"quantization_config": qc}))
    ck = load_quantized(tmp_path)
    model = torch.nn.Sequential()
    model.add_module("fc1", torch.nn.Linear(1024, 512, bias=False, dtype=torch.float16))
    model.add_module("act", torch.nn.ReLU())
    model.add_module("fc2", torch.nn.Linear(512, 1024, bias=False, dtype=torch.float16))
    model = model.cuda()
    report = w4a16.nn.replace_linears(model, ck.quantized)
    assert sorted(report.replaced) == ["fc1", "fc2"], str(report)
    w1, w2 = (torch.from_numpy(refs[n]).cuda() for n in ("fc1", "fc2"))
    for m in (1, 16, 128):
        x = torch.randn(m, 1024, device="cuda").half()
        y = model(x)
        ref = torch.relu(x.double() @ w1.T) @ w2.T
        assert rel_err(y, ref) < 2 * tol("float16"), f"M = {m}: error {rel_err(y, ref):.3g}"
