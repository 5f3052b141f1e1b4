"""Tensor-parallel Llama-3-8B MLP on several GPUs: correctness and CUDA-graph timing (issue 42).

Run on one host with N GPUs (N = 2 for the issue; N = 1 is a smoke test of the script itself)::

    NCCL_NVLS_ENABLE=0 PYTHONPATH=python W4A16_LIBRARY=build/libw4a16.so \\
        torchrun --nproc-per-node=2 tests/python/tp_mlp.py [--quick] [--json tp.json]

The MLP is ``down(silu(gate(x)) * up(x))``, hidden 4096, intermediate 14336, weights quantized
with group 128 to bf16 scales (random normal weights, the same on every rank from one seed).
``w4a16.parallel.shard_mlp`` makes gate/up column-parallel and down row-parallel (one NCCL
all-reduce per MLP).

1. Correctness, plain and act-order (random permutations on all three weights; shard_mlp folds
   down's into gate/up), at M = 1, 16, 128: the TP output against the float64 MLP on the
   dequantized weights and against the unsharded w4a16 MLP (TP = 1), relative Frobenius error
   under 1e-2 (bf16), and every rank holding the same output.
2. Timing (rank 0 prints a markdown table; ``--json`` also writes it): per MLP, in one CUDA graph
   per configuration holding ``--copies`` MLPs on distinct weight copies (so the weights stream
   from HBM, not L2: the 4-bit MLP at TP = 2 is 44 MB per GPU), the NCCL all-reduce inside the
   graph; median over ``--reps`` replays. Configurations: w4a16 TP = N, w4a16 TP = 1, bf16
   (``torch.nn.functional.linear``) TP = N and TP = 1, and the all-reduce of ``[M, 4096]`` bf16
   alone.

Exits non-zero (on every rank) when a check fails. ``NCCL_NVLS_ENABLE=0`` is set here too (over
any value given), before the process group starts: the lent machines require NVLink multicast
off.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
from typing import Any, Callable, Dict, List

os.environ["NCCL_NVLS_ENABLE"] = "0"  # the lent machines require NVLink multicast off

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import w4a16  # noqa: E402
import w4a16.nn  # noqa: E402
from w4a16.parallel import shard_mlp  # noqa: E402

HIDDEN, INTER, GROUP = 4096, 14336, 128
DTYPE = torch.bfloat16


class MLP(torch.nn.Module):
    """``down(silu(gate(x)) * up(x))`` over any three linears (w4a16, parallel or torch)."""

    def __init__(self, gate: torch.nn.Module, up: torch.nn.Module,
                 down: torch.nn.Module) -> None:
        super().__init__()
        self.gate_proj, self.up_proj, self.down_proj = gate, up, down

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DenseTP(torch.nn.Module):
    """The bf16 baseline: rank's slices of the float weights through F.linear, all-reduced."""

    def __init__(self, wg: torch.Tensor, wu: torch.Tensor, wd: torch.Tensor, rank: int,
                 world: int) -> None:
        super().__init__()
        i0, i1 = rank * INTER // world, (rank + 1) * INTER // world
        fmt = torch.contiguous_format  # copies: every DenseTP holds its own weights
        self.wg = wg[i0:i1].clone(memory_format=fmt)
        self.wu = wu[i0:i1].clone(memory_format=fmt)
        self.wd = wd[:, i0:i1].clone(memory_format=fmt)
        self.world = world

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(F.silu(F.linear(x, self.wg)) * F.linear(x, self.wu), self.wd)
        if self.world > 1:
            dist.all_reduce(y)
        return y


