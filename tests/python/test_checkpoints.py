"""Checkpoint import without a GPU: GPTQ v1/v2, AWQ GEMM and compressed-tensors against
independent decoders (tests/python/ref_packers.py), act-order, errors, and load_quantized on
small synthetic checkpoint folders (numpy + safetensors; torch only where marked)."""

from __future__ import annotations

import json
import struct
import sys
import zlib
from pathlib import Path
from typing import Dict, Optional, Tuple

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ref_packers as rp  # noqa: E402
import w4a16  # noqa: E402
from w4a16 import _dtypes  # noqa: E402
from w4a16.checkpoints import (from_awq, from_compressed_tensors, from_gptq,  # noqa: E402
                               load_quantized)

N, K = 32, 256
DTYPES = ["float16", "bfloat16"]
GROUPS = [32, 64, 128, -1]


def _rng(*key: object) -> np.random.Generator:
    """A generator seeded by the key (crc32: stable across runs, unlike str hashing)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _g(group: int) -> int:
    return K if group == -1 else group


def _perm_of(g_idx: Optional[np.ndarray]) -> Optional[np.ndarray]:
    return None if g_idx is None else np.argsort(g_idx, kind="stable")


def _check_against(qw: w4a16.QuantizedWeight, ref: np.ndarray, scales_gn: np.ndarray,
                   zq_gn: np.ndarray, g_idx: np.ndarray, dtype: str) -> None:
    """qw.dequantize() equals the reference exactly where every zero is 8, else within the one
    rounding of z = -s * zq to dtype; the integer zeros come back exactly from z / s."""
    w = qw.dequantize()
    assert w.dtype == np.float32 and w.shape == (N, K)
    if np.all(zq_gn == 8):
        assert qw.zeros is None
        np.testing.assert_array_equal(w.astype(np.float64), ref)
        return
    assert qw.zeros is not None
    ulp = 2.0 ** (-11 if dtype == "float16" else -8)
    s = np.asarray(scales_gn, dtype=np.float64)
    bound = (np.abs(s) * zq_gn * ulp)[g_idx].T + 1e-6 * np.abs(ref) + 1e-12
    assert np.all(np.abs(w - ref) <= bound)
    z = np.asarray(qw.zeros, dtype=np.float64)
    np.testing.assert_array_equal(np.rint(-z / s), zq_gn)


# --- known-answer words --------------------------------------------------------------------------

def test_gptq_known_word():
    qweight = np.full((K // 8, N), 0x88888888, dtype=np.uint32)
    qweight[0, 3] = 0x76543210
    qzeros = np.full((K // 64, N // 8), 0x77777777, dtype=np.uint32)  # v1: 7 + 1 = 8
    scales = np.full((K // 64, N), 0.5, dtype=np.float16)
    qw = from_gptq(qweight.view(np.int32), qzeros.view(np.int32), scales, group_size=64)
    codes = w4a16.unpack(qw.qweight, N, K)
    assert codes[3, :8].tolist() == list(range(8))
    assert codes[3, 8:].tolist() == [8] * (K - 8)
    assert qw.zeros is None and qw.mode == w4a16.FINEGRAINED_SCALE_ONLY
    assert qw.dequantize()[3, :8].tolist() == [0.5 * (i - 8) for i in range(8)]


def test_gptq_v1_stored_zero_15_means_16():
    qweight = np.full((K // 8, N), 0x76543210, dtype=np.uint32).view(np.int32)
    qzeros = np.full((1, N // 8), 0xFFFFFFFF, dtype=np.uint32).view(np.int32)
    scales = np.full((1, N), 0.25, dtype=np.float16)
    qw = from_gptq(qweight, qzeros, scales, group_size=-1, sym=False)
    assert qw.group_size == K and qw.mode == w4a16.FINEGRAINED_SCALE_AND_ZEROS
    np.testing.assert_array_equal(qw.zeros, np.full((1, N), -4.0))
    assert qw.dequantize()[0, :8].tolist() == [0.25 * (i - 16) for i in range(8)]
    v2 = from_gptq(qweight, qzeros, scales, group_size=-1, sym=False,
                   checkpoint_format="gptq_v2")
    np.testing.assert_array_equal(v2.zeros, np.full((1, N), -3.75))


def test_awq_known_word():
    qweight = np.zeros((K, N // 8), dtype=np.uint32)
    qweight[5, 1] = 0x76543210
    qzeros = np.full((K // 128, N // 8), 0x88888888, dtype=np.uint32)
    scales = np.ones((K // 128, N), dtype=np.float16)
    qw = from_awq(qweight.view(np.int32), qzeros.view(np.int32), scales, group_size=128)
    codes = w4a16.unpack(qw.qweight, N, K)
    assert codes[8:16, 5].tolist() == [0, 4, 1, 5, 2, 6, 3, 7]
    assert qw.zeros is None  # every zero point is 8


def test_compressed_tensors_known_word():
    packed = np.full((N, K // 8), 0x88888888, dtype=np.uint32)
    packed[2, 1] = 0x76543210
    scale = np.full((N, K // 32), 2.0, dtype=np.float32)
    qw = from_compressed_tensors(packed.view(np.int32), scale, group_size=32)
    codes = w4a16.unpack(qw.qweight, N, K)
    assert codes[2, 8:16].tolist() == list(range(8))
    assert qw.dtype == "bfloat16" and qw.zeros is None
    assert qw.dequantize()[2, 8:16].tolist() == [2.0 * (i - 8) for i in range(8)]


# --- random words against the formats' own decoders --------------------------------------------

def _act_g_idx(act: bool, group: int, rng: np.random.Generator) -> np.ndarray:
    g = _g(group)
    return rp.act_order_g_idx(K, g, rng) if act else (np.arange(K) // g).astype(np.int32)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("fmt", ["gptq", "gptq_v2"])
@pytest.mark.parametrize("act", [False, True])
def test_gptq_random(dtype, group, sym, fmt, act):
    rng = _rng("gptq", dtype, group, sym, fmt, act)
    g = _g(group)
    groups = K // g
    codes = rng.integers(0, 16, (N, K))
    zeros = np.full((groups, N), 8) if sym else rng.integers(1 if fmt == "gptq" else 0, 17,
                                                             (groups, N))
    if fmt == "gptq_v2":
        zeros = np.minimum(zeros, 15)
    scales = rp.random_scales((groups, N), rng, dtype)
    g_idx = _act_g_idx(act, group, rng)
    qweight, qzeros = rp.gptq_pack(codes, zeros, v2=(fmt == "gptq_v2"))
    ref = rp.gptq_dequant(qweight, qzeros, scales, g_idx, v2=(fmt == "gptq_v2"))
    qw = from_gptq(qweight, qzeros, scales, g_idx if act or rng.random() < 0.5 else None,
                   group_size=group, sym=sym, checkpoint_format=fmt, dtype=dtype)
    assert (qw.n, qw.k, qw.group_size, qw.dtype) == (N, K, g, dtype)
    perm = _perm_of(g_idx) if act and group != -1 else None
    if perm is None:
        assert qw.perm is None
        np.testing.assert_array_equal(qw.codes(), codes)
    else:
        np.testing.assert_array_equal(qw.perm, perm)
        np.testing.assert_array_equal(qw.codes(), codes[:, perm])
    _check_against(qw, ref, np.asarray(scales, np.float32), zeros, g_idx, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("sym", [True, False])
def test_awq_random(dtype, group, sym):
    rng = _rng("awq", dtype, group, sym)
    g = _g(group)
    groups = K // g
    codes = rng.integers(0, 16, (N, K))
    zeros = np.full((groups, N), 8) if sym else rng.integers(0, 16, (groups, N))
    scales = rp.random_scales((groups, N), rng, dtype)
    qweight, qzeros = rp.awq_pack(codes, zeros)
    ref = rp.awq_dequant(qweight, qzeros, scales, g)
    qw = from_awq(qweight, qzeros, scales, group_size=group, dtype=dtype)
    np.testing.assert_array_equal(qw.codes(), codes)
    assert qw.perm is None
    _check_against(qw, ref, np.asarray(scales, np.float32), zeros,
                   np.arange(K) // g, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("act", [False, True])
def test_compressed_tensors_random(dtype, group, sym, act):
    rng = _rng("ct", dtype, group, sym, act)
    g = _g(group)
    groups = K // g
    values = rng.integers(-8, 8, (N, K))
    zp = np.zeros((N, groups), dtype=np.int64) if sym else rng.integers(-8, 8, (N, groups))
    scale = rp.random_scales((N, groups), rng, dtype)
    g_idx = _act_g_idx(act, group, rng)
    packed = rp.ct_pack_to_int32(values)
    zp_packed = None if sym else rp.ct_pack_to_int32(zp, packed_dim=0)
    ref = rp.ct_dequant(packed, scale, zp_packed, g_idx, (N, K))
    strategy = "channel" if group == -1 else "group"
    qw = from_compressed_tensors(packed, scale, zp_packed, g_idx if act else None,
                                 weight_shape=np.array([N, K], dtype=np.int64),
                                 group_size=None if group == -1 else group, symmetric=sym,
                                 strategy=strategy, dtype=dtype)
    assert qw.group_size == g
    perm = _perm_of(g_idx) if act and group != -1 else None
    stored = values + 8 if perm is None else (values + 8)[:, perm]
    np.testing.assert_array_equal(qw.codes(), stored)
    _check_against(qw, ref, np.asarray(scale, np.float32).T, (zp + 8).T, g_idx, dtype)


def test_compressed_tensors_unpacked_zero_points():
    rng = _rng("ct-unpacked")
    values = rng.integers(-8, 8, (N, K))
    zp = rng.integers(-8, 8, (N, 2)).astype(np.int8)
    scale = rp.random_scales((N, 2), rng, "bfloat16")
    packed = rp.ct_pack_to_int32(values)
    a = from_compressed_tensors(packed, scale, zp, group_size=128, symmetric=False)
    b = from_compressed_tensors(packed, scale, rp.ct_pack_to_int32(zp, 0), group_size=128,
                                symmetric=False)
    np.testing.assert_array_equal(a.zeros, b.zeros)
    # a symmetric checkpoint's all-zero int8 zero point maps to scale-only
    c = from_compressed_tensors(packed, scale, np.zeros((N, 2), np.int8), group_size=128)
    assert c.zeros is None


def test_scales_of_another_float_type_are_rounded_to_dtype():
    rng = _rng("round")
    codes = rng.integers(0, 16, (N, K))
    qweight, qzeros = rp.gptq_pack(codes, np.full((2, N), 8))
    scales = rng.uniform(0.01, 0.02, (2, N)).astype(np.float32)
    qw = from_gptq(qweight, qzeros, scales, group_size=128, dtype="bfloat16")
    np.testing.assert_array_equal(qw.scales, _dtypes.round_to(scales, "bfloat16"))


# --- act-order ------------------------------------------------------------------------------------

def _act_order_gptq(key: str, dtype: str, g: int = 64):
    """An asymmetric v1 GPTQ layer with act-order: (g_idx, scales, qweight, qzeros)."""
    rng = _rng(key)
    g_idx = rp.act_order_g_idx(K, g, rng)
    codes = rng.integers(0, 16, (N, K))
    zeros = rng.integers(1, 17, (K // g, N))
    scales = rp.random_scales((K // g, N), rng, dtype)
    return (g_idx, scales) + rp.gptq_pack(codes, zeros)


def test_act_order_perm_and_dequantize_in_checkpoint_order():
    g = 64
    g_idx, scales, qweight, qzeros = _act_order_gptq("act", "float16", g)
    qw = from_gptq(qweight, qzeros, scales, g_idx, group_size=g, sym=False)
    perm = np.asarray(qw.perm)
    assert perm.dtype == np.int64 and sorted(perm.tolist()) == list(range(K))
    # stored column j is checkpoint column perm[j], and belongs to group j // g
    np.testing.assert_array_equal(g_idx[perm], np.arange(K) // g)
    # the op sees a[..., perm] against the stored weight: the same product as a @ W_ckpt.T
    a = _rng("act-a").standard_normal((3, K))
    stored = w4a16.QuantizedWeight(qw.qweight, qw.scales, qw.zeros, group_size=g, n=N, k=K,
                                   dtype="float16").dequantize()
    np.testing.assert_allclose(a[:, perm] @ stored.T.astype(np.float64),
                               a @ qw.dequantize().T.astype(np.float64), rtol=1e-10, atol=1e-10)


def test_act_order_unbalanced_groups_refused():
    g_idx = (np.arange(K) // 64).astype(np.int32)
    g_idx[0] = 1  # group 0 holds 63 columns, group 1 holds 65
    qweight, qzeros = rp.gptq_pack(np.zeros((N, K), int), np.full((4, N), 8))
    with pytest.raises(ValueError, match=r"g_idx: group 0 holds 63 columns"):
        from_gptq(qweight, qzeros, np.ones((4, N), np.float16), g_idx, group_size=64)
    g_idx[0] = 9
    with pytest.raises(ValueError, match=r"g_idx\[0\] = 9"):
        from_gptq(qweight, qzeros, np.ones((4, N), np.float16), g_idx, group_size=64)


def test_trivial_g_idx_gives_no_perm():
    qweight, qzeros = rp.gptq_pack(np.zeros((N, K), int), np.full((2, N), 8))
    qw = from_gptq(qweight, qzeros, np.ones((2, N), np.float16),
                   (np.arange(K) // 128).astype(np.int32), group_size=128)
    assert qw.perm is None


# --- bad input ------------------------------------------------------------------------------------

def _gptq_inputs(n: int = N, k: int = K, g: int = 128):
    qweight, qzeros = rp.gptq_pack(np.zeros((n, k), int), np.full((k // g, n), 8))
    return qweight, qzeros, np.ones((k // g, n), np.float16)


def test_errors_name_the_tensor_and_value():
    qweight, qzeros, scales = _gptq_inputs()
    with pytest.raises(ValueError, match=r"bits = 8"):
        from_gptq(qweight, qzeros, scales, group_size=128, bits=8)
    with pytest.raises(ValueError, match=r"scales has shape \(2, 48\)"):
        from_gptq(qweight, qzeros, np.ones((2, 48), np.float16), group_size=128)
    with pytest.raises(ValueError, match=r"qzeros has shape \(2, 3\)"):
        from_gptq(qweight, qzeros[:, :3], scales, group_size=128)
    with pytest.raises(TypeError, match=r"qweight must be int32.*float32"):
        from_gptq(qweight.astype(np.float32), qzeros, scales, group_size=128)
    with pytest.raises(TypeError, match=r"scales must be a float array.*int32"):
        from_gptq(qweight, qzeros, scales.astype(np.int32), group_size=128)
    with pytest.raises(ValueError, match=r"group_size = 96 does not divide K = 256"):
        from_gptq(qweight, qzeros, scales, group_size=96)
    with pytest.raises(ValueError, match=r"4 groups but the scales hold G = 2"):
        from_gptq(qweight, qzeros, scales, group_size=64)
    with pytest.raises(ValueError, match=r"checkpoint_format = 'marlin'"):
        from_gptq(qweight, qzeros, scales, group_size=128, checkpoint_format="marlin")
    with pytest.raises(TypeError, match=r"qzeros is required"):
        from_gptq(qweight, None, scales, group_size=128, sym=False)
    with pytest.raises(TypeError, match=r"not an activation dtype"):
        from_gptq(qweight, qzeros, scales, group_size=128, dtype="float32")



def test_missing_and_malformed_tensors_named():
    """Each layer importer names the tensor that is missing, of the wrong rank or dtype, or of the
    wrong shape, and the config value a strategy lacks."""
    qweight, qzeros, scales = _gptq_inputs()
    with pytest.raises(TypeError, match=r"qweight is required"):
        from_gptq(None, qzeros, scales, group_size=128)
    with pytest.raises(TypeError, match=r"scales is required"):
        from_gptq(qweight, qzeros, None, group_size=128)
    with pytest.raises(ValueError, match=r"qweight must be 2-D"):
        from_gptq(qweight.reshape(-1), qzeros, scales, group_size=128)
    with pytest.raises(TypeError, match=r"g_idx must be an integer array, got dtype float32"):
        from_gptq(qweight, qzeros, scales, np.zeros(K, np.float32), group_size=128)
    with pytest.raises(ValueError, match=r"g_idx has shape \(255,\), expected \[K\] = \[256\]"):
        from_gptq(qweight, qzeros, scales, np.zeros(K - 1, np.int32), group_size=128)
    aw, _ = rp.awq_pack(np.zeros((N, K), int), np.zeros((2, N), int))
    with pytest.raises(TypeError, match=r"qzeros is required"):
        from_awq(aw, None, np.ones((2, N), np.float16), group_size=128)
    packed = rp.ct_pack_to_int32(np.zeros((N, K), int))
    with pytest.raises(ValueError, match=r'weight_scale has shape \(32, 2\): strategy "channel"'):
        from_compressed_tensors(packed, np.ones((N, 2), np.float32), group_size=None,
                                strategy="channel")
    with pytest.raises(ValueError, match=r'group_size = None: strategy "group" needs a group size'):
        from_compressed_tensors(packed, np.ones((N, 2), np.float32), group_size=None)

def test_layout_errors():
    qweight, qzeros, scales = _gptq_inputs(n=8, k=K)
    with pytest.raises(ValueError, match=r"N % 16 == 0 and K % 64 == 0, got N = 8, K = 256"):
        from_gptq(qweight, qzeros, scales, group_size=128)
    qweight, qzeros, scales = _gptq_inputs(n=N, k=96, g=32)
    with pytest.raises(ValueError, match=r"got N = 32, K = 96"):
        from_gptq(qweight, qzeros, scales, group_size=32)


def test_awq_and_ct_errors():
    qweight, qzeros = rp.awq_pack(np.zeros((N, K), int), np.zeros((2, N), int))
    scales = np.ones((2, N), np.float16)
    with pytest.raises(ValueError, match=r"version = 'gemv'"):
        from_awq(qweight, qzeros, scales, group_size=128, version="gemv")
    with pytest.raises(ValueError, match=r"qzeros has shape \(1, 4\)"):
        from_awq(qweight, qzeros[:1], scales, group_size=128)
    packed = rp.ct_pack_to_int32(np.zeros((N, K), int))
    scale = np.ones((N, 2), np.float32)
    with pytest.raises(ValueError, match=r"strategy = 'tensor'"):
        from_compressed_tensors(packed, scale, group_size=128, strategy="tensor")
    with pytest.raises(ValueError, match=r"num_bits = 8"):
        from_compressed_tensors(packed, scale, group_size=128, num_bits=8)
    with pytest.raises(ValueError, match=r"weight_shape = \[32, 512\] disagrees"):
        from_compressed_tensors(packed, scale, group_size=128, weight_shape=[32, 512])
    with pytest.raises(ValueError, match=r"weight_scale has shape \(16, 2\)"):
        from_compressed_tensors(packed, scale[:16], group_size=128)
    with pytest.raises(TypeError, match=r"weight_zero_point is required"):
        from_compressed_tensors(packed, scale, group_size=128, symmetric=False)
    with pytest.raises(ValueError, match=r"weight_zero_point\[0, 1\] = 9"):
        zp = np.zeros((N, 2), np.int8)
        zp[0, 1] = 9
        from_compressed_tensors(packed, scale, zp, group_size=128, symmetric=False)
    with pytest.raises(ValueError, match=r"weight_zero_point is not zero but symmetric = True"):
        zp = np.zeros((N, 2), np.int8)
        zp[3, 0] = -1
        from_compressed_tensors(packed, scale, zp, group_size=128)
    with pytest.raises(ValueError, match=r"weight_scale\[0, 0\] = inf is not finite"):
        bad = scale.copy()
        bad[0, 0] = np.inf
        from_compressed_tensors(packed, bad, group_size=128)


# --- torch tensors in, torch tensors out ----------------------------------------------------------

def test_torch_inputs():
    torch = pytest.importorskip("torch")
    g = 64
    g_idx, scales, qweight, qzeros = _act_order_gptq("torch", "bfloat16", g)
    ref = from_gptq(qweight, qzeros, scales, g_idx, group_size=g, sym=False, dtype="bfloat16")
    t = from_gptq(torch.from_numpy(qweight), torch.from_numpy(qzeros),
                  torch.from_numpy(scales).to(torch.bfloat16), torch.from_numpy(g_idx),
                  group_size=g, sym=False, dtype=torch.bfloat16)
    assert t.is_torch and t.scales.dtype == torch.bfloat16 and t.perm.dtype == torch.int64
    assert torch.equal(t.qweight, torch.from_numpy(ref.qweight))
    np.testing.assert_array_equal(t.dequantize().numpy(), ref.dequantize())
    wp = rp.ct_pack_to_int32(_rng("torch-ct").integers(-8, 8, (N, K)))
    ct = from_compressed_tensors(torch.from_numpy(wp), torch.from_numpy(scales.T.copy())
                                 .to(torch.bfloat16), group_size=g)
    assert ct.is_torch and ct.scales.dtype == torch.bfloat16
    with pytest.raises(TypeError, match=r"scales must be a float tensor \[G, N\], got dtype "
                                        "torch.int32"):
        from_gptq(torch.from_numpy(qweight), torch.from_numpy(qzeros),
                  torch.from_numpy(scales).to(torch.int32), torch.from_numpy(g_idx),
                  group_size=g, sym=False)


# --- load_quantized on synthetic checkpoint folders -----------------------------------------------

_ST_DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
              np.dtype(np.int32): "I32", np.dtype(np.int64): "I64", np.dtype(np.int8): "I8",
              np.dtype(np.uint8): "U8"}


def _save(path: Path, tensors: Dict[str, np.ndarray], bf16: Tuple[str, ...] = ()) -> None:
    """Write a safetensors file by hand (the format: u64 header length, JSON header, data), so
    that tensors named in bf16 (float32 values exact in bfloat16) are stored as BF16."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        if name in bf16:
            raw, dt = _dtypes.to_bits(a, "bfloat16").astype("<u2").tobytes(), "BF16"
        else:
            raw, dt = a.tobytes(), _ST_DTYPES[a.dtype]
        header[name] = {"dtype": dt, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def _write(folder: Path, tensors: Dict[str, np.ndarray], shards: int,
           bf16: Tuple[str, ...] = ()) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if shards == 1:
        if bf16:
            _save(folder / "model.safetensors", tensors, bf16)
        else:
            from safetensors.numpy import save_file
            save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()},
                      str(folder / "model.safetensors"))
        return
    names = sorted(tensors)
    weight_map = {}
    for i in range(shards):
        fname = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[i::shards]}
        _save(folder / fname, part, bf16)
        weight_map.update({n: fname for n in part})
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": weight_map}))


