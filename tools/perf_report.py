#!/usr/bin/env python3
"""Write docs/PERFORMANCE.md (and one plot per GPU) from ``w4a16_bench --json`` output.

Usage::

    build/bench/w4a16_bench --rounds --json -o h100.json
    python3 tools/perf_report.py h100.json [h200.json ...] --output docs/PERFORMANCE.md --plot-dir docs

Each input is one benchmark run (bench/harness.c writes it): ``device`` (name, compute capability,
SM count), ``settings`` (dtype, mode, group size, timing options, kernel filters) and ``problems``,
each with ``m``, ``n``, ``k``, ``floor_us``, ``cublas`` (null or a timing) and ``results`` (the
kernels that ran, fastest first, each with ``kernel``, ``status`` and ``median_us``).

Per GPU (runs grouped by device name) and per run the report holds one table, a row per layer
(N x K) and M: the fastest w4a16 kernel and its time, the time of the heuristic's pick where the
run records one, cuBLASLt's time, the speed-up over cuBLASLt and the fraction of the roofline floor.
The harness does not record the heuristic's pick today; a problem that carries
``"heuristic": {"kernel": NAME}`` (or ``"heuristic": NAME``), or a result with ``"heuristic": true``,
gets the column. A run may carry top-level ``commit`` and ``date`` strings; otherwise ``--commit``
(default: ``git rev-parse --short HEAD``) and ``--date`` (default: today, UTC) are used.

Where matplotlib is installed, one PNG per GPU goes to ``--plot-dir``: speed-up over cuBLASLt
against M, one line per layer (per run and layer when a GPU has several runs).
Standard library only otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

BENCH = "build/bench/w4a16_bench"
DEFAULT_MS = (1, 16, 64, 256, 1024, 4096)
DEFAULT_LAYERS = (
    (6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336),
    (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672),
)
MODE_FLAGS = {
    "FINEGRAINED_SCALE_ONLY": "fgs",
    "FINEGRAINED_SCALE_AND_ZEROS": "fgsz",
    "PER_COLUMN_SCALE_ONLY": "pc",
}
MODE_WORDS = {"fgs": "scale-only", "fgsz": "scale and zeros", "pc": "per-column scale"}
# The harness's defaults (bench/harness.c): a setting equal to these adds no flag to the command.
DEFAULT_SETTINGS = {
    "dtype": "bf16", "mode": "fgs", "group_size": 128, "warmup": 5, "iterations": 10,
    "cublas_algos": 4,
}

METHOD = (
    "Method ([DESIGN.md](DESIGN.md#measuring)): every kernel that can implement a problem is timed as "
    "CUDA-graph replays with events after a warm-up, the weights rotating over enough copies to leave "
    "L2, the median reported; cuBLASLt (same dtype, dense weights) is timed in the same process by the "
    "same method (with `--rounds`, in the same rounds as the kernels). Floor = max(bytes / peak GB/s, "
    "FLOPs / peak TFLOP/s); \"of floor\" = floor / time (1.0 = at the roofline); \"vs cuBLAS\" = "
    "cuBLASLt time / kernel time (> 1: faster than cuBLAS)."
)


@dataclass
class Row:
    """One problem of a run: the times the report shows for it."""

    n: int
    k: int
    m: int
    best_kernel: Optional[str]
    best_us: Optional[float]
    pick_us: Optional[float]
    cublas_us: Optional[float]
    floor_us: Optional[float]

    @property
    def speedup(self) -> Optional[float]:
        """cuBLASLt time over the best kernel's time, or None if either is missing."""
        if self.best_us and self.cublas_us:
            return self.cublas_us / self.best_us
        return None

    @property
    def floor_fraction(self) -> Optional[float]:
        """Roofline floor over the best kernel's time, or None if either is missing."""
        if self.best_us and self.floor_us:
            return self.floor_us / self.best_us
        return None


@dataclass
class Run:
    """One ``w4a16_bench --json`` file, reduced to what the report needs."""

    path: str
    device: str
    sm_count: Optional[int]
    compute_capability: Optional[int]
    settings: dict[str, Any]
    commit: str
    date: str
    rows: list[Row] = field(default_factory=list)

    @property
    def has_pick(self) -> bool:
        """Whether any problem of the run records the heuristic's pick."""
        return any(r.pick_us is not None for r in self.rows)

    def label(self) -> str:
        """A short name of the run's dtype, mode and group size."""
        s = self.settings
        mode = MODE_FLAGS.get(str(s.get("mode")), str(s.get("mode", "?")))
        group = "" if mode == "pc" else f", group {s.get('group_size', '?')}"
        return f"{s.get('dtype', '?')}, {MODE_WORDS.get(mode, mode)}{group}"


