"""The heuristic's quality on committed profiles, without a GPU.

``w4a16 tune --replay`` re-runs this build's heuristic against the times a profile recorded on a
device (heuristics/profiles/, xz-compressed ``w4a16 tune --dump`` files) and prints, per problem,
the time of the heuristic's first pick over the profiled best. The rule table (heuristics/rules.tsv)
must keep, on each profile: at least 95 % of the problems within 1.10x of the best, a geometric
mean of the ratio at most 1.02, and no ratio above 1.5. The profiles cover the eight Llama-3
layers on an H100 (every M from 1 to 4096 for bf16 scale-only, zero points and per-column, fp16
scale-only; decode M = 1..16) and an H200 (decode rows; a profile held out from their fit).
"""

from __future__ import annotations

import lzma
import math
import os
import re
import subprocess
from pathlib import Path
from typing import List

import pytest

PROFILES_DIR = Path(__file__).resolve().parents[2] / "heuristics" / "profiles"
PROFILES = [
    "session27-heur9-heur_bf16_fgs",     # H100, bf16 scale-only g128, M = 1088..1536
    "session27-heur9-heur_bf16_fgsz",    # H100, bf16 zero points g128, M = 1088..1536
    "session27-heur7-heur_bf16_pc",      # H100, bf16 per-column, M = 1..4096
    "session27-heur8-heur_f16_fgs",      # H100, fp16 scale-only g128
    "session28-h100-heur_bf16_fgs",      # H100, bf16 scale-only g128, M = 513..704
    "session28-h100dec-dec_bf16_fgs",    # H100, bf16 scale-only g128, decode M = 1..16
    "session28-h200c-heur_bf16_fgs",     # H200, bf16 scale-only g128, decode (held out)
    "session28-h200c-heur_bf16_fgsz",    # H200, bf16 zero points g128, decode (held out)
]
TOOL = os.environ.get("W4A16_TOOL")
ROW = re.compile(r"^\|\s*\d+\s*\|.*\|\s*([0-9.]+)\s*\|\s*$")


def replay_ratios(profile: Path, tmp_path: Path) -> List[float]:
    """The pick-over-best ratio of every problem of profile under this build's heuristic."""
    plain = tmp_path / (profile.name[:-3])
    plain.write_bytes(lzma.decompress(profile.read_bytes()))
    out = subprocess.run([TOOL, "tune", "--replay", str(plain)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    ratios = [float(m.group(1)) for line in out.stdout.splitlines() if (m := ROW.match(line))]
    summary = re.search(r"within 10% of the best: (\d+) of (\d+)", out.stdout)
    assert summary, out.stdout[-2000:]
    assert len(ratios) == int(summary.group(2)) > 0, (len(ratios), summary.group(0))
    return ratios


@pytest.mark.skipif(not TOOL or not Path(TOOL).exists(),
                    reason="needs the built w4a16 command (W4A16_TOOL, set by ctest)")
@pytest.mark.parametrize("name", PROFILES)
def test_heuristic_quality_on_profile(name: str, tmp_path: Path) -> None:
    ratios = replay_ratios(PROFILES_DIR / f"{name}.tsv.xz", tmp_path)
    within = sum(r <= 1.10 for r in ratios) / len(ratios)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    assert within >= 0.95, f"{name}: {within:.1%} of {len(ratios)} problems within 1.10x"
    assert geomean <= 1.02, f"{name}: pick over best {geomean:.4f} (geometric mean)"
    assert max(ratios) <= 1.5, f"{name}: worst pick over best {max(ratios):.3f}"
