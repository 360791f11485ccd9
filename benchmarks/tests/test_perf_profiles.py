"""Unit tests of the time-to-tau and performance-profile maths on hand-made traces."""

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import perf_profiles as pp  # noqa: E402

INF = math.inf
# (seconds, cost) traces: A converges fast, B slowly, C never gets below 50.
A = [(0.5, 100.0), (1.0, 20.0), (2.0, 10.5), (3.0, 10.0)]
B = [(0.4, 100.0), (2.0, 60.0), (4.0, 15.0), (8.0, 10.1)]
C = [(0.6, 100.0), (5.0, 50.0)]


class ThresholdTest(unittest.TestCase):
    def test_cost_threshold_interpolates_between_best_and_initial(self):
        self.assertEqual(pp.cost_threshold(100.0, 10.0, 0.1), 19.0)
        self.assertEqual(pp.cost_threshold(100.0, 10.0, 1.0), 100.0)
        self.assertEqual(pp.cost_threshold(100.0, 10.0, 0.0), 10.0)

    def test_best_cost_is_minimum_over_all_traces_and_points(self):
        self.assertEqual(pp.best_cost([A, B, C]), 10.0)
        self.assertEqual(pp.best_cost([B, None, [(0.0, math.nan)]]), 10.1)

    def test_initial_cost_is_largest_first_cost(self):
        self.assertEqual(pp.initial_cost([A, [(0.1, 100.5), (0.2, 1.0)]]), 100.5)

    def test_no_traces_give_no_costs(self):
        self.assertIsNone(pp.best_cost([None, None]))
        self.assertIsNone(pp.initial_cost([None, []]))


class TimeToThresholdTest(unittest.TestCase):
    def test_first_point_at_or_below_threshold(self):
        self.assertEqual(pp.time_to_threshold(A, 19.0), 2.0)
        self.assertEqual(pp.time_to_threshold(A, 20.0), 1.0)  # equality counts
        self.assertEqual(pp.time_to_threshold(B, 19.0), 4.0)

    def test_never_reaching_is_infinite(self):
        self.assertEqual(pp.time_to_threshold(C, 19.0), INF)

    def test_reaching_at_iteration_zero(self):
        self.assertEqual(pp.time_to_threshold(A, 100.0), 0.5)

    def test_failed_run_or_missing_threshold_is_infinite(self):
        self.assertEqual(pp.time_to_threshold(None, 19.0), INF)
        self.assertEqual(pp.time_to_threshold([], 19.0), INF)
        self.assertEqual(pp.time_to_threshold(A, None), INF)

    def test_nan_cost_never_reaches(self):
        self.assertEqual(pp.time_to_threshold([(0.0, 5.0), (1.0, math.nan)], 1.0), INF)


class AnalyseProblemTest(unittest.TestCase):
    def test_thresholds_and_times(self):
        result = pp.analyse_problem({"a": A, "b": B, "c": C}, taus=(0.1, 0.01))
        self.assertEqual(result.f0, 100.0)
        self.assertEqual(result.f_star, 10.0)
        self.assertAlmostEqual(result.thresholds[0.1], 19.0)
        self.assertAlmostEqual(result.thresholds[0.01], 10.9)
        self.assertEqual(result.times[0.1], {"a": 2.0, "b": 4.0, "c": INF})
        self.assertEqual(result.times[0.01], {"a": 2.0, "b": 8.0, "c": INF})

    def test_failed_run_counts_as_never(self):
        result = pp.analyse_problem({"a": A, "failed": None})
        self.assertTrue(all(t["failed"] == INF for t in result.times.values()))
        self.assertEqual(result.f_star, 10.0)

    def test_all_solvers_failing(self):
        result = pp.analyse_problem({"a": None, "b": None})
        self.assertIsNone(result.f0)
        self.assertIsNone(result.f_star)
        self.assertEqual(set(result.thresholds.values()), {None})
        self.assertTrue(all(t == {"a": INF, "b": INF} for t in result.times.values()))

    def test_no_progress_means_everyone_reaches_at_iteration_zero(self):
        flat = {"a": [(0.3, 5.0), (1.0, 5.0)], "b": [(0.2, 5.0)]}
        result = pp.analyse_problem(flat)
        self.assertTrue(all(t == {"a": 0.3, "b": 0.2} for t in result.times.values()))


