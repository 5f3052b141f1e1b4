"""CUDA-graph timing shared by the Python benchmarks (docs/DESIGN.md, Measuring).

Warm-up and capture run on one side stream (compiled code may keep the stream it first ran on);
the graph is replayed a few times, then timed with CUDA events over ``reps`` replays, and the
median per launch is returned. :func:`compare_us` times several graphs in alternating rounds
with the card idle a moment before each, each graph under its own load just before its timing, the
lowest round of each: a graph timed alone right after its problem's data was generated ran up to
1.17x slower than the same graph timed a little later (H100, the grouped decode GEMM), and rounds
give every graph of the comparison the same chance.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Dict

import torch


def capture(fn: Callable[[], object]) -> torch.cuda.CUDAGraph:
    """A CUDA graph holding one call of fn, after 3 eager warm-up calls and 3 warm-up replays."""
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
    return g


def each_copy(fn: Callable[[int], object], copies: int) -> Callable[[], None]:
    """A function that calls fn(c) for c = 0 .. copies - 1 in turn: one graph holding a launch per
    weight copy (time it with ``launches=copies``)."""
    def run() -> None:
        for c in range(copies):
            fn(c)
    return run


def replay_us(g: torch.cuda.CUDAGraph, launches: int = 1, reps: int = 20) -> float:
    """Median microseconds per launch over ``reps`` timed replays of g (holding ``launches``)."""
    times = []
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1000.0 / launches)
    return statistics.median(times)


def graph_us(fn: Callable[[], object], launches: int = 1, reps: int = 20) -> float:
    """Median microseconds per launch of a CUDA graph holding one call of fn.

    Args:
        fn: issues the work (may launch several kernels); called 3 times to warm up, then captured.
        launches: how many launches one call of fn holds (the result is divided by it), e.g. one
            per weight copy when fn cycles through copies that span more than the L2.
        reps: timed replays (the median is taken).
    """
    return replay_us(capture(fn), launches, reps)


def load(g: torch.cuda.CUDAGraph, seconds: float) -> None:
    """Replay g back to back for about ``seconds`` (at least once), then wait for it."""
    start = time.perf_counter()
    while True:
        g.replay()
        torch.cuda.synchronize()
        if time.perf_counter() - start >= seconds:
            return


def compare_us(fns: Dict[str, Callable[[], object]], launches: int = 1, reps: int = 20,
               rounds: int = 3, settle_s: float = 0.25, load_s: float = 0.2) -> Dict[str, float]:
    """Microseconds per launch of each fn, its graphs timed in turn in ``rounds`` rounds.

    Each fn is captured once (as :func:`graph_us` does); every round, after ``settle_s`` seconds
    with the card idle, each graph is replayed for ``load_s`` seconds and then timed (the median of
    ``reps`` replays), and the lowest of the rounds is returned for each name. The load times every
    graph on a card that has been busy a while, with its own work: without it the graph timed first
    after the idle moment ran the large grouped GEMMs up to 1.2x faster than the same kernel timed
    later in the round (H100, Mixtral at T = 4096). A fn whose warm-up or capture raises
    RuntimeError (an op the device or dtype lacks) gets NaN.
    """
    graphs = {}
    out: Dict[str, float] = {}
    for name, fn in fns.items():
        try:
            graphs[name] = capture(fn)
        except RuntimeError:
            out[name] = float("nan")
    for _ in range(rounds):
        time.sleep(settle_s)
        for name, g in graphs.items():
            load(g, load_s)
            us = replay_us(g, launches, reps)
            out[name] = min(out.get(name, us), us)
    return out