def ok_time(timing: Any) -> Optional[float]:
    """The median time of a harness timing object, or None if it is absent or failed."""
    if not isinstance(timing, dict) or timing.get("status") != "W4A16_STATUS_OK":
        return None
    t = timing.get("median_us")
    return float(t) if isinstance(t, (int, float)) and t > 0 else None


def heuristic_time(problem: dict[str, Any]) -> Optional[float]:
    """The time of the heuristic's pick among the problem's results, if the run records one."""
    results = problem.get("results") or []
    pick = problem.get("heuristic")
    name = pick.get("kernel") if isinstance(pick, dict) else pick
    for r in results:
        if (isinstance(name, str) and r.get("kernel") == name) or r.get("heuristic") is True:
            return ok_time(r)
    return None


def problem_row(problem: dict[str, Any]) -> Row:
    """Reduce one problem of the harness's JSON to a report row."""
    timed: list[tuple[float, Optional[str]]] = []
    for r in problem.get("results") or []:
        t = ok_time(r)
        if t is not None:
            timed.append((t, r.get("kernel")))
    best_us, best_kernel = min(timed, key=lambda x: x[0]) if timed else (None, None)
    floor = problem.get("floor_us")
    return Row(
        n=int(problem["n"]), k=int(problem["k"]), m=int(problem["m"]),
        best_kernel=best_kernel, best_us=best_us, pick_us=heuristic_time(problem),
        cublas_us=ok_time(problem.get("cublas")),
        floor_us=float(floor) if isinstance(floor, (int, float)) else None,
    )


def git_commit() -> str:
    """The short hash of HEAD, or 'unknown' outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True, cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load_run(path: str, commit: str, date: str) -> Run:
    """Read one ``w4a16_bench --json`` file."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or not isinstance(data.get("problems"), list):
        raise ValueError(f"{path}: not w4a16_bench --json output (no 'problems' list)")
    dev = data.get("device") or {}
    run = Run(
        path=path, device=str(dev.get("name", "unknown device")), sm_count=dev.get("sm_count"),
        compute_capability=dev.get("compute_capability"), settings=data.get("settings") or {},
        commit=str(data.get("commit") or commit), date=str(data.get("date") or date),
    )
    run.rows = sorted((problem_row(p) for p in data["problems"]),
                      key=lambda r: (layer_order(r.n, r.k), r.n, r.k, r.m))
    return run


def layer_order(n: int, k: int) -> int:
    """Position of a layer: the default layers in DESIGN.md's order, then the others."""
    try:
        return DEFAULT_LAYERS.index((n, k))
    except ValueError:
        return len(DEFAULT_LAYERS)


def bench_command(run: Run) -> str:
    """The w4a16_bench command line that reproduces a run's problems and settings."""
    s = run.settings
    args = [BENCH]
    mode = MODE_FLAGS.get(str(s.get("mode")), s.get("mode"))
    given = {"dtype": s.get("dtype"), "mode": mode, "group_size": s.get("group_size"),
             "warmup": s.get("warmup"), "iterations": s.get("iterations"),
             "cublas_algos": s.get("cublas_algos")}
    flags = {"dtype": "--dtype", "mode": "--mode", "group_size": "--group", "warmup": "--warmup",
             "iterations": "--iterations", "cublas_algos": "--cublas-algos"}
    for key, flag in flags.items():
        value = given[key]
        if value is None or value == DEFAULT_SETTINGS[key] or (key == "group_size" and mode == "pc"):
            continue
        if key == "cublas_algos" and value == 0:
            args.append("--no-cublas")
            continue
        args += [flag, str(value)]
    for key in ("bias", "rounds", "eager"):
        if s.get(key):
            args.append("--" + key)
    for key, flag in (("kernels", "--kernels"), ("exclude", "--exclude")):
        if s.get(key):
            args += [flag, f"'{s[key]}'"]
    ms = sorted({r.m for r in run.rows})
    layers = sorted({(r.n, r.k) for r in run.rows}, key=lambda nk: (layer_order(*nk), nk))
    if tuple(ms) != DEFAULT_MS or tuple(layers) != DEFAULT_LAYERS:
        args += ["--m", ",".join(map(str, ms)), "--nk", ",".join(f"{n}x{k}" for n, k in layers)]
    return " ".join(args + ["--json", "-o", Path(run.path).name])