class TimeRatioTest(unittest.TestCase):
    def test_conventions(self):
        self.assertEqual(pp.time_ratio(2.0, 4.0), 0.5)
        self.assertEqual(pp.time_ratio(INF, 4.0), INF)
        self.assertEqual(pp.time_ratio(2.0, INF), 0.0)
        self.assertTrue(math.isnan(pp.time_ratio(INF, INF)))
        self.assertEqual(pp.time_ratio(0.0, 0.0), 1.0)
        self.assertEqual(pp.time_ratio(1.0, 0.0), INF)


class PerformanceProfileTest(unittest.TestCase):
    # Four problems: p1 a fastest, p2 tie, p3 only b solves, p4 nobody solves.
    TIMES = [{"a": 1.0, "b": 3.0}, {"a": 2.0, "b": 2.0},
             {"a": INF, "b": 5.0}, {"a": INF, "b": INF}]

    def test_ratios(self):
        ratios = pp.performance_ratios(self.TIMES, ["a", "b"])
        self.assertEqual(ratios["a"], [1.0, 1.0, INF, INF])
        self.assertEqual(ratios["b"], [3.0, 1.0, 1.0, INF])

    def test_profile_values(self):
        ratios = pp.performance_ratios(self.TIMES, ["a", "b"])
        self.assertEqual(pp.profile(ratios["a"], 1.0), 0.5)    # fastest on p1, tie on p2
        self.assertEqual(pp.profile(ratios["a"], 100.0), 0.5)  # never solves p3, p4
        self.assertEqual(pp.profile(ratios["b"], 1.0), 0.5)    # tie p2, alone p3
        self.assertEqual(pp.profile(ratios["b"], 2.999), 0.5)
        self.assertEqual(pp.profile(ratios["b"], 3.0), 0.75)   # p4 stays unsolved
        self.assertEqual(pp.profile([], 1.0), 0.0)

    def test_ties_count_as_fastest_for_both(self):
        ratios = pp.performance_ratios([{"a": 2.0, "b": 2.0}], ["a", "b"])
        self.assertEqual((pp.profile(ratios["a"], 1.0), pp.profile(ratios["b"], 1.0)), (1.0, 1.0))

    def test_all_solvers_failing_everywhere(self):
        times = [{"a": INF, "b": INF}] * 3
        ratios = pp.performance_ratios(times, ["a", "b"])
        self.assertTrue(all(r == INF for rs in ratios.values() for r in rs))
        self.assertEqual(pp.profile(ratios["a"], 1e9), 0.0)

    def test_solver_missing_on_a_problem_is_unsolved(self):
        ratios = pp.performance_ratios([{"a": 1.0}], ["a", "b"])
        self.assertEqual(ratios["b"], [INF])

    def test_zero_time_fastest(self):
        ratios = pp.performance_ratios([{"a": 0.0, "b": 0.0, "c": 1.0}], ["a", "b", "c"])
        self.assertEqual(ratios, {"a": [1.0], "b": [1.0], "c": [INF]})

    def test_curve_breakpoints(self):
        ratios = pp.performance_ratios(self.TIMES, ["a", "b"])
        self.assertEqual(pp.profile_curve(ratios["b"]), ([1.0, 3.0], [0.5, 0.75]))
        self.assertEqual(pp.profile_curve(ratios["a"]), ([1.0], [0.5]))

    def test_profile_is_monotone(self):
        ratios = pp.performance_ratios(self.TIMES, ["a", "b"])["b"]
        values = [pp.profile(ratios, a) for a in (1, 1.5, 2, 3, 10)]
        self.assertEqual(values, sorted(values))


if __name__ == "__main__":
    unittest.main()
