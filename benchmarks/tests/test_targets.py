"""Unit tests of the target checks on hand-made per-problem results."""

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import analysis  # noqa: E402
import perf_profiles  # noqa: E402
import targets  # noqa: E402

INF = math.inf


def result(name, times, kind="bal", observations=1000, runs=None, f_star=1.0):
    """A ProblemResult with the same times for every tau."""
    taus = perf_profiles.TAUS
    a = perf_profiles.ProblemAnalysis(10.0, f_star, {t: 2.0 for t in taus},
                                      {t: dict(times) for t in taus})
    return analysis.ProblemResult(name, kind, observations, runs or {}, a)


def run_data(rows=None, **run):
    return analysis.RunData(run, rows, None if rows is None else [])


def rows(seconds_per_iteration, linear_per_iteration, n=5):
    return [{"iteration": k, "cumulative_seconds": 1.0 + k * seconds_per_iteration, "cost": 1.0,
             "linear_solver_iterations": 0 if k == 0 else linear_per_iteration,
             "step_accepted": True} for k in range(n)]


class SpeedupTest(unittest.TestCase):
    def test_median_speedup_over_problems(self):
        results = [result("p1", {"sqrt-single": 1.0, "ceres-implicit": 3.0}),
                   result("p2", {"sqrt-single": 1.0, "ceres-implicit": 2.0}),
                   result("p3", {"sqrt-single": 2.0, "ceres-implicit": 2.0})]
        r = targets.evaluate(targets.TARGETS[0], results)
        self.assertEqual((r.median, r.low, r.high, r.count, r.verdict), (2.0, 1.0, 3.0, 3, "pass"))

    def test_never_reaching(self):
        measure = targets.speedup("sqrt-single", "ceres-implicit", 1e-2)
        results = [result("only-sqrt", {"sqrt-single": 1.0, "ceres-implicit": INF}),
                   result("only-ceres", {"sqrt-single": INF, "ceres-implicit": 1.0}),
                   result("neither", {"sqrt-single": INF, "ceres-implicit": INF})]
        values = measure(results)
        self.assertEqual(values[:2], [INF, 0.0])
        self.assertTrue(math.isnan(values[2]))

    def test_fastest_ceres_reference(self):
        measure = targets.speedup("sqrt-single", "fastest-ceres", 1e-3)
        times = {"sqrt-single": 1.0, "sqrt-double": 0.5, "ceres-implicit": 4.0,
                 "ceres-sparse-schur": 3.0}
        self.assertEqual(measure([result("p", times)]), [3.0])

    def test_missing_solver_is_not_applicable(self):
        r = targets.evaluate(targets.TARGETS[0], [result("p", {"sqrt-single": 1.0})])
        self.assertEqual((r.median, r.count, r.verdict), (None, 0, "n/a"))

    def test_failing_verdict(self):
        results = [result("p", {"sqrt-single": 1.0, "ceres-implicit": 1.5})]
        self.assertEqual(targets.evaluate(targets.TARGETS[0], results).verdict, "FAIL")


class RunBasedTargetsTest(unittest.TestCase):
    def test_final_cost_gap_and_failed_run(self):
        measure = targets.final_cost_gap("sqrt-single")
        ok = result("ok", {}, runs={"sqrt-single": run_data(rows(1, 1), final_cost=1.00005)})
        failed = result("failed", {}, runs={"sqrt-single": run_data(None, final_cost=None)})
        gap_ok, gap_failed = measure([ok, failed])
        self.assertAlmostEqual(gap_ok, 5e-5)
        self.assertEqual(gap_failed, INF)

    def test_per_linear_iteration_speedup(self):
        runs = {"sqrt-single": run_data(rows(1.0, 10)), "sqrt-double": run_data(rows(1.8, 10))}
        measure = targets.linear_iteration_speedup("sqrt-double", "sqrt-single")
        self.assertAlmostEqual(measure([result("p", {}, runs=runs)])[0], 1.8)

    def test_per_linear_iteration_uses_linear_solver_time(self):
        # Whole iterations take 1.0 s and 1.8 s (evaluation included), the
        # linear solves 0.2 s and 0.5 s: the per-PCG ratio is 2.5, not 1.8.
        single, double = rows(1.0, 10), rows(1.8, 10)
        for r in single[1:]:
            r["step_solver_seconds"] = 0.2
        for r in double[1:]:
            r["step_solver_seconds"] = 0.5
        runs = {"sqrt-single": run_data(single), "sqrt-double": run_data(double)}
        measure = targets.linear_iteration_speedup("sqrt-double", "sqrt-single")
        self.assertAlmostEqual(measure([result("p", {}, runs=runs)])[0], 2.5)

    def test_memory_ratio_skips_failed_runs(self):
        runs = {"sqrt-single": run_data(rows(1, 1), peak_rss_mib=150.0),
                "ceres-implicit": run_data(rows(1, 1), peak_rss_mib=100.0)}
        failed = {"sqrt-single": run_data(None, peak_rss_mib=5.0),
                  "ceres-implicit": run_data(rows(1, 1), peak_rss_mib=100.0)}
        measure = targets.memory_ratio("sqrt-single", "ceres-implicit")
        self.assertEqual(measure([result("a", {}, runs=runs), result("b", {}, runs=failed)]), [1.5])


class ScalingTest(unittest.TestCase):
    def test_loglog_slope(self):
        self.assertAlmostEqual(targets.loglog_slope([(1e3, 2.0), (1e4, 20.0), (1e5, 200.0)]), 1.0)
        self.assertAlmostEqual(targets.loglog_slope([(1e3, 1.0), (1e5, 1e4)]), 2.0)
        self.assertIsNone(targets.loglog_slope([(1e3, 1.0), (1e3, 2.0)]))

    def test_only_synthetic_problems_count(self):
        def sized(name, kind, n, seconds):
            return result(name, {}, kind=kind, observations=n,
                          runs={"sqrt-single": run_data(rows(seconds, 10))})
        results = [sized("s1", "synthetic", 1000, 0.1), sized("s2", "synthetic", 10000, 1.0),
                   sized("bal", "bal", 5000, 100.0)]
        points = targets.scaling_points(results, "sqrt-single")
        self.assertEqual([n for n, _ in points], [1000, 10000])
        self.assertAlmostEqual(points[0][1], 0.1)
        r = targets.evaluate(targets.TARGETS[-1], results)
        self.assertAlmostEqual(r.median, 1.0)
        self.assertEqual(r.verdict, "pass")


if __name__ == "__main__":
    unittest.main()
