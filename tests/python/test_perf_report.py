"""tools/perf_report.py on a tiny synthetic ``w4a16_bench --json`` run (no GPU, matplotlib optional)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "perf_report.py"


def load_tool():
    """Import tools/perf_report.py as a module."""
    spec = importlib.util.spec_from_file_location("perf_report", TOOL)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve annotations through it
    spec.loader.exec_module(mod)
    return mod


def timing(us: float, kernel: str | None = None, **extra) -> dict:
    """A successful timing object as bench/harness.c writes it."""
    out = {"status": "W4A16_STATUS_OK", "median_us": us, "min_us": us, "max_us": us}
    if kernel:
        out["kernel"] = kernel
    out.update(extra)
    return out


def synthetic_run() -> dict:
    """Two layers x two M; one problem without cuBLAS, one with a failed kernel, one with a pick."""
    problems = [
        {"m": 1, "n": 4096, "k": 4096, "floor_us": 2.8,
         "cublas": timing(14.0),
         "results": [timing(4.0, "w4a16_gemv_a"), timing(5.0, "w4a16_gemv_b")],
         "heuristic": {"kernel": "w4a16_gemv_b"}, "skipped": []},
        {"m": 16, "n": 4096, "k": 4096, "floor_us": 2.9,
         "cublas": None,
         "results": [timing(5.5, "w4a16_sm90_a")], "skipped": []},
        {"m": 1, "n": 6144, "k": 4096, "floor_us": 4.1,
         "cublas": timing(20.0),
         "results": [{"status": "W4A16_STATUS_INVALID_PROBLEM", "message": "no", "kernel": "x"},
                     timing(5.0, "w4a16_gemv_c")], "skipped": []},
        {"m": 16, "n": 6144, "k": 4096, "floor_us": 4.2,
         "cublas": timing(21.0),
         "results": [timing(7.0, "w4a16_gemv_d", heuristic=True)], "skipped": []},
    ]
    return {"tool": "w4a16_bench", "version": "0.1.0",
            "device": {"name": "NVIDIA Test GPU", "compute_capability": 90, "sm_count": 132},
            "settings": {"dtype": "bf16", "mode": "FINEGRAINED_SCALE_ONLY", "group_size": 128,
                         "peak_gbps": 3100.0, "peak_tflops": 800.0, "warmup": 5,
                         "iterations": 20, "cublas_algos": 4, "rounds": True, "eager": False,
                         "kernels": None, "exclude": None},
            "complete": True, "problems": problems}


@pytest.fixture()
def run_file(tmp_path: Path) -> Path:
    path = tmp_path / "test.json"
    path.write_text(json.dumps(synthetic_run()))
    return path


def test_rows(run_file: Path) -> None:
    tool = load_tool()
    run = tool.load_run(str(run_file), "abc1234", "2026-12-06")
    # the default layers come first in DESIGN.md's order: 6144x4096, then 4096x4096
    assert [(r.n, r.m) for r in run.rows] == [(6144, 1), (6144, 16), (4096, 1), (4096, 16)]
    r = run.rows[2]
    assert r.best_kernel == "w4a16_gemv_a" and r.best_us == 4.0
    assert r.pick_us == 5.0
    assert r.speedup == pytest.approx(3.5)
    assert r.floor_fraction == pytest.approx(0.7)
    assert run.rows[0].best_kernel == "w4a16_gemv_c"  # the failed kernel is skipped
    assert run.rows[1].pick_us == 7.0                  # "heuristic": true on a result
    assert run.rows[3].cublas_us is None and run.rows[3].speedup is None
    assert run.has_pick


def test_markdown(run_file: Path, tmp_path: Path) -> None:
    tool = load_tool()
    out = tmp_path / "PERFORMANCE.md"
    assert tool.main([str(run_file), "--output", str(out), "--commit", "abc1234",
                      "--date", "2026-12-06"]) == 0
    text = out.read_text()
    assert "## NVIDIA Test GPU (132 SMs, compute capability 90)" in text
    assert "2026-12-06, commit abc1234" in text
    assert "build/bench/w4a16_bench --iterations 20 --rounds --m 1,16 --nk 6144x4096,4096x4096" in text
    assert "| 4096x4096 | 1 | `w4a16_gemv_a` | 4.00 | 5.00 | 14.00 | 3.500 | 0.700 |" in text
    assert "| 4096x4096 | 16 | `w4a16_sm90_a` | 5.50 | — | — | — | 0.527 |" in text


def test_bad_input(tmp_path: Path) -> None:
    tool = load_tool()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert tool.main([str(bad)]) == 2


def test_plot(run_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    tool = load_tool()
    out = tmp_path / "PERFORMANCE.md"
    assert tool.main([str(run_file), "--output", str(out), "--plot-dir", str(tmp_path),
                      "--commit", "abc1234", "--date", "2026-12-06"]) == 0
    png = tmp_path / "perf-nvidia-test-gpu.png"
    assert png.stat().st_size > 1000
    assert "![speed-up over cuBLASLt against M, NVIDIA Test GPU](perf-nvidia-test-gpu.png)" in out.read_text()


def test_keeps_sections_after_marker(run_file: Path, tmp_path: Path) -> None:
    tool = load_tool()
    out = tmp_path / "PERFORMANCE.md"
    out.write_text("# old tables\n\n" + tool.MARKER + "\n\n## Mixture of experts\n\nkept\n")
    assert tool.main([str(run_file), "--output", str(out), "--commit", "abc1234",
                      "--date", "2026-12-06"]) == 0
    text = out.read_text()
    assert "# old tables" not in text
    assert text.count(tool.MARKER) == 1
    assert text.endswith(tool.MARKER + "\n\n## Mixture of experts\n\nkept\n")
    assert text.index("| 4096x4096 | 1 |") < text.index(tool.MARKER)
