"""Unit tests of the parser of Ceres 2.2's bundle_adjuster output, on a
hand-written sample in that binary's formats (testdata/)."""

import math
import os
import sys
import tempfile
import unittest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TESTS_DIR))

import bench_io  # noqa: E402
import ceres22_output  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(TESTS_DIR), "testdata", "ceres22_bundle_adjuster_output.txt")


def sample_text():
    with open(SAMPLE) as f:
        return f.read()


class RowsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.output = ceres22_output.read(SAMPLE)

    def test_every_row_of_the_table_and_nothing_else(self):
        rows = self.output.rows
        self.assertEqual([r["iteration"] for r in rows], list(range(9)))
        first = rows[0]
        self.assertEqual((first["cost"], first["cumulative_seconds"], first["iteration_seconds"]),
                         (2.5e5, 8.4e-2, 2.1e-2))
        self.assertEqual(rows[3]["cost_change"], -3.0e3)
        self.assertEqual(rows[4]["linear_solver_iterations"], 19)
        self.assertEqual(rows[8]["trust_region_radius"], 1.95e4)

    def test_accepted_steps(self):
        accepted = [r["iteration"] for r in self.output.rows if r["step_accepted"]]
        # 3: negative ratio (rejected); 5: invalid step (ratio 0); 6 and 7 print
        # 1.00e-03, the threshold: 6 has a new gradient (accepted), 7 repeats
        # the previous one (rejected).
        self.assertEqual(accepted, [0, 1, 2, 4, 6, 8])

    def test_report(self):
        report = self.output.report
        self.assertEqual(report["preprocessor_seconds"], 0.063)
        self.assertEqual(report["residual_evaluation_seconds"], 0.0215)
        self.assertEqual(report["residual_evaluation_seconds_count"], 8)
        self.assertEqual(report["jacobian_evaluation_seconds"], 0.06125)
        self.assertEqual(report["linear_solver_seconds"], 0.170125)
        self.assertEqual(report["minimizer_seconds"], 0.265)
        self.assertEqual(report["postprocessor_seconds"], 0.00025)
        self.assertEqual(report["total_seconds"], 0.32825)
        self.assertEqual((report["initial_cost"], report["final_cost"]), (2.5e5, 1.13e4))
        self.assertEqual(report["termination"], "NO_CONVERGENCE")
        self.assertIn("Number of iterations: 8.", report["termination_message"])
        self.assertEqual(ceres22_output.solver_label(report), "iterative_schur+schur_jacobi")
        self.assertEqual(ceres22_output.failure_reason(self.output), "")

    def test_summary_row_and_files_in_the_drivers_format(self):
        summary = ceres22_output.summary_row(self.output, "p.txt", (10, 1200, 5000))
        self.assertEqual((summary["iterations"], summary["linear_solver_iterations_total"]),
                         (8, 123))
        self.assertEqual(summary["precision_switch_iteration"], -1)
        with tempfile.TemporaryDirectory() as folder:
            trace, path = os.path.join(folder, "t.csv"), os.path.join(folder, "s.csv")
            bench_io.write_trace_rows(trace, self.output.rows)
            bench_io.write_summary(path, summary)
            rows = bench_io.read_trace_rows(trace)
            self.assertEqual([r["cost"] for r in rows], [r["cost"] for r in self.output.rows])
            self.assertNotIn("step_solver_seconds", rows[0])
            self.assertEqual(bench_io.read_trace(trace)[-1], (0.328, 1.13e4))
            back = bench_io.read_summary(path)
            self.assertEqual(back["solver"], "iterative_schur+schur_jacobi")
            self.assertEqual(float(back["linear_solver_seconds"]), 0.170125)


class BrokenOutputTest(unittest.TestCase):
    def test_no_table_or_no_report_is_an_error(self):
        text = sample_text()
        with self.assertRaisesRegex(ceres22_output.ParseError, "no progress table"):
            ceres22_output.parse("ERROR: unknown command line flag 'x'\n")
        with self.assertRaisesRegex(ceres22_output.ParseError, "no FullReport"):
            ceres22_output.parse(text.split("Solver Summary")[0])  # died after the table
        # Rows without the table's header are not taken for a table.
        rows_only = "\n".join(line for line in text.splitlines() if not line.startswith("iter "))
        with self.assertRaises(ceres22_output.ParseError):
            ceres22_output.parse(rows_only)

    def test_failure_and_non_finite_costs(self):
        text = sample_text().replace(
            "NO_CONVERGENCE (Maximum number of iterations reached. Number of iterations: 8.)",
            "FAILURE (Residual and Jacobian evaluation failed.)")
        output = ceres22_output.parse(text)
        self.assertIn("FAILURE (Residual and Jacobian evaluation failed.)",
                      ceres22_output.failure_reason(output))
        # A candidate that failed to evaluate prints the largest double; one
        # that overflowed, inf: both are rejected steps.
        lines = sample_text().splitlines()
        for index, line in enumerate(lines):
            if line.startswith("   3 "):
                lines[index] = line.replace(" 1.500000e+05", " inf", 1).replace(
                    "1.500000e+04", "inf", 1)
        output = ceres22_output.parse("\n".join(lines))
        self.assertTrue(math.isinf(output.rows[3]["cost"]))
        self.assertFalse(output.rows[3]["step_accepted"])


if __name__ == "__main__":
    unittest.main()