def fmt(value: Optional[float], digits: int) -> str:
    """A number with the given decimals, or an em dash when absent."""
    return "—" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def run_table(run: Run) -> list[str]:
    """The markdown table of one run."""
    head = ["N x K", "M", "best w4a16 kernel", "µs"]
    if run.has_pick:
        head.append("heuristic pick µs")
    head += ["cuBLAS µs", "vs cuBLAS", "of floor"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in run.rows:
        kernel = f"`{r.best_kernel}`" if r.best_kernel else "none ran"
        cells = [f"{r.n}x{r.k}", str(r.m), kernel, fmt(r.best_us, 2)]
        if run.has_pick:
            cells.append(fmt(r.pick_us, 2))
        cells += [fmt(r.cublas_us, 2), fmt(r.speedup, 3), fmt(r.floor_fraction, 3)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def slug(name: str) -> str:
    """A file-name-safe lower-case form of a device name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def group_by_device(runs: Sequence[Run]) -> dict[str, list[Run]]:
    """Runs keyed by device name, in the order the devices first appear."""
    out: dict[str, list[Run]] = {}
    for run in runs:
        out.setdefault(run.device, []).append(run)
    return out


def plot_device(device: str, runs: Sequence[Run], path: Path) -> bool:
    """Write the speed-up-over-cuBLAS plot of one GPU; False if matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for run in runs:
        for n, k in sorted({(r.n, r.k) for r in run.rows}, key=lambda nk: (layer_order(*nk), nk)):
            pts = [(r.m, r.speedup) for r in run.rows if (r.n, r.k) == (n, k) and r.speedup]
            if not pts:
                continue
            label = f"{n}x{k}" + (f" ({run.label()})" if len(runs) > 1 else "")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel("M (tokens)")
    ax.set_ylabel("speed-up over cuBLASLt (cuBLAS time / w4a16 time)")
    ax.set_title(f"w4a16, best kernel per problem: {device}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def render(runs: Sequence[Run], plots: dict[str, str], regenerate: str) -> str:
    """The whole markdown document; ``plots`` maps a device to its image path relative to it."""
    out = ["# Performance", "",
           "Current measured tables, one section per GPU, generated by tools/perf_report.py from "
           "`w4a16_bench --json` output; a new measurement replaces the old one (git keeps the "
           "history). To regenerate:", "", regenerate, "", METHOD, ""]
    for device, dev_runs in group_by_device(runs).items():
        first = dev_runs[0]
        info = ", ".join(x for x in (
            f"{first.sm_count} SMs" if first.sm_count else "",
            f"compute capability {first.compute_capability}" if first.compute_capability else "") if x)
        out += [f"## {device}" + (f" ({info})" if info else ""), ""]
        if device in plots:
            out += [f"![speed-up over cuBLASLt against M, {device}]({plots[device]})", ""]
        for run in dev_runs:
            s = run.settings
            peaks = ""
            if s.get("peak_gbps") and s.get("peak_tflops"):
                peaks = f"; floor at {s['peak_gbps']:g} GB/s and {s['peak_tflops']:g} TFLOP/s"
            out += [f"### {run.label()}", "",
                    f"{run.date}, commit {run.commit}, {device}{peaks}. Command:", "",
                    "    " + bench_command(run), ""]
            out += run_table(run) + [""]
    return "\n".join(out).rstrip() + "\n"


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+", help="w4a16_bench --json output files")
    p.add_argument("-o", "--output", help="markdown file to write (default: stdout)")
    p.add_argument("--plot-dir", help="folder for the PNG plots (default: no plots)")
    p.add_argument("--commit", help="commit measured (default: git rev-parse --short HEAD)")
    p.add_argument("--date", help="date measured (default: today, UTC)")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Read the runs, write the report and the plots; 0 on success, 2 on bad input."""
    args = parse_args(argv)
    commit = args.commit or git_commit()
    date = args.date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    try:
        runs = [load_run(p, commit, date) for p in args.inputs]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"perf_report: {e}", file=sys.stderr)
        return 2
    plots: dict[str, str] = {}
    if args.plot_dir:
        base = Path(args.output).resolve().parent if args.output else Path.cwd()
        for device, dev_runs in group_by_device(runs).items():
            png = Path(args.plot_dir) / f"perf-{slug(device)}.png"
            if plot_device(device, dev_runs, png):
                try:
                    plots[device] = str(png.resolve().relative_to(base))
                except ValueError:
                    plots[device] = str(png.resolve())
            else:
                print("perf_report: matplotlib is not installed; no plots written", file=sys.stderr)
                break
    regenerate = "\n".join("    " + c for c in (
        "cmake -S . -B build -G Ninja && cmake --build build -j",
        *(bench_command(r) for r in runs),
        "python3 tools/perf_report.py " + " ".join(Path(r.path).name for r in runs)
        + " --output docs/PERFORMANCE.md --plot-dir docs"))
    text = render(runs, plots, regenerate)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