def rel_err(x: torch.Tensor, ref: torch.Tensor) -> float:
    return ((x.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def log(rank: int, *args: object) -> None:
    if rank == 0:
        print(*args, flush=True)


def make_weights(dev: torch.device) -> List[torch.Tensor]:
    """gate, up [INTER, HIDDEN] and down [HIDDEN, INTER], float32 on dev, the same on every rank."""
    gen = torch.Generator().manual_seed(1234)
    return [(torch.randn(n, k, generator=gen) * 0.02).to(dev)
            for n, k in ((INTER, HIDDEN), (INTER, HIDDEN), (HIDDEN, INTER))]


def quantize_all(ws: List[torch.Tensor]) -> List[w4a16.QuantizedWeight]:
    """The three weights quantized (group GROUP, DTYPE scales), on the host."""
    return [w4a16.quantize(w, group_size=GROUP, dtype=DTYPE) for w in ws]


def quantized_mlp(qws: List[w4a16.QuantizedWeight], act_order: bool, dev: torch.device) -> MLP:
    """The whole (TP = 1) w4a16 MLP on dev; act_order gives each weight a random permutation
    (seeded: the same on every rank)."""
    gen = torch.Generator().manual_seed(99)
    lins = []
    for qw in qws:
        if act_order:
            qw = w4a16.QuantizedWeight(qw.qweight, qw.scales, qw.zeros,
                                       group_size=qw.group_size, n=qw.n, k=qw.k, dtype=qw.dtype,
                                       perm=torch.randperm(qw.k, generator=gen))
        lins.append(w4a16.nn.Linear.from_quantized(qw.to(dev)))
    return MLP(*lins)


def dequantized(mlp: MLP) -> List[torch.Tensor]:
    """The float64 weights the kernels multiply by (act-order undone), on the MLP's device."""
    return [m.qweight_info().dequantize().double()
            for m in (mlp.gate_proj, mlp.up_proj, mlp.down_proj)]


def reference(d: List[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """The float64 MLP on the dequantized weights d."""
    xd = x.double()
    return (F.silu(xd @ d[0].T) * (xd @ d[1].T)) @ d[2].T


def check_correctness(rank: int, world: int, dev: torch.device,
                      qws: List[w4a16.QuantizedWeight], ms: List[int]) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    for act_order in (False, True):
        whole = quantized_mlp(qws, act_order, dev)
        tp = shard_mlp(copy.deepcopy(whole), rank, world)
        d = dequantized(whole)
        for m in ms:
            gen = torch.Generator().manual_seed(m)  # the same x on every rank
            x = torch.randn(m, HIDDEN, generator=gen).to(dev, DTYPE)
            with torch.no_grad():
                ref = reference(d, x)
                y1, yt = whole(x), tp(x)
            gathered = [torch.empty_like(yt) for _ in range(world)]
            dist.all_gather(gathered, yt)
            spread = max((g.float() - yt.float()).abs().max().item() for g in gathered)
            yg = graph_output(lambda: tp(x))
            row = {"act_order": act_order, "m": m, "tp_vs_f64": rel_err(yt, ref),
                   "tp1_vs_f64": rel_err(y1, ref), "tp_vs_tp1": rel_err(yt, y1.double()),
                   "graph_vs_eager": rel_err(yg, yt.double()), "rank_spread": spread}
            row["ok"] = (row["tp_vs_f64"] < 1e-2 and row["tp1_vs_f64"] < 1e-2
                         and row["tp_vs_tp1"] < 1e-2 and row["graph_vs_eager"] < 1e-2
                         and spread == 0.0)
            rows.append(row)
        del whole, tp, d
        torch.cuda.empty_cache()
    return rows


def graph_output(fn: Callable[[], torch.Tensor]) -> torch.Tensor:
    """fn's output from one replay of a CUDA graph capturing it (after an eager warm-up)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        out = fn()
    out.fill_(0)
    g.replay()
    torch.cuda.synchronize()
    return out.clone()


def graph_time_us(fns: List[Callable[[], object]], reps: int) -> float:
    """Median microseconds per call of one CUDA graph holding fns (one call each), all ranks in
    step (the graphs' collectives synchronise them)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for fn in fns:  # eager warm-up: workspaces, NCCL communicators, cuBLAS handles
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        for fn in fns:
            fn()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    dist.barrier()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / len(fns))
    torch.cuda.synchronize()
    dist.barrier()
    del g
    return statistics.median(times)


def bench(rank: int, world: int, dev: torch.device, ws: List[torch.Tensor],
          qws: List[w4a16.QuantizedWeight], ms: List[int], copies: int,
          reps: int) -> List[Dict[str, Any]]:
    whole = quantized_mlp(qws, False, dev)
    tp = shard_mlp(copy.deepcopy(whole), rank, world)
    wb = [w.to(DTYPE) for w in ws]
    configs = {
        f"w4a16 TP={world}": [tp] + [copy.deepcopy(tp) for _ in range(copies - 1)],
        "w4a16 TP=1": [whole] + [copy.deepcopy(whole) for _ in range(copies - 1)],
        f"bf16 TP={world}": [DenseTP(*wb, rank, world) for _ in range(copies)],
        "bf16 TP=1": [DenseTP(*wb, 0, 1) for _ in range(copies)],
    }
    del wb
    rows = []
    for m in ms:
        x = torch.randn(m, HIDDEN, device=dev).to(DTYPE)
        row: Dict[str, Any] = {"m": m}
        for name, mods in configs.items():
            row[name] = graph_time_us([(lambda mod=mod: mod(x)) for mod in mods], reps)
        buf = torch.randn(m, HIDDEN, device=dev).to(DTYPE)
        row["all-reduce alone"] = graph_time_us([lambda: dist.all_reduce(buf)] * copies, reps) \
            if world > 1 else 0.0
        rows.append(row)
        log(rank, json.dumps(row))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="M = 1 and 16 only, fewer reps")
    ap.add_argument("--copies", type=int, default=4, help="MLP weight copies per graph")
    ap.add_argument("--reps", type=int, default=50, help="graph replays timed")
    ap.add_argument("--json", help="write the results here (rank 0)")
    args = ap.parse_args()
    ms = [1, 16] if args.quick else [1, 16, 128]
    reps = 10 if args.quick else args.reps

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    try:
        dist.init_process_group("nccl", device_id=dev)
    except TypeError:  # torch without device_id
        dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    log(rank, f"# {world} x {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, "
              f"NCCL {torch.cuda.nccl.version()}, "
              f"NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}")
    ws = make_weights(dev)
    qws = quantize_all(ws)
    checks = check_correctness(rank, world, dev, qws, ms)
    log(rank, "\n## Correctness (relative Frobenius error; bf16 output)\n")
    log(rank, "| act-order | M | TP vs float64 | TP=1 vs float64 | TP vs TP=1 | graph vs eager "
              "| ranks differ by | ok |")
    log(rank, "|---" * 8 + "|")
    for c in checks:
        log(rank, f"| {c['act_order']} | {c['m']} | {c['tp_vs_f64']:.2e} | {c['tp1_vs_f64']:.2e} "
                  f"| {c['tp_vs_tp1']:.2e} | {c['graph_vs_eager']:.2e} | {c['rank_spread']:.1e} "
                  f"| {c['ok']} |")
    ok = all(c["ok"] for c in checks)
    timing = bench(rank, world, dev, ws, qws, ms, args.copies, reps)
    cols = list(dict.fromkeys([f"w4a16 TP={world}", "w4a16 TP=1", f"bf16 TP={world}",
                               "bf16 TP=1", "all-reduce alone"]))  # world 1: no repeats
    log(rank, f"\n## Llama-3-8B MLP ({HIDDEN} / {INTER}, group {GROUP}, bf16), one CUDA graph, "
              f"{args.copies} weight copies, median of {reps} replays, us per MLP\n")
    log(rank, "| M | " + " | ".join(cols) + f" | w4a16 TP=1 / TP={world} |")
    log(rank, "|---" * (len(cols) + 2) + "|")
    for t in timing:
        speed = t["w4a16 TP=1"] / t[f"w4a16 TP={world}"]
        log(rank, f"| {t['m']} | " + " | ".join(f"{t[c]:.1f}" for c in cols)
            + f" | {speed:.2f}x |")
    if rank == 0 and args.json:
        with open(args.json, "w") as f:
            json.dump({"world": world, "device": torch.cuda.get_device_name(dev),
                       "torch": torch.__version__, "checks": checks, "timing": timing}, f,
                      indent=1)
    # a failed check on any rank fails every rank (an exception instead ends the rank, and
    # torchrun the others)
    flag = torch.tensor([0 if ok else 1], device=dev)
    dist.all_reduce(flag)
    ok = flag.item() == 0
    dist.destroy_process_group()
    log(rank, "\nOK" if ok else "\nFAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
