#!/usr/bin/env python3
"""torch_int4_ref.py - time PyTorch's W4A16 decode kernel (torch._weight_int4pack_mm, "tinygemm")
with the method of docs/DESIGN.md ("Measuring"), as the peer that issue 4 names.

A measurement tool for the device machine (which has PyTorch), not part of the library.
Per layer (N, K) and M: weights rotate over enough copies to leave L2, one CUDA graph holds
L back-to-back calls (one per copy in turn), 3 warm-up replays, 15 timed replays (CUDA events),
median per call. bf16 activations, group size 128 (the library bench's defaults). Also times
torch.matmul in bf16 (cuBLAS) the same way, as a cross-check of the library bench's baseline.

    python3 tools/torch_int4_ref.py [--m 1,2,4,8,16] [--csv out.csv]
"""
import argparse
import statistics
from typing import Callable, Sequence

import torch

LAYERS = [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336),
          (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)]
GROUP = 128
INNER_K_TILES = 8  # tinygemm's usual choice for large K (2, 4 or 8)


def pack_int4(n: int, k: int, dev: torch.device) -> torch.Tensor:
    """Random 4-bit codes in the layout _convert_weight_to_int4pack expects for this torch."""
    q = torch.randint(0, 16, (n, k), dtype=torch.int32, device=dev)
    try:  # torch >= 2.5: uint8 [N, K/2], two codes per byte (high nibble first)
        u8 = ((q[:, ::2] << 4) | q[:, 1::2]).to(torch.uint8)
        return torch._convert_weight_to_int4pack(u8, INNER_K_TILES)
    except (RuntimeError, TypeError):  # older: int32 [N, K] codes
        return torch._convert_weight_to_int4pack(q, INNER_K_TILES)


def time_calls(fn_list: Sequence[Callable[[], object]], reps: int = 15, warm: int = 3) -> float:
    """Median microseconds per call of a graph replaying fn_list in order."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for f in fn_list[:2]:
            f()  # lazy init outside the capture
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for f in fn_list:
            f()
    for _ in range(warm):
        g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1000.0 / len(fn_list))
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", default="1,2,4,8,16")
    ap.add_argument("--csv", default=None)
    args = ap.parse_args()
    ms = [int(x) for x in args.m.split(",")]
    dev = torch.device("cuda")
    print(f"# torch {torch.__version__}, {torch.cuda.get_device_name(0)}, group {GROUP}, "
          f"inner_k_tiles {INNER_K_TILES}")
    rows = ["n,k,m,tinygemm_us,cublas_bf16_us,floor_us"]
    for n, k in LAYERS:
        wbytes = n * k // 2 + (k // GROUP) * n * 4  # packed + (scale, zero) bf16 pairs
        copies = max(2, int(300e6 // wbytes) + 1)
        packed = [pack_int4(n, k, dev) for _ in range(copies)]
        sz = [(torch.rand(k // GROUP, n, 2, device=dev, dtype=torch.bfloat16) * 0.01) for _ in range(copies)]
        copies_bf16 = max(2, int(300e6 // (n * k * 2)) + 1)
        wb = [torch.randn(k, n, device=dev, dtype=torch.bfloat16) for _ in range(copies_bf16)]
        calls = max(copies, 40)
        for m in ms:
            x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            fns = [(lambda i=i: torch._weight_int4pack_mm(x, packed[i % copies], GROUP, sz[i % copies]))
                   for i in range(calls)]
            t_tiny = time_calls(fns)
            fns_b = [(lambda i=i: torch.matmul(x, wb[i % copies_bf16])) for i in range(max(copies_bf16, 40))]
            t_cub = time_calls(fns_b)
            floor = (n * k // 2 + (k // GROUP) * n * 2 + m * k * 2 + m * n * 2) / 3.1e12 * 1e6
            rows.append(f"{n},{k},{m},{t_tiny:.2f},{t_cub:.2f},{floor:.2f}")
            print(rows[-1], flush=True)
        del packed, sz, wb
        torch.cuda.empty_cache()
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
