"""colmap_benchmarks.py without running any binary: COLMAP's solver rule, the
image count read from images.bin, the problem and solver tables, the flock
and the report (t tau, ratios to COLMAP's pick and to the best Ceres 2.2
solver) from a hand-made results folder."""

import csv
import os
import sys
import tempfile
import unittest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TESTS_DIR))

import bench_io  # noqa: E402
import colmap_benchmarks as cb  # noqa: E402


def write_trace(path, points):
    """A trace of (cumulative seconds, cost) rows, every step accepted."""
    rows = []
    for i, (t, cost) in enumerate(points):
        rows.append({"iteration": i, "cumulative_seconds": t, "cost": cost, "cost_change": 0.0,
                     "gradient_max_norm": 1.0, "trust_region_radius": 1e4,
                     "linear_solver_iterations": 1, "step_accepted": True})
    bench_io.write_trace_rows(path, rows)


class ColmapBenchmarksTest(unittest.TestCase):
    def test_colmap_rule(self):
        self.assertEqual(cb.colmap_choice(40), "dense_schur")
        self.assertEqual(cb.colmap_choice(50), "dense_schur")
        self.assertEqual(cb.colmap_choice(51), "sparse_schur")
        self.assertEqual(cb.colmap_choice(1000), "sparse_schur")
        self.assertEqual(cb.colmap_choice(1001), "iterative_schur+schur_jacobi")

    def test_tables(self):
        self.assertEqual(len(set(cb.SOLVER_NAMES)), len(cb.SOLVER_NAMES))
        for solver in cb.SOLVERS:
            self.assertEqual(solver.family == "ceres22", solver.build == cb.CERES22, solver.name)
        flags = cb.common_flags(8, 2)
        self.assertIn("--num_iterations=8", flags)
        self.assertIn("--num_threads=2", flags)
        self.assertIn("statue-of-liberty", cb.SCENES)
        self.assertIsNone(cb.SCENES["statue-of-liberty"])

    def test_num_images_and_lock(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "images.bin"), "wb") as f:
                f.write((1429).to_bytes(8, "little") + b"rest")
            self.assertEqual(cb.num_images(tmp), 1429)
            lock_path = os.path.join(tmp, "bench.lock")
            with cb.Lock(lock_path) as lock:
                self.assertIsNotNone(lock.handle)
            self.assertIsNone(lock.handle)
            with cb.Lock("") as lock:  # no lock file: nothing held
                self.assertIsNone(lock.handle)

    def test_report(self):
        # f0 = 1000, f* = 10: f(1e-2) = 19.9, f(1e-3) = 10.99.
        traces = {
            "sqrt-single": [(1.0, 1000.0), (2.0, 15.0), (3.0, 10.5)],
            "colmap-pick": [(2.0, 1000.0), (4.0, 15.0), (6.0, 10.0)],
            "ceres22-sparse-schur": [(1.5, 1000.0), (3.0, 18.0), (5.0, 10.0)],
            "ceres22-iterative-schur": [(1.0, 1000.0), (2.5, 30.0), (4.0, 10.9)],
        }
        with tempfile.TemporaryDirectory() as out:
            runs, repeats = [], []
            for rep in (1, 2):
                os.makedirs(os.path.join(out, "repeat-%d" % rep, "traces"))
            os.makedirs(os.path.join(out, "traces"))
            for solver, points in traces.items():
                trace = "traces/p__%s.csv" % solver
                write_trace(os.path.join(out, trace), points)
                for rep in (1, 2):
                    slower = [(t * rep, c) for t, c in points]
                    write_trace(os.path.join(out, "repeat-%d" % rep, trace), slower)
                    repeats.append({"problem": "p", "solver": solver, "repeat": rep,
                                    "chosen": int(rep == 1), "status": "ok", "trace": trace})
                runs.append({"problem": "p", "kind": "colmap-synthetic", "input": "p",
                             "solver": solver, "status": "ok", "trace": trace,
                             "summary": "", "log": "", "num_cameras": 143, "num_points": 9,
                             "num_observations": 99, "final_cost": points[-1][1],
                             "iterations": 2, "solver_seconds": points[-1][0],
                             "peak_rss_mib": 100.0})
            cb.write_repeats(os.path.join(out, "repeats.csv"), repeats)
            with open(os.path.join(out, "problems.csv"), "w", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(["problem", "images", "colmap_choice"])
                writer.writerow(["p", 143, "sparse_schur"])
            text = cb.make_report(out, runs)
        rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
                for line in text.split("## Solver flags")[0].splitlines()
                if line.startswith("| ") and "|" in line[2:]}
        # sqrt-single: t(1e-2) = 2 (15 <= 19.9), t(1e-3) = 3 (10.5 <= 10.99).
        self.assertEqual(rows["sqrt-single"][2:4], ["2", "3"])
        # The repeats: 3 and 6 seconds at 1e-3.
        self.assertEqual(rows["sqrt-single"][4], "3–6")
        # Against COLMAP's pick (4 and 6 s): 0.5 and 0.5.
        self.assertEqual(rows["sqrt-single"][5:7], ["0.5", "0.5"])
        # Best Ceres 2.2: 1e-2 sparse-schur (3 s; iterative-schur's 30 is above),
        # 1e-3 iterative-schur (4 s, 10.9 <= 10.99).
        self.assertEqual(rows["sqrt-single"][7:9], ["0.667", "0.75"])
        self.assertIn("τ=1e-2 `ceres22-sparse-schur`, τ=1e-3 `ceres22-iterative-schur`", text)
        self.assertEqual(rows["colmap-pick"][5:7], ["1", "1"])


if __name__ == "__main__":
    unittest.main()
