"""Generator tests: determinism, names from fields, filters, validity, write-if-different, stale removal."""
import os
import re
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from generator import __main__ as cli  # noqa: E402
from generator import filters, render, rules  # noqa: E402
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
            self.assertTrue(c.name.startswith(kernel_prefix(c.family, c.dtype, c.mode, c.grouped) + "_"),
                            c.name)
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

    def test_grouped_sm90_no_scale_chunks(self):
        # the grouped Hopper form's Cfg static_assert: tile_k 256 at 16 to 32 tokens copies scale rows
        # in chunks, which the grouped walk does not; 64 tokens at tile_k 256 is a default tile
        from generator.families import grouped_sm90
        from generator.model import DType, QuantMode
        for mode in QuantMode:
            for tm in (16, 32):
                ok, why = grouped_sm90.is_valid(grouped_sm90.config(DType.BF16, mode, 128, tm, 256))
                self.assertFalse(ok, (mode, tm))
                self.assertIn("scale chunks", why)
            ok, why = grouped_sm90.is_valid(grouped_sm90.config(DType.BF16, mode, 128, 64, 256))
            self.assertTrue(ok, why)
            self.assertEqual(grouped_sm90.scale_chunk(grouped_sm90.config(DType.BF16, mode, 128, 32, 128)), 1)

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
            self.assertEqual(len(written), len(configs) + 3)
            stamp = {n: os.stat(os.path.join(out, n)).st_mtime_ns for n in os.listdir(out)}
            time.sleep(0.01)
            written, removed = render.emit(configs, out)
            self.assertEqual(written, [])
            self.assertEqual(removed, [])
            self.assertEqual(stamp, {n: os.stat(os.path.join(out, n)).st_mtime_ns for n in os.listdir(out)})
            # a smaller selection removes the stale kernels and rewrites only the registry and manifest
            # (the rule table does not depend on the kernels)
            written, removed = render.emit(configs[:1], out)
            self.assertEqual(sorted(written), ["kernels.txt", "registry.c"])
            self.assertEqual(len(removed), len(configs) - 1)
            self.assertEqual(sorted(os.listdir(out)),
                             sorted([configs[0].name + ".cu", "heuristic_rules.c", "kernels.txt", "registry.c"]))

    def test_manifest(self):
        configs = self.configs()
        files = render.render_all(configs)
        lines = files["kernels.txt"].splitlines()
        self.assertEqual([l.split("\t")[0] for l in lines], [c.name for c in configs])


class RulesTest(unittest.TestCase):
    """heuristics/rules.tsv: parses, names only known fields, renders deterministically."""

    HEADER = "\t".join(rules.COLUMNS)

    def test_committed_table_parses(self):
        with open(rules.RULES_TSV, encoding="utf-8") as f:
            text = f.read()
        header = next(line for line in text.splitlines() if line and not line.startswith("#"))
        self.assertEqual(tuple(header.split("\t")), rules.COLUMNS)
        table = rules.load()
        self.assertTrue(table)
        self.assertEqual(len({r.name for r in table}), len(table))
        known = {f for f, _ in rules.FIELDS}
        for r in table:
            self.assertTrue(r.note, r.name)
            self.assertEqual(r.fields[0], ("name", '"%s"' % r.name))
            for field, _ in r.fields:
                self.assertIn(field, known, r.name)
            # the rendered fields keep the struct's order (designated initializers in any order
            # would compile, but the generated file reads like the header)
            order = [f for f, _ in rules.FIELDS]
            self.assertEqual([f for f, _ in r.fields], sorted((f for f, _ in r.fields), key=order.index))

    def test_fields_match_the_struct(self):
        # every column is a member of w4a16_heuristic_rule, in the header's order
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with open(os.path.join(root, "include", "w4a16", "select.h"), encoding="utf-8") as f:
            header = f.read()
        body = re.search(r"typedef struct w4a16_heuristic_rule \{(.*?)\} w4a16_heuristic_rule;", header, re.S)
        self.assertIsNotNone(body)
        members = []
        for decl in re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S).split(";"):
            decl = decl.strip()
            if decl:
                names = decl.split(None, 1)[1] if not decl.startswith("const char") else decl.split("*", 1)[1]
                members += [n.strip().lstrip("*") for n in names.replace("int64_t", "").split(",")]
        self.assertEqual(members, [f for f, _ in rules.FIELDS])

    def test_render_deterministic(self):
        table = rules.load()
        first = render.render_rules(table)
        self.assertEqual(first, render.render_rules(rules.load()))
        self.assertEqual(render.render_all([])["heuristic_rules.c"], first)
        self.assertEqual(first.count("  { .name = "), len(table))
        for r in table:
            self.assertIn("/* %s */" % r.note, first)

    def test_cells(self):
        text = "# comment\n%s\n%s\n" % (self.HEADER, "\t".join(
            ["r1", "1", "16", "", "", "", "", "", "", "90", "90", "SM90", "", "", "", "", "", "", "",
             "0.75", "", "", "FINEGRAINED_SCALE_AND_ZEROS|PER_COLUMN_SCALE_ONLY", "64", "", "", "",
             "GEMV_TMA", "", "F16", "4500", "", "what it is for"]))
        (r,) = rules.parse(text, "t.tsv")
        got = dict(r.fields)
        self.assertEqual(got["family"], "W4A16_FAMILY_SM90")
        self.assertEqual(got["min_waves_eff"], "0.75f")
        self.assertEqual(got["modes"],
                         "(1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS) | (1u << W4A16_PER_COLUMN_SCALE_ONLY)")
        self.assertEqual(got["schedules"], "1u << W4A16_SCHEDULE_GEMV_TMA")
        self.assertEqual(got["dtypes"], "1u << W4A16_DTYPE_F16")
        self.assertNotIn("n_min", got)  # empty cell: 0, left to the C default
        self.assertEqual(r.note, "what it is for")

    def test_malformed_rejected(self):
        row = ["r1", "1", "16"] + [""] * 8 + ["GEMV"] + [""] * 20 + ["note"]
        good = "%s\n%s\n" % (self.HEADER, "\t".join(row))
        rules.parse(good, "t.tsv")
        bad_cells = {3: "x", 11: "TENSOR", 19: "2.5", 22: "ZEROS", 32: ""}
        for col, cell in bad_cells.items():
            cells = list(row)
            cells[col] = cell
            with self.assertRaises(rules.RulesError, msg=(col, cell)):
                rules.parse("%s\n%s\n" % (self.HEADER, "\t".join(cells)), "t.tsv")
        with self.assertRaises(rules.RulesError):  # unknown column
            rules.parse(good.replace("group_max", "group_min"), "t.tsv")
        with self.assertRaises(rules.RulesError):  # a cell short
            rules.parse("%s\n%s\n" % (self.HEADER, "\t".join(row[:-1])), "t.tsv")
        with self.assertRaises(rules.RulesError):  # a name twice
            rules.parse(good + "\t".join(row) + "\n", "t.tsv")


class WgmmaHeaderTest(unittest.TestCase):
    def test_committed_header_is_generated(self):
        from generator import wgmma
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with open(os.path.join(root, "runtime", "cuda", "sm90", "sm90_wgmma.cuh"), encoding="utf-8") as f:
            self.assertEqual(f.read(), wgmma.header(),
                             "regenerate: python3 -m generator wgmma > runtime/cuda/sm90/sm90_wgmma.cuh")


if __name__ == "__main__":
    unittest.main()
