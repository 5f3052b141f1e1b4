"""Mixture-of-experts benchmark: the grouped W4A16 GEMM against torch._grouped_mm in bf16 and a
loop of the dense W4A16 op over the experts, in one process on one GPU.

Models (expert GEMMs): Mixtral-8x7B (E = 8, top-2, hidden 4096, intermediate 14336), Qwen3-30B-A3B
(E = 128, top-8, 2048, 768), DeepSeek-V2-Lite (E = 64, top-6, 2048, 1408). Per model, the two
grouped GEMMs of an expert MLP: gate and up as one product (N = 2I, K = H; A rows gathered from
the tokens by the row index) and down (N = H, K = I; A in grouped order, the router weight as the
per-row scale). Tokens T in {1, 4, 16, 64, 256, 1024, 4096}; routing uniform (top-k of uniform
scores) or skewed (top-k drawn without replacement from a Zipf law over the experts, exponent 1.2).

Method (docs/DESIGN.md, Measuring): CUDA-graph replay of launches that cycle over copies of the
weights and of the routing (the copies together span more than 4x the L2, so the weights stream
from HBM), warm-up, the median of timed replays (bench/graph_timing.py, compare_us: the graphs of a
problem, w4a16, torch._grouped_mm, the dense loop and with --sweep each grouped kernel, captured
once and timed in turn in three rounds, each after 0.2 s of its own load, the lowest round of
each). w4a16: the library's heuristic choice (group 128, bf16). torch._grouped_mm: bf16 weights
[E, K, N] (column-major views of [E, N, K]), A already in grouped order, int32 cumulative offsets.
Dense loop: w4a16.ops.gemm per expert with rows (host-known counts; its selection per expert's M).
The memory floor of a problem is (packed weights + scales of the experts with rows + A + D) / the
card's stream bandwidth, measured in the same run: the faster of a device-to-device copy (bytes
read + written) and a read-only sum. Prints a markdown table; --json FILE writes the rows.

The library's calls (grouped and dense) launch as the ops do by default, in plain stream order
(``w4a16.ops.GEMM_FLAGS`` = ``W4A16_GEMM_NO_PDL``: in a model the kernels before them are torch's);
``--pdl`` launches them programmatically instead (flags 0), as a chain of the library's own kernels
runs, each one's launch and set-up under the end of the one before.

Usage: python3 bench/moe_bench.py [--json FILE] [--quick] [--tokens 1,4,16] [--models M,...] [--pdl]
       [--sweep [--sweep-kernels 128x64x,128x96x]]
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

import w4a16  # registers torch.ops.w4a16; w4a16.ops.GEMM_FLAGS for --pdl
from w4a16 import _gemm, _lib

from graph_timing import compare_us, each_copy, graph_us

MODELS = {"Mixtral-8x7B": (8, 2, 4096, 14336), "Qwen3-30B-A3B": (128, 8, 2048, 768),
          "DeepSeek-V2-Lite": (64, 6, 2048, 1408)}
TOKENS = [1, 4, 16, 64, 256, 1024, 4096]
GROUP = 128


def stream_gbps() -> Tuple[float, float]:
    """(copy, read) bandwidth in GB/s, graph-timed, best of three: a device-to-device copy of 1 GiB
    (bytes read + written) and a sum over 1 GiB (bytes read)."""
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    us = min(graph_us(lambda: [dst.copy_(src) for _ in range(4)], 4, reps=10) for _ in range(3))
    f = src.view(torch.float32).fill_(1.0)
    us_r = min(graph_us(lambda: [f.sum() for _ in range(4)], 4, reps=10) for _ in range(3))
    del src, dst, f
    torch.cuda.empty_cache()
    return 2 * n / (us * 1e-6) / 1e9, n / (us_r * 1e-6) / 1e9


def routing(t: int, e: int, k: int, kind: str, gen: torch.Generator) -> torch.Tensor:
    if kind == "uniform":
        return torch.rand(t, e, generator=gen).topk(k, dim=1).indices
    p = 1.0 / torch.arange(1, e + 1, dtype=torch.float64) ** 1.2
    return torch.multinomial(p.expand(t, e), k, replacement=False, generator=gen)


def _grouped_args(e: int, rows: int, n: int, k: int, a_rows: int,
                  row_index: int = 0) -> "_lib.GROUPED_ARGS":
    return _lib.GROUPED_ARGS(struct_size=_lib.ctypes.sizeof(_lib.GROUPED_ARGS), experts=e,
                             rows=rows, n=n, k=k, a_rows=a_rows, group_size=GROUP, mode=1, dtype=1,
                             row_index=row_index or None)


def chosen_kernel(e: int, rows: int, n: int, k: int, a_rows: int, row_index: int = 0) -> str:
    """The grouped kernel the library selects for these arguments (row_index: the device address of
    the row index, 0 without one; the selection depends on whether there is one)."""
    ga = _grouped_args(e, rows, n, k, a_rows, row_index)
    out = (_lib.ctypes.POINTER(_lib.KERNEL_DESC) * 1)()
    got = _lib.ctypes.c_int(0)
    st = _lib.lib().w4a16_grouped_heuristic_query(_lib.ctypes.byref(ga), 0, 1, out,
                                                  _lib.ctypes.byref(got))
    return out[0].contents.name.decode() if st == 0 and got.value else "?"


def candidates(e: int, rows: int, n: int, k: int, a_rows: int,
               only: Optional[List[str]] = None) -> List[Tuple[str, int]]:
    """(name, descriptor address) of every bf16 scale-only grouped kernel that can run these;
    with only, those whose name holds one of its substrings."""
    L = _lib.lib()
    ga = _grouped_args(e, rows, n, k, a_rows)
    out = []
    for i in range(L.w4a16_grouped_kernel_count()):
        d = L.w4a16_grouped_kernel_get(i)
        name = d.contents.name.decode()
        if d.contents.dtype == 1 and d.contents.mode == 1 and \
                (not only or any(s in name for s in only)) and \
                L.w4a16_grouped_can_implement(d, _lib.ctypes.byref(ga)) == 0:
            out.append((name, _lib.ctypes.addressof(d.contents)))
    return out


@dataclass
class Routing:
    """One copy of a problem's routing, in the grouped layout (tensors on the GPU).

    counts: rows per expert (host, for the dense loop); offs: int32 ``[E + 1]`` cumulative offsets;
    ends: ``offs[1:]`` (torch._grouped_mm's ``offs``); idx: int32 ``[rows]``, the token of each
    grouped row; rs: float32 ``[rows]``, the per-row scale.
    """
    counts: List[int]
    offs: torch.Tensor
    ends: torch.Tensor
    idx: torch.Tensor
    rs: torch.Tensor


def bench_gemm(model: str, which: str, e: int, topk: int, n: int, k: int, t: int, kind: str,
               gbps: float, l2: int, gen: torch.Generator, sweep: bool = False,
               sweep_only: Optional[List[str]] = None) -> Dict[str, Any]:
    rows = t * topk
    wbytes_one = e * (n * k // 2 + (k // GROUP) * n * 2)
    copies = max(2, min(8, math.ceil(4 * l2 / wbytes_one)))
    qw = [torch.randint(0, 256, (e, n, k // 2), dtype=torch.uint8, device="cuda")
          for _ in range(copies)]
    sc = [(torch.rand(e, k // GROUP, n, device="cuda") * 0.01 + 0.001).to(torch.bfloat16)
          for _ in range(copies)]
    bw = [(torch.randn(e, n, k, device="cuda") * 0.02).to(torch.bfloat16).transpose(1, 2)
          for _ in range(2)]  # [E, K, N] column-major views; 2 copies (bf16: 4x the bytes)
    gather = which == "gate_up"
    ids = [routing(t, e, topk, kind, gen) for _ in range(copies)]
    x = (torch.randn(t if gather else rows, k, device="cuda") * 0.5).to(torch.bfloat16)
    rt: List[Routing] = []
    for c in range(copies):
        flat = ids[c].reshape(-1)
        order = torch.sort(flat, stable=True).indices
        counts = torch.bincount(flat, minlength=e)
        offs = torch.zeros(e + 1, dtype=torch.int32)
        offs[1:] = torch.cumsum(counts, 0)
        rt.append(Routing(counts=counts.tolist(), offs=offs.cuda(),
                          ends=offs[1:].contiguous().cuda(),
                          idx=(order // topk).to(torch.int32).cuda(),
                          rs=torch.rand(rows, device="cuda")))
    xg = [x[r.idx.long()].contiguous() if gather else x for r in rt]
    out = torch.empty(rows, n, dtype=torch.bfloat16, device="cuda")

    def w4(c: int) -> None:
        r = rt[c]
        torch.ops.w4a16.grouped_gemm(x, qw[c], sc[c], None, r.offs,
                                     r.idx if gather else None, None if gather else r.rs, GROUP)

    def gmm(c: int) -> None:
        torch._grouped_mm(xg[c], bw[c % 2], rt[c].ends)

    def loop(c: int) -> None:
        r = rt[c]
        lo = 0
        for ex, cnt in enumerate(r.counts):
            if cnt:
                a = xg[c][lo:lo + cnt]
                torch.ops.w4a16.gemm.out(a, qw[c][ex], sc[c][ex], None, None, GROUP,
                                         out=out[lo:lo + cnt])
            lo += cnt

    row: Dict[str, Any] = {"model": model, "gemm": which, "tokens": t, "routing": kind,
                           "experts": e, "n": n, "k": k, "rows": rows, "copies": copies}
    fns: Dict[str, Callable[[], object]] = {"w4a16": each_copy(w4, copies),
                                            "loop": each_copy(loop, copies)}
    try:  # torch without _grouped_mm for this device / dtype: NaN and the error in the row
        gmm(0)
        fns["grouped_mm"] = each_copy(gmm, copies)
    except RuntimeError as exc:
        row["grouped_mm_error"] = str(exc)[:200]
    if sweep:  # every grouped kernel named, through the raw call (with the workspace of those that
        # gather the rows first, w4a16_grouped_gemm_workspace_size: rows x K x 2 bytes)
        ws = torch.empty(rows * k * 2 + 256 if gather else 1, dtype=torch.uint8, device="cuda")
        for name, addr in candidates(e, rows, n, k, t, sweep_only):
            def raw(c: int, addr: int = addr) -> None:
                r = rt[c]
                _gemm.grouped_gemm_raw(e, rows, n, k, k, n, x.shape[0], GROUP, 1, 1, False,
                                       x.data_ptr(), qw[c].data_ptr(), sc[c].data_ptr(), 0,
                                       r.offs.data_ptr(), r.idx.data_ptr() if gather else 0,
                                       0 if gather else r.rs.data_ptr(), out.data_ptr(), 1.0, 0,
                                       torch.cuda.current_stream().cuda_stream, addr,
                                       w4a16.ops.GEMM_FLAGS, ws.data_ptr(), ws.numel())
            fns["sweep:" + name] = each_copy(raw, copies)
    us = compare_us(fns, copies)
    row["w4a16_us"] = us["w4a16"]
    row["grouped_mm_us"] = us.get("grouped_mm", float("nan"))
    row["loop_us"] = us["loop"]
    used = sum(sum(1 for cnt in r.counts if cnt) for r in rt) / copies
    a_bytes = (t if gather else rows) * k * 2
    floor_bytes = used * (n * k // 2 + (k // GROUP) * n * 2) + a_bytes + rows * n * 2
    row["experts_used"] = used
    row["floor_us"] = floor_bytes / (gbps * 1e9) * 1e6
    row["floor_frac"] = row["floor_us"] / row["w4a16_us"]
    row["vs_grouped_mm"] = row["grouped_mm_us"] / row["w4a16_us"]
    row["vs_loop"] = row["loop_us"] / row["w4a16_us"]
    row["kernel"] = chosen_kernel(e, rows, n, k, t, rt[0].idx.data_ptr() if gather else 0)
    if sweep:
        row["sweep"] = {name[6:]: v for name, v in us.items() if name.startswith("sweep:")}
    del qw, sc, bw
    torch.cuda.empty_cache()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true", help="T = 1, 16, 1024 and uniform routing only")
    ap.add_argument("--tokens", help="comma-separated T list")
    ap.add_argument("--models", help="comma-separated model names")
    ap.add_argument("--sweep", action="store_true",
                    help="also time every grouped bf16 kernel that can run each problem")
    ap.add_argument("--sweep-kernels",
                    help="with --sweep, only the kernels whose name holds one of these "
                         "comma-separated substrings")
    ap.add_argument("--pdl", action="store_true",
                    help="launch the library's calls programmatically (w4a16.ops.GEMM_FLAGS = 0)")
    args = ap.parse_args()
    if args.pdl:
        w4a16.ops.GEMM_FLAGS = 0
    tokens = [int(x) for x in args.tokens.split(",")] if args.tokens else \
        ([1, 16, 1024] if args.quick else TOKENS)
    kinds = ["uniform"] if args.quick else ["uniform", "zipf"]
    models = args.models.split(",") if args.models else list(MODELS)
    props = torch.cuda.get_device_properties(0)
    copy_gbps, read_gbps = stream_gbps()
    gbps = max(copy_gbps, read_gbps)  # the floor's bandwidth: the faster of the two streams
    print(f"device: {props.name}, {props.multi_processor_count} SMs, "
          f"L2 {props.L2_cache_size >> 20} MB; copy {copy_gbps:.0f} GB/s, read {read_gbps:.0f} "
          f"GB/s (floor at {gbps:.0f}); torch {torch.__version__}; library calls "
          f"{'programmatic' if args.pdl else 'in plain stream order'}")
    gen = torch.Generator().manual_seed(0)
    rows: List[Dict] = []
    print("| model | GEMM | T | routing | experts used | w4a16 us | floor frac | grouped_mm us | "
          "x vs grouped_mm | loop us | x vs loop | kernel |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for model in models:
        e, topk, h, inter = MODELS[model]
        for which, n, k in (("gate_up", 2 * inter, h), ("down", h, inter)):
            for t in tokens:
                for kind in kinds:
                    r = bench_gemm(model, which, e, topk, n, k, t, kind, gbps,
                                   props.L2_cache_size, gen, args.sweep,
                                   args.sweep_kernels.split(",") if args.sweep_kernels else None)
                    rows.append(r)
                    print(f"| {model} | {which} | {t} | {kind} | {r['experts_used']:.1f} | "
                          f"{r['w4a16_us']:.1f} | {r['floor_frac']:.2f} | "
                          f"{r['grouped_mm_us']:.1f} | "
                          f"{r['vs_grouped_mm']:.2f} | {r['loop_us']:.1f} | {r['vs_loop']:.2f} | "
                          f"{r['kernel'].replace('w4a16_grouped_', '')} |", flush=True)
                    for name, us in sorted(r.get("sweep", {}).items(), key=lambda kv: kv[1]):
                        print(f"|  |  |  |  | sweep | {us:.1f} | {r['floor_us'] / us:.2f} |  |  "
                              f"|  |  | {name.replace('w4a16_grouped_', '')} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props.name, "pdl": args.pdl, "copy_gbps": copy_gbps,
                       "read_gbps": read_gbps,
                       "floor_gbps": gbps, "torch": torch.__version__,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
