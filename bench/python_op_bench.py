"""Benchmark of the PyTorch op against the C call, torch's linear and torch's bf16 MLP.

Three measurements, in one process on one GPU (docs/DESIGN.md, Measuring: weights rotate out of L2,
warm-up, CUDA-graph replay, median):

1. graph: ``torch.ops.w4a16.gemm`` against the library called directly (``w4a16_gemm`` through the
   binding, no torch op, with the op's flags: ``W4A16_GEMM_NO_PDL``), each captured in a CUDA
   graph of launches cycling over weight copies that span more than the L2, on the eight default
   layers at M = 1, 16, 256: the op must add nothing on the device.
2. eager host time per call (no graph, M = 1, 4096 x 4096, bf16): ``torch.nn.functional.linear``,
   the op through the dispatcher, the op's Python implementation called directly, the binding's raw
   call, a prebuilt ``w4a16_gemm`` call and an empty ctypes call, each the host's time per call over
   a burst shorter than the launch queue.
3. the Llama-3-8B MLP (gate / up 14336 x 4096, SiLU, down 4096 x 14336) at M = 1 in a CUDA graph:
   ``w4a16.nn.Linear`` (group 128) against ``torch.nn.Linear`` in bf16.

Usage: ``python3 bench/python_op_bench.py [--json FILE] [--quick]``; prints markdown tables.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import time
from typing import Callable, Dict, List

import torch

import w4a16
from w4a16 import _gemm, _lib, ops

from graph_timing import each_copy, graph_us

LAYERS = [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336), (10240, 8192),
          (8192, 8192), (57344, 8192), (8192, 28672)]


def bench_graph(ms: List[int], quick: bool) -> List[Dict]:
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    rows = []
    layers = LAYERS[:2] if quick else LAYERS
    for n, k in layers:
        wbytes = n * k // 2 + (k // 128) * n * 2
        copies = max(2, min(32, -(-4 * l2 // wbytes)))
        ws = [w4a16.quantize(torch.randn(n, k, device="cuda") * 0.02, group_size=128,
                             dtype="bfloat16").to("cuda") for _ in range(min(copies, 2))]
        # further copies share the codes' values but are distinct allocations
        ws += [w4a16.QuantizedWeight(ws[c % 2].qweight.clone(), ws[c % 2].scales.clone(),
                                     group_size=128, n=n, k=k, dtype="bfloat16")
               for c in range(2, copies)]
        for m in ms:
            a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
            out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            need = _gemm.workspace_bytes(torch.cuda.current_device(), m, n, k, 128, 1, 1)
            wsbuf = torch.empty(max(need, 16), dtype=torch.uint8, device="cuda")
            ops.reserve_workspace(need)

            def op(c: int) -> None:
                torch.ops.w4a16.gemm.out(a, ws[c].qweight, ws[c].scales, None, None, 128,
                                         out=out)

            def raw(c: int) -> None:
                _gemm.gemm_raw(m, n, k, k, n, 128, 1, 1, a.data_ptr(), ws[c].qweight.data_ptr(),
                               ws[c].scales.data_ptr(), 0, 0, out.data_ptr(), 1.0,
                               wsbuf.data_ptr(), need,
                               torch.cuda.current_stream().cuda_stream, 0, _lib.GEMM_NO_PDL)

            t_raw = graph_us(each_copy(raw, copies), copies)
            t_op = graph_us(each_copy(op, copies), copies)
            t_raw2 = graph_us(each_copy(raw, copies), copies)
            rows.append({"n": n, "k": k, "m": m, "c_us": min(t_raw, t_raw2), "op_us": t_op,
                         "spread_c": abs(t_raw - t_raw2) / min(t_raw, t_raw2),
                         "ratio": t_op / min(t_raw, t_raw2)})
        ws.clear()  # free the copies before the next layer
        torch.cuda.empty_cache()
    return rows


def host_us(fn: Callable[[], object], calls: int = 200, reps: int = 15) -> float:
    """Median host microseconds per call over bursts of `calls` (shorter than the launch queue)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) * 1e6 / calls)
    torch.cuda.synchronize()
    return statistics.median(times)


def bench_eager() -> Dict[str, float]:
    n = k = 4096
    dt = torch.bfloat16
    a = torch.randn(1, k, device="cuda").to(dt)
    wd = (torch.randn(n, k, device="cuda") * 0.02).to(dt)
    qw = w4a16.quantize(wd, group_size=128, dtype=dt).to("cuda")
    out = torch.empty(1, n, device="cuda", dtype=dt)
    stream = torch.cuda.current_stream().cuda_stream
    L = _lib.lib()
    args = _lib.GEMM_ARGS()
    buf = ctypes.create_string_buffer(_lib.GEMM_ARGS_STRUCT.size)
    _lib.GEMM_ARGS_STRUCT.pack_into(buf, 0, 1, n, k, k, n, 128, 1, 1, 0, 0, a.data_ptr(),
                                    qw.qweight.data_ptr(), qw.scales.data_ptr(), 0, 0,
                                    out.data_ptr(), 1.0, 0, _lib.GEMM_NO_PDL)
    ctypes.memmove(ctypes.addressof(args), buf, len(buf))
    gemm_c = L.w4a16_gemm
    empty_c = L.w4a16_last_cuda_error
    res = {
        "F.linear (bf16)": host_us(lambda: torch.nn.functional.linear(a, wd)),
        "torch.ops.w4a16.gemm": host_us(
            lambda: torch.ops.w4a16.gemm(a, qw.qweight, qw.scales, None, None, 128)),
        "op implementation, no dispatcher": host_us(
            lambda: ops._gemm_cuda(a, qw.qweight, qw.scales, None, None, 128)),
        "binding gemm_raw": host_us(
            lambda: _gemm.gemm_raw(1, n, k, k, n, 128, 1, 1, a.data_ptr(), qw.qweight.data_ptr(),
                                   qw.scales.data_ptr(), 0, 0, out.data_ptr(), 1.0, 0, 0,
                                   stream, 0, _lib.GEMM_NO_PDL)),
        "w4a16_gemm, prebuilt args": host_us(
            lambda: gemm_c(ctypes.byref(args), None, None, 0, stream)),
        "empty ctypes call": host_us(lambda: empty_c()),
    }
    return res


