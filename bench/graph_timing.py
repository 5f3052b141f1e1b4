"""CUDA-graph timing shared by the Python benchmarks (docs/DESIGN.md, Measuring).

Warm-up and capture run on one side stream (compiled code may keep the stream it first ran on);
the graph is replayed a few times, then timed with CUDA events over ``reps`` replays, and the
median per launch is returned.
"""

from __future__ import annotations

import statistics
from typing import Callable

import torch


def graph_us(fn: Callable[[], object], launches: int = 1, reps: int = 20) -> float:
    """Median microseconds per launch of a CUDA graph holding one call of fn.

    Args:
        fn: issues the work (may launch several kernels); called 3 times to warm up, then captured.
        launches: how many launches one call of fn holds (the result is divided by it), e.g. one
            per weight copy when fn cycles through copies that span more than the L2.
        reps: timed replays (the median is taken).
    """
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        fn()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    times = []
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1000.0 / launches)
    return statistics.median(times)