def _config(folder: Path, qc: dict, name: str = "config.json") -> None:
    body = {"quantization_config": qc, "torch_dtype": "float16"} if name == "config.json" else qc
    (folder / name).write_text(json.dumps(body))


LAYERS = ["model.layers.0.self_attn.q_proj", "model.layers.0.mlp.up_proj"]


def _gptq_checkpoint(folder: Path, shards: int, v2: bool, act: bool, config_name: str):
    rng = _rng("gptq-ckpt", shards, v2, act)
    g = 64
    tensors, refs = {}, {}
    for name in LAYERS:
        codes = rng.integers(0, 16, (N, K))
        zeros = rng.integers(1, 16, (K // g, N))
        scales = rp.random_scales((K // g, N), rng, "float16")
        g_idx = rp.act_order_g_idx(K, g, rng) if act else (np.arange(K) // g).astype(np.int32)
        qweight, qzeros = rp.gptq_pack(codes, zeros, v2=v2)
        tensors.update({f"{name}.qweight": qweight, f"{name}.qzeros": qzeros,
                        f"{name}.scales": scales, f"{name}.g_idx": g_idx,
                        f"{name}.bias": rng.standard_normal(N).astype(np.float16)})
        refs[name] = rp.gptq_dequant(qweight, qzeros, scales, g_idx, v2=v2)
    tensors["model.embed_tokens.weight"] = rng.standard_normal((10, K)).astype(np.float32)
    _write(folder, tensors, shards)
    _config(folder, {"quant_method": "gptq", "bits": 4, "group_size": g, "desc_act": act,
                     "sym": False, "checkpoint_format": "gptq_v2" if v2 else "gptq"},
            config_name)
    return refs


def _close(qw: w4a16.QuantizedWeight, ref: np.ndarray, dtype: str) -> None:
    ulp = 2.0 ** (-11 if dtype == "float16" else -8)
    np.testing.assert_allclose(qw.dequantize(), ref, rtol=0, atol=16 * 0.05 * ulp)


@pytest.mark.parametrize("shards", [1, 3])
@pytest.mark.parametrize("v2", [False, True])
@pytest.mark.parametrize("config_name", ["config.json", "quantize_config.json"])
def test_load_gptq(tmp_path, shards, v2, config_name):
    pytest.importorskip("safetensors")
    refs = _gptq_checkpoint(tmp_path, shards, v2, act=True, config_name=config_name)
    ck = load_quantized(tmp_path)
    assert ck.method == "gptq" and sorted(ck.quantized) == sorted(LAYERS)
    for name, ref in refs.items():
        qw = ck.quantized[name]
        assert qw.dtype == "float16" and qw.perm is not None
        _close(qw, ref, "float16")
    assert sorted(ck.tensors) == sorted([f"{n}.bias" for n in LAYERS] +
                                        ["model.embed_tokens.weight"])
    assert ck.tensor_dtypes["model.embed_tokens.weight"] == "F32"


@pytest.mark.parametrize("shards", [1, 2])
def test_load_awq(tmp_path, shards):
    pytest.importorskip("safetensors")
    rng = _rng("awq-ckpt", shards)
    g = 128
    tensors, refs = {}, {}
    for name in LAYERS + ["model.layers.0.mlp.gate"]:
        codes = rng.integers(0, 16, (N, K))
        zeros = rng.integers(0, 16, (K // g, N))
        scales = rp.random_scales((K // g, N), rng, "float16")
        qweight, qzeros = rp.awq_pack(codes, zeros)
        tensors.update({f"{name}.qweight": qweight, f"{name}.qzeros": qzeros,
                        f"{name}.scales": scales})
        refs[name] = rp.awq_dequant(qweight, qzeros, scales, g)
    tensors["lm_head.weight"] = np.ones((16, K), np.float16)
    _write(tmp_path, tensors, shards)
    _config(tmp_path, {"quant_method": "awq", "bits": 4, "group_size": g, "zero_point": True,
                       "version": "gemm", "modules_to_not_convert": ["mlp.gate"]})
    ck = load_quantized(tmp_path)
    assert ck.method == "awq" and sorted(ck.quantized) == sorted(LAYERS)
    assert "model.layers.0.mlp.gate" in ck.skipped
    assert "model.layers.0.mlp.gate.qweight" in ck.tensors and "lm_head.weight" in ck.tensors
    for name in LAYERS:
        _close(ck.quantized[name], refs[name], "float16")


def _ct_checkpoint(folder: Path, shards: int, sym: bool, strategy: str, act: bool):
    rng = _rng("ct-ckpt", shards, sym, strategy, act)
    g = K if strategy == "channel" else 32
    groups = K // g
    tensors, refs = {}, {}
    for name in LAYERS + ["model.layers.0.mlp.gate"]:
        values = rng.integers(-8, 8, (N, K))
        zp = np.zeros((N, groups), np.int64) if sym else rng.integers(-8, 8, (N, groups))
        scale = rp.random_scales((N, groups), rng, "bfloat16")
        g_idx = rp.act_order_g_idx(K, g, rng) if act else np.arange(K) // g
        packed = rp.ct_pack_to_int32(values)
        tensors.update({f"{name}.weight_packed": packed, f"{name}.weight_scale": scale,
                        f"{name}.weight_shape": np.array([N, K], np.int64)})
        zpp = None
        if sym:
            tensors[f"{name}.weight_zero_point"] = np.zeros((N, groups), np.int8)
        else:
            zpp = rp.ct_pack_to_int32(zp, packed_dim=0)
            tensors[f"{name}.weight_zero_point"] = zpp
        if act:
            tensors[f"{name}.weight_g_idx"] = g_idx.astype(np.int32)
        refs[name] = rp.ct_dequant(packed, scale, zpp, g_idx, (N, K))
    tensors["model.norm.weight"] = _dtypes.round_to(rng.uniform(0.5, 2, K), "bfloat16")
    bf16 = tuple(n for n in tensors if n.endswith("weight_scale")) + ("model.norm.weight",)
    _write(folder, tensors, shards, bf16=bf16)
    weights = {"num_bits": 4, "type": "int", "symmetric": sym, "strategy": strategy,
               "group_size": None if strategy == "channel" else g,
               "actorder": "group" if act else None, "dynamic": False}
    _config(folder, {"quant_method": "compressed-tensors", "format": "pack-quantized",
                     "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights,
                                                   "input_activations": None,
                                                   "output_activations": None}},
                     "ignore": ["lm_head", "re:.*mlp.gate$"],
                     "quantization_status": "compressed"})
    return refs, tensors["model.norm.weight"]


@pytest.mark.parametrize("shards", [1, 2])
@pytest.mark.parametrize("sym,strategy,act", [(True, "group", False), (False, "group", True),
                                              (True, "channel", False),
                                              (False, "channel", False)])
def test_load_compressed_tensors(tmp_path, shards, sym, strategy, act):
    pytest.importorskip("safetensors")
    refs, norm = _ct_checkpoint(tmp_path, shards, sym, strategy, act)
    ck = load_quantized(tmp_path)
    assert ck.method == "compressed-tensors" and sorted(ck.quantized) == sorted(LAYERS)
    assert "model.layers.0.mlp.gate" in ck.skipped
    for name in LAYERS:
        qw = ck.quantized[name]
        assert qw.dtype == "bfloat16" and (qw.perm is not None) == act
        assert qw.group_size == (K if strategy == "channel" else 32)
        _close(qw, refs[name], "bfloat16")
    # numpy has no bfloat16: BF16 tensors come as float32 of the same values
    assert ck.tensor_dtypes["model.norm.weight"] == "BF16"
    np.testing.assert_array_equal(ck.tensors["model.norm.weight"], norm)


def test_load_early_compressed_tensors_compression_config(tmp_path):
    """Early compressed-tensors checkpoints name the config compression_config."""
    pytest.importorskip("safetensors")
    refs, _ = _ct_checkpoint(tmp_path, 1, False, "group", True)
    cfg = json.loads((tmp_path / "config.json").read_text())
    qc = cfg.pop("quantization_config")
    del qc["quant_method"]
    cfg["compression_config"] = qc
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    ck = load_quantized(tmp_path)
    assert ck.method == "compressed-tensors" and sorted(ck.quantized) == sorted(LAYERS)
    _close(ck.quantized[LAYERS[0]], refs[LAYERS[0]], "bfloat16")


def test_load_dtype_override(tmp_path):
    pytest.importorskip("safetensors")
    _gptq_checkpoint(tmp_path, 1, False, act=False, config_name="config.json")
    ck = load_quantized(tmp_path, dtype="bfloat16")
    assert all(qw.dtype == "bfloat16" for qw in ck.quantized.values())


def test_load_bits_refused(tmp_path):
    pytest.importorskip("safetensors")
    _gptq_checkpoint(tmp_path, 1, False, act=False, config_name="config.json")
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["quantization_config"]["bits"] = 8
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match=r"model.layers.0.mlp.up_proj: bits = 8"):
        load_quantized(tmp_path)


def test_load_corrupt_files(tmp_path):
    pytest.importorskip("safetensors")
    good = tmp_path / "good"
    _gptq_checkpoint(good, 1, False, act=False, config_name="config.json")
    data = (good / "model.safetensors").read_bytes()
    cases = {"truncated": data[:-100], "garbage": b"\x00\x01not a safetensors file at all",
             "bad_header": struct.pack("<Q", 10 ** 9) + data[8:]}
    for what, blob in cases.items():
        folder = tmp_path / what
        folder.mkdir()
        (folder / "config.json").write_text((good / "config.json").read_text())
        (folder / "model.safetensors").write_bytes(blob)
        with pytest.raises(ValueError, match=r"model.safetensors.*(corrupt or truncated)"):
            load_quantized(folder)


def test_bf16_tensor_truncated_after_open(tmp_path):
    """A BF16 tensor (read from the file's bytes, numpy having no bfloat16) whose file shrinks
    after the header was validated is refused by name, not read short."""
    pytest.importorskip("safetensors")
    from w4a16.checkpoints import _TensorReader
    path = tmp_path / "model.safetensors"
    _save(path, {"a": np.ones((4, 8), np.float32), "b": np.full((64,), 0.5, np.float32)},
          bf16=("b",))
    with _TensorReader([path]) as reader:
        np.testing.assert_array_equal(reader.get("b"), np.full((64,), 0.5, np.float32))
        data = path.read_bytes()
        path.write_bytes(data[:-16])
        with pytest.raises(ValueError, match=r"model.safetensors: tensor b is truncated"):
            reader.get("b")


def test_load_missing_shard_and_config(tmp_path):
    pytest.importorskip("safetensors")
    _gptq_checkpoint(tmp_path / "a", 3, False, act=False, config_name="config.json")
    (tmp_path / "a" / "model-00002-of-00003.safetensors").unlink()
    with pytest.raises(ValueError, match=r"shard model-00002-of-00003.safetensors is missing"):
        load_quantized(tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "config.json").write_text("{}")
    with pytest.raises(ValueError, match=r"no quantization config"):
        load_quantized(tmp_path / "b")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"config.json: cannot read JSON"):
        load_quantized(tmp_path / "c")



def _edit_qc(folder: Path, **changes: object) -> None:
    """Set keys of folder's config.json quantization_config; a key starting "weights_" sets the
    compressed-tensors group_0's weights args ("weights_type"), "group_" group_0 itself."""
    cfg = json.loads((folder / "config.json").read_text())
    qc = cfg["quantization_config"]
    for key, value in changes.items():
        if key.startswith("weights_"):
            qc["config_groups"]["group_0"]["weights"][key[len("weights_"):]] = value
        elif key.startswith("group_"):
            qc["config_groups"]["group_0"][key[len("group_"):]] = value
        else:
            qc[key] = value
    (folder / "config.json").write_text(json.dumps(cfg))


def test_load_errors_name_the_folder_file_or_setting(tmp_path):
    """load_quantized refuses, naming what is wrong: a missing folder, a config that is not a JSON
    object, a method or compressed-tensors scheme it does not import, a missing tensor or weight
    map, no safetensors file."""
    pytest.importorskip("safetensors")
    with pytest.raises(ValueError, match=r"nowhere: no such checkpoint folder"):
        load_quantized(tmp_path / "nowhere")
    a = tmp_path / "array"
    a.mkdir()
    (a / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"config.json: expected a JSON object"):
        load_quantized(a)
    gptq = tmp_path / "gptq"
    _gptq_checkpoint(gptq, 1, False, act=False, config_name="config.json")
    _edit_qc(gptq, quant_method="bitsandbytes")
    with pytest.raises(ValueError, match=r"quant_method = 'bitsandbytes' is not imported"):
        load_quantized(gptq)
    # a layer without its scales
    noscale = tmp_path / "noscale"
    _gptq_checkpoint(noscale, 1, False, act=False, config_name="config.json")
    from safetensors.numpy import load_file, save_file
    t = load_file(str(noscale / "model.safetensors"))
    del t["model.layers.0.mlp.up_proj.scales"]
    save_file(t, str(noscale / "model.safetensors"))
    with pytest.raises(ValueError, match=r"has no tensor model.layers.0.mlp.up_proj.scales"):
        load_quantized(noscale)
    # no safetensors file; a shard index without a weight map
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text((noscale / "config.json").read_text())
    with pytest.raises(ValueError, match=r"no model.safetensors, model.safetensors.index.json"):
        load_quantized(empty)
    (empty / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}}))
    with pytest.raises(ValueError, match=r"index.json: no weight_map"):
        load_quantized(empty)
    # AWQ without zero points
    awq = tmp_path / "awq"
    qweight, qzeros = rp.awq_pack(np.zeros((N, K), int), np.zeros((2, N), int))
    _write(awq, {f"{LAYERS[0]}.qweight": qweight, f"{LAYERS[0]}.qzeros": qzeros,
                 f"{LAYERS[0]}.scales": np.ones((2, N), np.float16)}, 1)
    _config(awq, {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": False,
                  "version": "gemm"})
    with pytest.raises(ValueError, match=r"zero_point = False AWQ checkpoints are not imported"):
        load_quantized(awq)
    # compressed-tensors schemes it does not import, each named
    cases = [({"group_input_activations": {"num_bits": 8, "type": "float"}}, r"quantizes activations"),
             ({"group_targets": ["re:.*q_proj$"]}, r"up_proj: no config group targets it"),
             ({"group_format": "float-quantized"}, r"format = 'float-quantized': only pack-quantized"),
             ({"weights_type": "float"}, r"weights type = 'float': only int is imported"),
             ({"weights_actorder": "sideways"}, r"actorder = 'sideways' is not understood")]
    for i, (changes, message) in enumerate(cases):
        folder = tmp_path / f"ct{i}"
        _ct_checkpoint(folder, 1, True, "group", False)
        _edit_qc(folder, **changes)
        with pytest.raises(ValueError, match=message):
            load_quantized(folder)

def test_load_state_dict_torch(tmp_path):
    pytest.importorskip("safetensors")
    torch = pytest.importorskip("torch")
    _ct_checkpoint(tmp_path, 1, True, "group", False)
    sd = load_quantized(tmp_path).state_dict()
    assert sd["model.norm.weight"].dtype == torch.bfloat16


def test_load_then_replace_linears(tmp_path):
    """load_quantized's names and weights drop into w4a16.nn.replace_linears (CPU: no forward)."""
    pytest.importorskip("safetensors")
    torch = pytest.importorskip("torch")
    from w4a16.nn import Linear, _refusal, replace_linears
    n, k, g = 128, 512, 128
    rng = _rng("replace")
    tensors = {}
    for name in LAYERS:
        qweight, qzeros = rp.gptq_pack(rng.integers(0, 16, (n, k)),
                                       rng.integers(1, 16, (k // g, n)))
        tensors.update({f"{name}.qweight": qweight, f"{name}.qzeros": qzeros,
                        f"{name}.scales": rp.random_scales((k // g, n), rng, "float16"),
                        f"{name}.g_idx": rp.act_order_g_idx(k, g, rng)})
    _write(tmp_path, tensors, 1)
    _config(tmp_path, {"quant_method": "gptq", "bits": 4, "group_size": g, "desc_act": True,
                       "sym": False})
    ck = load_quantized(tmp_path)
    model = torch.nn.Module()
    model.model = torch.nn.Module()
    model.model.layers = torch.nn.ModuleList([torch.nn.Module()])
    layer = model.model.layers[0]
    layer.self_attn, layer.mlp = torch.nn.Module(), torch.nn.Module()
    layer.self_attn.q_proj = torch.nn.Linear(k, n, dtype=torch.float16)
    layer.mlp.up_proj = torch.nn.Linear(k, n, dtype=torch.float16)
    layer.mlp.down_proj = torch.nn.Linear(n, k, dtype=torch.float16)
    qw = ck.quantized[LAYERS[0]]
    why = _refusal(n, k, qw.group_size, qw.mode, qw.dtype)
    if why:
        pytest.skip(f"this build: {why}")
    report = replace_linears(model, ck.quantized)
    assert sorted(report.replaced) == sorted(LAYERS)
    assert "model.layers.0.mlp.down_proj" in report.skipped
    up = layer.mlp.up_proj
    assert isinstance(up, Linear) and up.perm is not None and up.bias is not None
    np.testing.assert_array_equal(up.qweight_info().dequantize().numpy(),
                                  ck.quantized[LAYERS[1]].dequantize())


def test_load_gptqmodel_dynamic_rules(tmp_path):
    """GPTQModel's dynamic: a -: rule keeps a module unconverted, a +: rule overrides its
    group size."""
    pytest.importorskip("safetensors")
    refs = _gptq_checkpoint(tmp_path, 1, False, act=False, config_name="config.json")
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["quantization_config"].update(
        group_size=128, dynamic={r"-:.*self_attn\.q_proj": {}, r"+:.*mlp\..*": {"group_size": 64}})
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    ck = load_quantized(tmp_path)
    assert list(ck.quantized) == [LAYERS[1]] and LAYERS[0] in ck.skipped
    assert f"{LAYERS[0]}.qweight" in ck.tensors
    _close(ck.quantized[LAYERS[1]], refs[LAYERS[1]], "float16")


def test_load_duplicate_tensor_across_shards(tmp_path):
    pytest.importorskip("safetensors")
    _gptq_checkpoint(tmp_path, 2, False, act=False, config_name="config.json")
    shard = tmp_path / "model-00001-of-00002.safetensors"
    other = tmp_path / "model-00002-of-00002.safetensors"
    from safetensors.numpy import load_file
    _save(other, {**load_file(str(other)), **dict(list(load_file(str(shard)).items())[:1])})
    with pytest.raises(ValueError, match=r"is also in"):
        load_quantized(tmp_path)


@pytest.mark.parametrize("fmt", ["gptq-sym", "gptq-asym-act", "gptq_v2-asym", "awq",
                                 "ct-sym", "ct-asym-act", "ct-channel"])
def test_round_to_nearest_checkpoints_of_float_weights(fmt):
    """ref_packers' checkpoints of float weights import to their own decoders' weights, which
    are within the 4-bit rounding of the float weights."""
    rng = _rng("rtn", fmt)
    w = rng.standard_normal((N, K)) * 0.02
    order = np.argsort(-np.abs(w).sum(axis=0), kind="stable") if "act" in fmt else None
    g = 64
    if fmt.startswith("gptq"):
        v2, sym = fmt.startswith("gptq_v2"), "-sym" in fmt
        t = rp.gptq_checkpoint(w, g, sym=sym, order=order, v2=v2)
        qw = from_gptq(t["qweight"], t["qzeros"], t["scales"], t["g_idx"], group_size=g,
                       sym=sym, checkpoint_format="gptq_v2" if v2 else "gptq")
        ref = rp.gptq_dequant(t["qweight"], t["qzeros"], t["scales"], t["g_idx"], v2=v2)
        dtype, s_max = "float16", np.abs(t["scales"]).max()
    elif fmt == "awq":
        t = rp.awq_checkpoint(w, g)
        qw = from_awq(t["qweight"], t["qzeros"], t["scales"], group_size=g)
        ref = rp.awq_dequant(t["qweight"], t["qzeros"], t["scales"], g)
        dtype, s_max = "float16", np.abs(t["scales"]).max()
    else:
        sym, gs = "-asym" not in fmt, None if fmt == "ct-channel" else g
        t = rp.ct_checkpoint(w, gs, symmetric=sym, order=order)
        g_idx = t.get("weight_g_idx", np.arange(K) // (gs or K))
        qw = from_compressed_tensors(t["weight_packed"], t["weight_scale"],
                                     t.get("weight_zero_point"), t.get("weight_g_idx"),
                                     weight_shape=t["weight_shape"], group_size=gs,
                                     symmetric=sym, strategy="channel" if gs is None else "group")
        ref = rp.ct_dequant(t["weight_packed"], t["weight_scale"], t.get("weight_zero_point"),
                            g_idx, (N, K))
        dtype, s_max = "bfloat16", np.abs(t["weight_scale"]).max()
        assert (qw.zeros is None) == sym
    assert (qw.perm is not None) == (order is not None)
    ulp = 2.0 ** (-11 if dtype == "float16" else -8)
    np.testing.assert_allclose(qw.dequantize(), ref, rtol=0, atol=16 * s_max * ulp)
    # round-to-nearest: within half a step where nothing clips (symmetric ranges may clip +max)
    assert np.linalg.norm(ref - w) / np.linalg.norm(w) < 0.15