def bench_mlp(reps: int = 30) -> Dict[str, float]:
    """The Llama-3-8B MLP at M = 1 in a CUDA graph, bf16 against w4a16, gate and up as two
    linears and merged into one 28672 x 4096 linear (as serving engines hold them)."""
    h, inter = 4096, 14336
    dt = torch.bfloat16

    class MLP(torch.nn.Module):
        def __init__(self, merged: bool) -> None:
            super().__init__()
            self.merged = merged
            if merged:
                self.gate_up = torch.nn.Linear(h, 2 * inter, bias=False)
            else:
                self.gate = torch.nn.Linear(h, inter, bias=False)
                self.up = torch.nn.Linear(h, inter, bias=False)
            self.down = torch.nn.Linear(inter, h, bias=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if self.merged:
                gu = self.gate_up(x)
                return self.down(torch.nn.functional.silu(gu[:, :inter]) * gu[:, inter:])
            return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))

    x = torch.randn(1, h, device="cuda").to(dt)
    out = {}
    for merged in (False, True):
        dense = MLP(merged).to("cuda", dt)
        for p in dense.parameters():
            torch.nn.init.normal_(p, std=0.02)
        quant = MLP(merged).to("cuda", dt)
        quant.load_state_dict(dense.state_dict())
        report = w4a16.nn.replace_linears(quant, group_size=128)
        assert not report.skipped, str(report)
        tag = "gate_up merged" if merged else "gate, up separate"
        with torch.no_grad():
            for name, mod in (("bf16 torch.nn.Linear", dense), ("w4a16.nn.Linear", quant)):
                out[f"{name}, {tag}"] = graph_us(lambda: mod(x), 1, reps=reps)
        del dense, quant
        torch.cuda.empty_cache()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the raw numbers to this file")
    ap.add_argument("--quick", action="store_true", help="two layers only")
    ap.add_argument("--only", choices=["graph", "eager", "mlp"], help="run one measurement")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    dev = torch.cuda.get_device_name()
    graph = bench_graph([1, 16, 256], args.quick) if args.only in (None, "graph") else []
    eager = bench_eager() if args.only in (None, "eager") else {}
    mlp = bench_mlp() if args.only in (None, "mlp") else {}
    print(f"# python_op_bench on {dev}, torch {torch.__version__}, w4a16 {w4a16.__version__}\n")
    if graph:
        print("## In a CUDA graph: torch.ops.w4a16.gemm vs the C call (bf16, group 128)\n")
        print("| N x K | M | C call us | op us | op / C | C rerun spread |")
        print("|---|---|---|---|---|---|")
        for r in graph:
            print(f"| {r['n']}x{r['k']} | {r['m']} | {r['c_us']:.2f} | {r['op_us']:.2f} | "
                  f"{r['ratio']:.3f} | {100 * r['spread_c']:.1f} % |")
    if eager:
        print("\n## Eager host time per call (M = 1, 4096 x 4096, bf16)\n")
        print("| call | host us |")
        print("|---|---|")
        for name, t in eager.items():
            print(f"| {name} | {t:.2f} |")
        lin = eager["F.linear (bf16)"]
        op = eager["torch.ops.w4a16.gemm"]
        impl = eager["op implementation, no dispatcher"]
        raw = eager["binding gemm_raw"]
        pre = eager["w4a16_gemm, prebuilt args"]
        print(f"\nop / F.linear host time: {op / lin:.2f}x; dispatcher {op - impl:.2f} us, op's "
              f"Python checks and allocation {impl - raw:.2f} us, binding {raw - pre:.2f} us, "
              f"library {pre - eager['empty ctypes call']:.2f} us (+ "
              f"{eager['empty ctypes call']:.2f} us for ctypes' call itself)")
    if mlp:
        print("\n## Llama-3-8B MLP (4096 / 14336, SiLU) at M = 1 in a CUDA graph\n")
        print("| MLP | us | speed-up over bf16 |")
        print("|---|---|---|")
        for name, t in mlp.items():
            base = mlp["bf16 torch.nn.Linear, " + name.split(", ", 1)[1]]
            print(f"| {name} | {t:.2f} | {base / t:.2f}x |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": dev, "torch": torch.__version__, "graph": graph,
                       "eager_host_us": eager, "mlp_us": mlp}, f, indent=1)


if __name__ == "__main__":
    main()
