"""generator/fit.py (``python3 -m generator fit``) without a GPU.

A synthetic profile gives known rows (the class that is best on the worst sample, the "-alt" row for
a sample its class does not cover, the unrestricted class on ties, a cluster-restricted class where
only it is ahead); every override place merges where it says; malformed inputs name their line; the
committed inputs (heuristics/fit.tsv, heuristics/profiles, heuristics/overrides.tsv) give the
committed heuristics/rules.tsv byte for byte, in any hash seed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Sequence

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from generator import fit, rules  # noqa: E402

HEADER = ("m\tn\tk\tgroup\tmode\tdtype\tkernel\tfamily\ttile_n\ttile_m\ttile_k\tcluster\tschedule\tstages\t"
          "status\tmedian_us\ttflops\tgbps\theur_rank\theur_rule\theur_est_us\tsplit_k\twaves_eff")


def kernel_row(m: int, n: int, k: int, family: str, tile: str, us: float, est: float, stages: int = 4,
               cluster: str = "1x1x1", status: str = "W4A16_STATUS_OK") -> str:
    """One row of a `w4a16 tune --dump` profile (tile: 'NxMxK')."""
    tn, tm, tk = tile.split("x")
    name = "w4a16_%s_bf16_u4_fgs_%s_%s_s%d" % (family, tile, cluster, stages)
    return "\t".join(str(x) for x in (m, n, k, 128, "fgs", "bf16", name, family, tn, tm, tk, cluster, "x",
                                      stages, status, us, 0, 0, 1, "r", est, 1, 1.0))


def profile_text(rows: Sequence[str], sm: int = 132, cc: int = 90) -> str:
    head = "# w4a16 tune --dump\tdevice=Test\tsm_count=%d\tcc=%d" % (sm, cc)
    return "%s\n%s\n%s\n" % (head, HEADER, "\n".join(rows))


# Two layers at M = 1 and M = 64 (buckets 1 and 33-64, shapes n0-4096 and n4097-up):
#   M = 1, N = 4096: gemv 32x8x1024 best; M = 1, N = 8192: gemv wins, 16x4x2048 best, and K = 3072 on
#   the second problem is not a multiple of 2048 (no 16x4x2048 there): "-alt" row 32x8x1024.
#   M = 64: sm90 128x64x256 in two cluster sizes; only the 2-CTA kernel is fast on N = 8192.
SYNTHETIC = [
    kernel_row(1, 4096, 4096, "gemv", "32x8x1024", 10.0, 1.0),
    kernel_row(1, 4096, 4096, "gemv", "16x4x2048", 12.0, 1.0),
    kernel_row(1, 4096, 4096, "sm90", "128x16x256", 20.0, 1.0),
    kernel_row(1, 8192, 4096, "gemv", "32x8x1024", 11.0, 1.0),
    kernel_row(1, 8192, 4096, "gemv", "16x4x2048", 10.0, 1.0),
    kernel_row(1, 8192, 3072, "gemv", "32x8x1024", 9.0, 1.0),
    kernel_row(1, 8192, 3072, "sm90", "128x16x256", 9.5, 1.0),
    kernel_row(1, 8192, 3072, "sm90", "128x16x256", 1.0, 1.0, status="W4A16_STATUS_INVALID_PROBLEM"),
    kernel_row(64, 4096, 4096, "sm90", "128x64x256", 15.0, 2.0),
    kernel_row(64, 4096, 4096, "sm90", "128x64x256", 15.0, 3.0, cluster="2x1x1"),
    kernel_row(64, 8192, 4096, "sm90", "128x64x256", 30.0, 2.0),
    kernel_row(64, 8192, 4096, "sm90", "128x64x256", 20.0, 3.0, cluster="2x1x1"),
    kernel_row(64, 8192, 4096, "sm80", "128x64x128", 25.0, 1.0),
]
SPEC = ("prefix\tm_buckets\tshapes\tprofiles\tnote\n"
        "t\t1 33-64\tn0-4096 n4097-up\tsyn*.tsv\ttest\n")


def loader(texts: Dict[str, str]):
    return lambda name: fit.read_profile_text(texts[name], name)


def synthetic_rows() -> List[Dict[str, str]]:
    return fit.fitted_rows(fit.parse_fit_spec(SPEC), loader({"syn_a.tsv": profile_text(SYNTHETIC)}),
                           ["syn_a.tsv", "other.tsv"])


def cls(row: Dict[str, str]) -> tuple:
    return (row["family"], row["tile_n_min"], row["tile_m_min"], row["tile_k_min"], row["stages_min"],
            row["cluster_min"], row["cluster_max"])


def test_synthetic_profile_gives_known_rows() -> None:
    rows = synthetic_rows()
    assert [r["name"] for r in rows] == ["t-m1-1-n0-4096", "t-m1-1-n4097-up", "t-m1-1-n4097-up-alt",
                                         "t-m33-64-n0-4096", "t-m33-64-n4097-up"]
    by = {r["name"]: r for r in rows}
    assert cls(by["t-m1-1-n0-4096"]) == ("GEMV", "32", "8", "1024", "", "", "")
    # the 16x4x2048 chain (1.0 on the sample it covers, then 32x8x1024 at 1.0) beats 32x8x1024 alone
    # (1.1 on N = 8192, K = 4096)
    assert cls(by["t-m1-1-n4097-up"]) == ("GEMV", "16", "4", "2048", "", "", "")
    assert cls(by["t-m1-1-n4097-up-alt"]) == ("GEMV", "32", "8", "1024", "", "", "")
    assert "where the primary row's class" in by["t-m1-1-n4097-up-alt"]["note"]
    # a tie between the tile and its unclustered kernels goes to the unrestricted class
    assert cls(by["t-m33-64-n0-4096"]) == ("SM90", "128", "64", "256", "", "", "")
    # the runtime's pick inside the class (lowest estimate: 1x1x1 at 30 us) loses to the 2-CTA kernel
    assert cls(by["t-m33-64-n4097-up"]) == ("SM90", "128", "64", "256", "", "2", "")
    assert by["t-m33-64-n4097-up"]["note"].endswith("sm90 128x64x256, 2x1x1 cluster")
    for r in rows:
        assert (r["sm_count_min"], r["cc_min"]) == ("132", "90")
    assert by["t-m1-1-n0-4096"]["n_max"] == "4096" and by["t-m1-1-n0-4096"]["n_min"] == ""
    assert by["t-m33-64-n4097-up"]["m_min"] == "33" and by["t-m33-64-n4097-up"]["n_max"] == ""


def test_fit_group_scores_the_worst_sample_first() -> None:
    def t(kernel: str, tile: tuple, us: float) -> fit.Timing:
        return fit.Timing(kernel=kernel, cls=tile, stages=4, cluster=1, us=us, est_us=1.0)
    a, b = ("gemv", 32, 8, 1024), ("gemv", 16, 4, 2048)
    # a: 1.00 and 1.20; b: 1.08 and 1.08 -> b (the worst slowdown weighs 10x)
    samples = [[t("a", a, 10.0), t("b", b, 10.8)], [t("a", a, 12.0), t("b", b, 10.8)]]
    got = fit.fit_group(samples)
    assert got.chain == (b + (0, 0),)
    assert got.ratios == pytest.approx((1.08, 1.0))


def override_text(lines: Sequence[Sequence[str]]) -> str:
    out = ["\t".join(fit.OVERRIDE_COLUMNS)]
    for place, name, note, why in lines:
        row = {c: "" for c in rules.COLUMNS}
        if place != "drop":
            row.update(name=name, m_min="1", cc_min="80", family="ANY", note=note)
        else:
            row.update(name=name)
        out.append("\t".join([place] + [row[c] for c in rules.COLUMNS] + [why]))
    return "\n".join(out) + "\n"


def test_overrides_merge_in_place() -> None:
    over = fit.parse_overrides(override_text([
        ("first", "h-1", "a", "w"),
        ("last", "z-2", "b", "w"),
        ("first", "h-2", "c", "w"),
        ("before=t-m33-64-n0-4096", "b-1", "d", "w"),
        ("before=t-m33-64-n0-4096", "b-2", "e", "w"),
        ("after=t-m1-1-n0-4096", "a-1", "f", "w"),
        ("after=t-m1-1-n0-4096", "a-2", "g", "w"),
        ("replace", "t-m1-1-n4097-up", "h", "w"),
        ("drop", "t-m1-1-n4097-up-alt", "", "w"),
        ("last", "z-1", "i", "w"),
    ]))
    table = fit.merge(synthetic_rows(), over)
    assert [r["name"] for r in table] == ["h-1", "h-2", "t-m1-1-n0-4096", "a-1", "a-2", "t-m1-1-n4097-up",
                                          "b-1", "b-2", "t-m33-64-n0-4096", "t-m33-64-n4097-up", "z-2", "z-1"]
    assert table[5]["note"] == "h" and table[5]["family"] == "ANY"
    text = fit.render(table)
    assert [r.name for r in rules.parse(text)] == [r["name"] for r in table]


@pytest.mark.parametrize("lines,message", [
    ([("before=nope", "x", "n", "w")], "names row 'nope'"),
    ([("replace", "nope", "n", "w")], "names row 'nope'"),
    ([("drop", "nope", "", "w")], "names row 'nope'"),
    ([("sideways", "x", "n", "w")], "place 'sideways'"),
    ([("before", "x", "n", "w")], "place 'before'"),
    ([("last", "x", "n", "")], "why: empty"),
    ([("last", "t-m1-1-n0-4096", "n", "w")], "appears twice"),
])
def test_override_errors_name_the_problem(lines, message) -> None:
    with pytest.raises(fit.FitError, match=message):
        fit.merge(synthetic_rows(), fit.parse_overrides(override_text(lines)))


def test_drop_names_only_the_row() -> None:
    text = override_text([("drop", "t-m1-1-n0-4096", "", "w")])
    text = text.replace("\tt-m1-1-n0-4096\t\t", "\tt-m1-1-n0-4096\t1\t")
    with pytest.raises(fit.FitError, match=r"overrides.tsv:2: a drop names only the row \(cells in m_min\)"):
        fit.parse_overrides(text)


@pytest.mark.parametrize("spec,message", [
    ("prefix\tm_buckets\tshapes\tprofiles\tnote\nt\t1 0\tn0-4096\tp\tx\n", "M bucket '0'"),
    ("prefix\tm_buckets\tshapes\tprofiles\tnote\nt\t1-4 4-8\tn0-4096\tp\tx\n", "1-4 and 4-8 overlap"),
    ("prefix\tm_buckets\tshapes\tprofiles\tnote\nt\t1\tk0-4096\tp\tx\n", "shape 'k0-4096'"),
    ("prefix\tm_buckets\tshapes\tprofiles\tnote\nt\t1\tn9-8\tp\tx\n", "empty range"),
    ("prefix\tm_buckets\tshapes\tprofiles\tnote\nt\t1\tn0-8\t../p\tx\n", "file names in heuristics/profiles"),
    ("prefix\tm_buckets\tshapes\tprofiles\tnote\nt\t1\tn0-8\tp\t\n", "note: empty"),
    ("prefix\tm_buckets\tshapes\tnote\n", "header must name"),
    ("prefix\tm_buckets\tshapes\tprofiles\tnote\nt\t1\tn0-8\n", ":2: 3 cells"),
])
def test_spec_errors_name_the_line(spec: str, message: str) -> None:
    with pytest.raises(fit.FitError, match=message):
        fit.parse_fit_spec(spec)


def test_profile_errors() -> None:
    with pytest.raises(fit.FitError, match="no '# ... sm_count"):
        fit.read_profile_text(HEADER + "\n", "p")
    with pytest.raises(fit.FitError, match="p:3: 2 cells"):
        fit.read_profile_text(profile_text(["1\t2"]), "p")
    with pytest.raises(fit.FitError, match="matches no file"):
        fit.fitted_rows(fit.parse_fit_spec(SPEC), loader({}), ["other.tsv"])
    mixed = {"syn_a.tsv": profile_text(SYNTHETIC), "syn_b.tsv": profile_text(SYNTHETIC, sm=114)}
    with pytest.raises(fit.FitError, match="different SM counts"):
        fit.fitted_rows(fit.parse_fit_spec(SPEC), loader(mixed), sorted(mixed))


def test_committed_inputs_give_the_committed_table() -> None:
    """`python3 -m generator fit && git diff --exit-code heuristics/rules.tsv` holds."""
    with open(fit.FIT_TSV, encoding="utf-8") as f:
        spec = f.read()
    with open(fit.OVERRIDES_TSV, encoding="utf-8") as f:
        overrides = f.read()
    with open(fit.RULES_TSV, encoding="utf-8") as f:
        committed = f.read()
    assert fit.build(spec, overrides) == committed, \
        "heuristics/rules.tsv is not what the fit writes: run python3 -m generator fit"


def test_command_is_deterministic_across_hash_seeds(tmp_path: Path) -> None:
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / ("rules_%s.tsv" % seed)
        env = dict(os.environ, PYTHONHASHSEED=seed)
        res = subprocess.run([sys.executable, "-m", "generator", "fit", "--out", str(out)], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert outs[0] == Path(fit.RULES_TSV).read_bytes()
    check = subprocess.run([sys.executable, "-m", "generator", "fit", "--check"], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr
