"""The log parsing of colmap_end_to_end.py on log excerpts in COLMAP 4.1.1's
and colmap_bundle_adjuster's formats."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import colmap_end_to_end as e2e  # noqa: E402

ANALYZER = """I20261201 23:40:01.123456 4242 model.cc:440] Rigs: 2
I20261201 23:40:01.123456 4242 model.cc:441] Cameras: 4
I20261201 23:40:01.123456 4242 model.cc:442] Frames: 72
I20261201 23:40:01.123456 4242 model.cc:446] Registered images: 143
I20261201 23:40:01.123456 4242 model.cc:448] Points: 31234
I20261201 23:40:01.123456 4242 model.cc:449] Observations: 100012
I20261201 23:40:01.123456 4242 model.cc:451] Mean track length: 3.202023
I20261201 23:40:01.123456 4242 model.cc:456] Mean reprojection error: 0.812345px
"""

REPORT = """I20261201 23:41:00.000000 4242 bundle_adjustment_ceres.cc:1115]
Solver Summary (v 2.1.0-eigen-(3.4.0)-lapack-suitesparse-(5.12.0)-cxsparse-(3.2.0)-eigensparse-acceleratesparse-no_openmp)

                                     Original                  Reduced
Linear solver                     DENSE_SCHUR              DENSE_SCHUR
Cost:
Initial                          1.234567e+05
Final                            2.345678e+03
Change                           1.211110e+05
"""


class ParsingTest(unittest.TestCase):
    def test_analyzer_stats(self):
        stats = e2e.analyzer_stats(ANALYZER)
        self.assertEqual(stats["images"], 143)
        self.assertEqual(stats["points"], 31234)
        self.assertEqual(stats["rigs"], 2)
        self.assertEqual(stats["frames"], 72)
        self.assertAlmostEqual(stats["track_length"], 3.202023)
        self.assertAlmostEqual(stats["error"], 0.812345)

    def test_ceres_costs_pairs_initial_and_final(self):
        self.assertEqual(e2e.ceres_costs(REPORT + REPORT.replace("2.345678e+03", "9e+02")),
                         [(1.234567e5, 2.345678e3), (1.234567e5, 9e2)])
        self.assertEqual(e2e.ceres_costs("nothing here"), [])

    def test_tool_summary(self):
        text = ("Read in (binary): 3 cameras, 12 images, 700 3D points, 2000 observations\n" +
                REPORT + "Mean reprojection error after: 0.750000 px\n")
        summary = e2e.tool_summary(text)
        self.assertEqual(summary["images"], 12)
        self.assertEqual(summary["observations"], 2000)
        self.assertAlmostEqual(summary["error"], 0.75)
        self.assertAlmostEqual(summary["final_cost"], 2.345678e3)

    def test_rms_costs_and_colmap_choice(self):
        log = ("I20261202 00:20:19.365993 20243 bundle_adjustment_ceres.cc:1147] Bundle adjustment report\n"
               "    Residuals : 15520\n Initial cost : 0.923725 [px]\n   Final cost : 0.723725 [px]\n")
        self.assertEqual(e2e.rms_costs(log), [(0.923725, 0.723725)])
        self.assertEqual(e2e.colmap_choice(40), "DENSE_SCHUR")
        self.assertEqual(e2e.colmap_choice(143), "SPARSE_SCHUR")
        self.assertEqual(e2e.colmap_choice(1429), "ITERATIVE_SCHUR")

    def test_ba_times_split_local_and_global(self):
        log = "\n".join([
            "I20261201 10:00:00.0 1 incremental_pipeline.cc:432] Global bundle adjustment",
            "I20261201 10:00:00.0 1 bundle_adjustment_ceres.cc:1130]          Time : 1.5 [s]",
            "I20261201 10:00:00.0 1 incremental_pipeline.cc:537] Registering image #3 (num_reg_frames=2)",
            "I20261201 10:00:00.0 1 bundle_adjustment_ceres.cc:1130]          Time : 0.25 [s]",
            "I20261201 10:00:00.0 1 bundle_adjustment_ceres.cc:1130]          Time : 0.5 [s]",
            "I20261201 10:00:00.0 1 incremental_pipeline.cc:776] Retriangulation and Global bundle adjustment",
            "I20261201 10:00:00.0 1 bundle_adjustment_ceres.cc:1130]          Time : 2 [s]",
        ])
        times = e2e.ba_times(log)
        self.assertEqual((times["local_n"], times["global_n"]), (2, 2))
        self.assertAlmostEqual(times["local_s"], 0.75)
        self.assertAlmostEqual(times["global_s"], 3.5)



class RowsTest(unittest.TestCase):
    def test_rows_round_trip_per_stage(self):
        with tempfile.TemporaryDirectory() as out:
            rows = [{"problem": "synthetic-1M", "seconds": 12.5, "final_cost": None, "repeat": 0}]
            e2e.save_rows(out, "ba", rows)
            self.assertEqual(e2e.load_rows(out, "ba"), rows)
            self.assertEqual(e2e.load_rows(out, "mapper"), [])

    def test_problems_run_now_replace_only_their_own_rows(self):
        earlier = [{"problem": "a", "repeat": r} for r in range(3)] + [{"problem": "b", "repeat": 0}]
        now = [{"problem": "b", "repeat": 0, "new": True}]
        merged = e2e.merge_problem_rows(earlier, now)
        self.assertEqual([r["problem"] for r in merged], ["a", "a", "a", "b"])
        self.assertTrue(merged[-1]["new"])

    def test_unknown_stage_is_refused(self):
        with tempfile.TemporaryDirectory() as out:
            with self.assertRaises(SystemExit) as raised:
                e2e.main(["--stages", "files,bogus", "--colmap-cache", out, "--out", out])
            self.assertIn("unknown stage bogus", str(raised.exception))



class ReportTest(unittest.TestCase):
    def test_bundle_adjuster_table_gives_the_solve_beside_the_command(self):
        ba = [{"problem": "p", "variant": v, "repeat": 0, "seconds": secs, "solve_seconds": solve,
               "final_cost": 0.5, "error": 0.8, "images": 40, "solver": "DENSE_SCHUR"}
              for v, secs, solve in (("stock", 0.7, 0.32), ("sqrtba-single", 0.5, 0.131),
                                     ("sqrtba-double", 0.4, 0.134))]
        text = e2e.report([], ba, [], "test")
        self.assertIn("| p | DENSE_SCHUR | 1 | 0.70 | 0.50 | 0.40 | 1.40× / 1.75× | 0.32 / 0.131 / 0.134 |", text)
        del ba[0]["solve_seconds"]  # rows of a run before the column existed
        self.assertIn("| n/a / 0.131 / 0.134 |", e2e.report([], ba, [], "test"))

    def test_option_off_table_says_identical_only_for_equal_digests(self):
        off = [{"run": "bundle_adjuster", "stock": "a1", "stock_again": "a1", "option_off": "a1"},
               {"run": "mapper", "stock": "b1", "stock_again": "b1", "option_off": "b2"},
               {"run": "global_mapper", "stock": "exit 1", "stock_again": "exit 1",
                "option_off": "exit 1"}]
        text = e2e.report([], [], [], "test", off=off)
        self.assertIn("| bundle_adjuster | a1 | a1 | a1 | yes |", text)
        self.assertIn("| mapper | b1 | b1 | b2 | **no** |", text)
        self.assertIn("| global_mapper | exit 1 | exit 1 | exit 1 | **no** |", text)
        self.assertNotIn("SQRTBA_ENABLED=OFF", e2e.report([], [], [], "test"))

    def test_model_digest_reads_the_binary_files_in_name_order(self):
        with tempfile.TemporaryDirectory() as model:
            self.assertIsNone(e2e.model_digest(model))
            for name, data in (("points3D.bin", b"p"), ("cameras.bin", b"c"), ("notes.txt", b"x")):
                with open(os.path.join(model, name), "wb") as f:
                    f.write(data)
            first = e2e.model_digest(model)
            with open(os.path.join(model, "notes.txt"), "wb") as f:
                f.write(b"y")  # not a model file
            self.assertEqual(e2e.model_digest(model), first)
            with open(os.path.join(model, "cameras.bin"), "wb") as f:
                f.write(b"C")
            self.assertNotEqual(e2e.model_digest(model), first)

    def test_a_statistic_that_differs_between_runs_is_shown_per_run(self):
        runs = [{"images": 3}, {"images": 47}, {"images": 47}]
        self.assertEqual(e2e.across(runs, "images", "%d"), "3 / 47 / 47")
        self.assertEqual(e2e.across(runs[1:], "images", "%d"), "47")
        self.assertEqual(e2e.across([{}], "images", "%d"), "n/a")


if __name__ == "__main__":
    unittest.main()
