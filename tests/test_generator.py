"""Generator tests: determinism, names from fields, filters, validity, write-if-different, stale removal."""
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from generator import __main__ as cli  # noqa: E402
from generator import filters, render  # noqa: E402
from generator.families import FAMILIES  # noqa: E402
from generator.model import Arch, kernel_prefix  # noqa: E402

ALL_ARCHS = {Arch.SM80, Arch.SM90A}


class FilterTest(unittest.TestCase):
    def test_wildcards_in_order(self):
        self.assertTrue(filters.match("w4a16_sm80_*_fgs_*", "w4a16_sm80_bf16_u4_fgs_64x32x64_s4"))
        self.assertFalse(filters.match("*fgs*sm80*", "w4a16_sm80_bf16_u4_fgs_64x32x64_s4"))
        self.assertTrue(filters.match("*", "anything"))
        self.assertFalse(filters.match("w4a16_sm80", "w4a16_sm80_bf16"))  # no '*': whole name
        self.assertTrue(filters.match("a*b*c", "aXXbYYc"))

    def test_star_runs_are_linear(self):
        # runs of '*' collapse: a regex of adjacent '.*'s backtracked exponentially (a configure hung)
        start = time.time()
        self.assertFalse(filters.match("*" * 40 + "Q", "w4a16_sm90_bf16_u4_fgs_128x16x256_1x1x1_cooperative"))
        self.assertTrue(filters.match("w4a16_**sm90***", "w4a16_sm90_x"))
        self.assertLess(time.time() - start, 5.0)

    def test_split(self):
        self.assertEqual(filters.split_patterns(" a, b;c ;; "), ["a", "b", "c"])
        self.assertEqual(filters.split_patterns(""), [])


