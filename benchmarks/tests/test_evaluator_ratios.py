"""Unit tests of the evaluator / floor ratios read from Google Benchmark's
JSON output (a hand-made sample in testdata/)."""

import json
import os
import sys
import unittest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TESTS_DIR))

import evaluator_ratios  # noqa: E402
import targets  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(TESTS_DIR), "testdata", "evaluator_benchmark_sample.json")


class RatiosTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = evaluator_ratios.load(SAMPLE)

    def test_medians_in_milliseconds_and_ratios(self):
        by_key = {(r["problem"], r["threads"]): r for r in self.rows}
        self.assertEqual(list(by_key), [("bal", 1), ("synthetic", 1), ("manifold", 2)])
        bal = by_key[("bal", 1)]
        self.assertAlmostEqual(bal["residual"], 1.1)
        # The single precision pass against the float floor, the float floor
        # against the double one, and what float Jacobians buy in the pass.
        self.assertAlmostEqual(bal["jacobian_single"], 2.2)
        self.assertAlmostEqual(bal["float_floor_speedup"], 2.0)
        self.assertAlmostEqual(bal["jacobian_single_speedup"], 1.1)
        self.assertAlmostEqual(bal["evaluator_jacobian_double"], 12.5)  # from microseconds
        self.assertAlmostEqual(bal["jacobian_double"], 1.25)
        # Ceres' own passes (manual time) against the same floors.
        self.assertAlmostEqual(bal["ceres_cost"], 4.0)
        self.assertAlmostEqual(bal["ceres_residual"], 2.5)
        self.assertAlmostEqual(bal["ceres_jacobian"], 15.0)
        self.assertAlmostEqual(bal["ceres_jacobian_ratio"], 1.5)
        manifold = by_key[("manifold", 2)]
        self.assertAlmostEqual(manifold["jacobian_single"], 2.3)
        self.assertIsNone(manifold["jacobian_double"])  # that pass is missing
        self.assertIsNone(manifold["ceres_jacobian_ratio"])
        # Runs without aggregates (one repetition) count as they are.
        synthetic = by_key[("synthetic", 1)]
        self.assertAlmostEqual(synthetic["floor_residuals"], 5.0)
        self.assertAlmostEqual(synthetic["residual"], 1.2)
        self.assertIsNone(synthetic["jacobian_single"])

    def test_markdown_table(self):
        text = evaluator_ratios.markdown(self.rows)
        lines = text.splitlines()
        self.assertEqual(len(lines), 2 + 3)
        self.assertTrue(lines[0].endswith("| Ceres' Jacobian pass [ms] | Ceres' Jacobian / floor |"))
        self.assertEqual(lines[1].count("---"), 18)
        self.assertIn("| bal | 1 | 1.6 | 1.76 | 1.10 | 10 | 5 | 2.00 | 11 | 2.20 | 12.1 | 1.10 | 12.5 | 1.25 "
                      "| 4 | 2.50 | 15 | 1.50 |", lines)
        self.assertIn("–", lines[4])

    def test_targets_take_the_worst_row(self):
        jacobian = targets.evaluate(next(t for t in targets.TARGETS
                                         if t.key == "evaluator-jacobian-floor"), [], self.rows)
        self.assertEqual((jacobian.count, jacobian.verdict), (2, "FAIL"))
        self.assertAlmostEqual(jacobian.value, 2.3)
        residual = targets.evaluate(next(t for t in targets.TARGETS
                                         if t.key == "evaluator-residual-floor"), [], self.rows)
        self.assertAlmostEqual(residual.value, 1.2)
        self.assertEqual(residual.verdict, "FAIL")
        missing = targets.evaluate(targets.TARGETS[-4], [], None)
        self.assertEqual(missing.verdict, "n/a")

    def test_median_over_processes(self):
        def entry(name, ms, process):
            return {"name": name + "_median", "run_name": name, "run_type": "aggregate",
                    "aggregate_name": "median", "real_time": ms, "time_unit": "ms",
                    "process": process}
        floor, cost = "Evaluate/bal/floor_residuals/threads:1", "Evaluate/bal/evaluator_cost/threads:1"
        data = {"benchmarks": [entry(floor, 1.0, 0), entry(cost, 1.5, 0),
                               entry(floor, 1.2, 1), entry(cost, 1.3, 1),
                               entry(floor, 0.9, 2), entry(cost, 1.1, 2)]}
        (row,) = evaluator_ratios.ratio_rows(data)
        self.assertAlmostEqual(row["floor_residuals"], 1.0)   # median of 1.0, 1.2, 0.9
        self.assertAlmostEqual(row["evaluator_cost"], 1.3)    # median of 1.5, 1.3, 1.1
        self.assertAlmostEqual(row["residual"], 1.3)
        # Two processes: the mean of the two.
        two = {"benchmarks": data["benchmarks"][:4]}
        (row,) = evaluator_ratios.ratio_rows(two)
        self.assertAlmostEqual(row["floor_residuals"], 1.1)
        self.assertAlmostEqual(row["evaluator_cost"], 1.4)

    def test_unreadable_file_is_none(self):
        self.assertIsNone(evaluator_ratios.load("/nonexistent/evaluator.json"))
        self.assertEqual(evaluator_ratios.ratio_rows(json.loads('{"benchmarks": []}')), [])


if __name__ == "__main__":
    unittest.main()