class GeneratorTest(unittest.TestCase):
    def configs(self, include=(), exclude=()):
        return cli.select(ALL_ARCHS, list(include), list(exclude))

    def test_names_unique_sorted_and_from_fields(self):
        every = self.configs(["all"])
        names = [c.name for c in every]
        self.assertEqual(names, sorted(names))
        self.assertEqual(len(names), len(set(names)))
        for c in every:
            self.assertTrue(c.name.startswith(kernel_prefix(c.family, c.dtype, c.mode) + "_"), c.name)
            if c.family.value != "gemv":
                self.assertIn("_%dx%dx%d" % (c.tile_n, c.tile_m, c.tile_k), c.name)

    def test_default_is_subset_of_all(self):
        default = {c.name for c in self.configs()}
        self.assertTrue(default)
        self.assertTrue(default <= {c.name for c in self.configs(["all"])})

    def test_filters_select(self):
        chosen = self.configs(["*_bf16_*"], ["*_fgsz_*"])
        self.assertTrue(chosen)
        for c in chosen:
            self.assertIn("_bf16_", c.name)
            self.assertNotIn("_fgsz_", c.name)

    def test_arch_selection(self):
        for c in cli.select({Arch.SM80}, ["all"], []):
            self.assertEqual(c.arch, Arch.SM80)
        self.assertEqual(cli.parse_archs("90a"), {Arch.SM80, Arch.SM90A})
        self.assertEqual(cli.parse_archs("80;sm_86"), {Arch.SM80})
        # CMake's spellings and capabilities outside the table (any >= 8.0 builds the sm80 family)
        self.assertEqual(cli.parse_archs("SM_90A"), {Arch.SM80, Arch.SM90A})
        self.assertEqual(cli.parse_archs("8.7,121,compute_103"), {Arch.SM80})
        for bad in ("75", "7.5", "foo", "sm_", "100b"):
            with self.assertRaises(SystemExit):
                cli.parse_archs(bad)

    def test_unmatched_patterns_fail(self):
        # a typo must not build fewer kernels (or none) silently
        with self.assertRaises(SystemExit):
            self.configs(["w4a16_sm90_bf16_u4_fgs_128x16x256_1x1x1_coop"])  # cut short
        with self.assertRaises(SystemExit):
            self.configs(["*_bf16_*", "*_nonexistent_*"])
        with self.assertRaises(SystemExit):
            self.configs([], ["*_typo_*"])
        # 'all' inside a list still means every kernel
        self.assertEqual(len(self.configs(["all", "*_bf16_*"])), len(self.configs(["all"])))

    def test_validity_rejects_with_reason(self):
        for fam in FAMILIES:
            for c in fam.enumerate():
                ok, why = fam.is_valid(c)
                self.assertIsInstance(ok, bool)
                if not ok:
                    self.assertTrue(why, c.name)

    def test_sm90_consumer_warpgroups(self):
        # four consumer warpgroups: cooperative only, 640 threads, 64 rows each (tile_n 256), the
        # "_wg4" suffix; two: 384 threads, no suffix; the default set holds the four only for 256x32x128
        from generator.families import sm90
        every = [c for c in self.configs(["all"]) if c.family.value == "sm90"]
        wg4 = [c for c in every if c.name.endswith("_wg4")]
        self.assertTrue(wg4)
        for c in every:
            self.assertIn(c.threads, (384, 640), c.name)
            self.assertEqual(c.threads == 640, c.name.endswith("_wg4"), c.name)
        for c in wg4:
            self.assertEqual(c.schedule.value, "cooperative", c.name)
            self.assertEqual(c.tile_n, 256, c.name)
            self.assertLessEqual(sm90.consumer_registers(c.mode, c.tile_n, c.tile_m, c.tile_k, c.schedule, 4),
                                 sm90.REG_BUDGET_WG4, c.name)
        rejected = [c for c in sm90.enumerate() if c.threads == 640 and c.tile_n == 128]
        self.assertTrue(rejected)
        for c in rejected:
            ok, why = sm90.is_valid(c)
            self.assertFalse(ok)
            self.assertIn("64 rows", why)
        default_wg4 = {(c.tile_n, c.tile_m, c.tile_k, c.cluster_n, c.cluster_m)
                       for c in self.configs() if c.name.endswith("_wg4")}
        self.assertEqual(default_wg4, {(256, 32, 128, 1, 1)})

    def test_deterministic_and_marked(self):
        configs = self.configs()
        first = render.render_all(configs)
        second = render.render_all(list(reversed(configs)))
        self.assertEqual(first, second)
        for name, text in first.items():
            if name.endswith((".cu", ".c")):
                first_line = text.splitlines()[0]
                self.assertIn("generated from templates/", first_line)
                self.assertIn("do not edit", first_line)

    def test_write_if_different_and_stale_removal(self):
        configs = self.configs()
        with tempfile.TemporaryDirectory() as out:
            written, removed = render.emit(configs, out)
            self.assertEqual(len(written), len(configs) + 2)
            stamp = {n: os.stat(os.path.join(out, n)).st_mtime_ns for n in os.listdir(out)}
            time.sleep(0.01)
            written, removed = render.emit(configs, out)
            self.assertEqual(written, [])
            self.assertEqual(removed, [])
            self.assertEqual(stamp, {n: os.stat(os.path.join(out, n)).st_mtime_ns for n in os.listdir(out)})
            # a smaller selection removes the stale kernels and rewrites only the registry and manifest
            written, removed = render.emit(configs[:1], out)
            self.assertEqual(sorted(written), ["kernels.txt", "registry.c"])
            self.assertEqual(len(removed), len(configs) - 1)
            self.assertEqual(sorted(os.listdir(out)),
                             sorted([configs[0].name + ".cu", "kernels.txt", "registry.c"]))

    def test_manifest(self):
        configs = self.configs()
        files = render.render_all(configs)
        lines = files["kernels.txt"].splitlines()
        self.assertEqual([l.split("\t")[0] for l in lines], [c.name for c in configs])


class WgmmaHeaderTest(unittest.TestCase):
    def test_committed_header_is_generated(self):
        from generator import wgmma
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with open(os.path.join(root, "runtime", "cuda", "sm90", "sm90_wgmma.cuh"), encoding="utf-8") as f:
            self.assertEqual(f.read(), wgmma.header(),
                             "regenerate: python3 -m generator wgmma > runtime/cuda/sm90/sm90_wgmma.cuh")


if __name__ == "__main__":
    unittest.main()
