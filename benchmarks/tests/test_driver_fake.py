"""The benchmark driver end to end against the fake example binary.

Same driver, same checker and same e2e script as the ctest test that uses the
real bundle_adjuster, so they are known to work before that binary exists.
"""

import bz2
import csv
import os
import sys
import tempfile
import unittest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TESTS_DIR))
sys.path.insert(0, TESTS_DIR)

import bench_io  # noqa: E402
import check_results  # noqa: E402
import e2e_driver  # noqa: E402

FAKE = os.path.join(os.path.dirname(TESTS_DIR), "testdata", "fake_bundle_adjuster.py")


def make_bal_dir(folder):
    """A BAL folder with a file named like ladybug-49 (the fake reads its header only)."""
    with bz2.open(os.path.join(folder, e2e_driver.E2E_BAL_FILE), "wt") as f:
        f.write("49 7776 31843\n")
    with open(os.path.join(folder, "README.txt"), "w") as f:
        f.write("not a problem\n")
    return folder


def runs_by_solver(out_dir):
    return {r["solver"]: r for r in bench_io.read_runs(os.path.join(out_dir, "runs.csv"))}


def read(path):
    with open(path) as f:
        return f.read()


class Workspace(unittest.TestCase):
    """A temporary folder per test class (driver runs take ~2 s: share them)."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.tmp = cls._tmp.name

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def assertNoErrors(self, errors, completed=None):
        detail = "" if completed is None else completed.stdout + completed.stderr
        self.assertEqual(errors, [], detail)


class BalEndToEndTest(Workspace):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.out = os.path.join(cls.tmp, "results")
        cls.docs_before = read(e2e_driver.DOCS_PAGE)
        cls.errors, cls.warnings, cls.completed = e2e_driver.run_e2e(
            FAKE, cls.out, make_bal_dir(os.path.join(cls.tmp)), iterations=12)

    def test_driver_and_checker_pass(self):
        self.assertNoErrors(self.errors, self.completed)
        self.assertEqual(self.warnings, [])
        self.assertIn(e2e_driver.E2E_PROBLEM, read(os.path.join(self.out, "results.md")))
        self.assertNotIn("README", read(os.path.join(self.out, "runs.csv")))

    def test_runs_record_memory_iterations_and_traces(self):
        runs = runs_by_solver(self.out)
        self.assertEqual(sorted(runs), sorted(e2e_driver.DEFAULT_SOLVERS.split(",")))
        for run in runs.values():
            self.assertEqual((run["status"], run["iterations"], run["num_observations"]),
                             ("ok", 13, 31843))
            self.assertGreater(run["wall_seconds"], 0)
        # The fake holds ~0.4 vs 0.25 MiB per 1000 observations: ~4.8 MiB apart,
        # visible only if ru_maxrss is really per run and not the driver's.
        self.assertGreater(runs["sqrt-double"]["peak_rss_mib"],
                           runs["ceres-implicit"]["peak_rss_mib"] + 2.0)

    def test_docs_copy_updated_and_real_docs_untouched(self):
        docs = os.path.join(self.out, "docs", "benchmarks.md")
        text = read(docs)
        self.assertIn("](benchmarks/profiles.png)", text)
        self.assertIn("### Targets", text)
        self.assertTrue(os.path.isfile(os.path.join(self.out, "docs", "benchmarks", "memory.png")))
        self.assertEqual(read(e2e_driver.DOCS_PAGE), self.docs_before)

    def test_report_only_rebuilds_the_same_report(self):
        before = read(os.path.join(self.out, "results.md"))
        completed = e2e_driver.run_driver(FAKE, self.out, ["--report-only"])
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertEqual(read(os.path.join(self.out, "results.md")), before)

    def test_checker_detects_a_wrong_time_in_the_table(self):
        path = os.path.join(self.out, "results.md")
        original = read(path)
        row = next(line for line in original.splitlines() if line.startswith("| sqrt-single | ok"))
        cells = row.split("|")
        cells[3] = " 12345 "  # first time-to-tau column
        try:
            with open(path, "w") as f:
                f.write(original.replace(row, "|".join(cells)))
            errors, _ = check_results.check(self.out)
        finally:
            with open(path, "w") as f:
                f.write(original)
        self.assertTrue(any("sqrt-single" in e and "12345" in e for e in errors), errors)

    def test_checker_detects_a_trace_that_disagrees(self):
        trace = os.path.join(self.out, runs_by_solver(self.out)["ceres-implicit"]["trace"])
        original = read(trace)
        try:
            with open(trace, "w") as f:  # pretend ceres-implicit got to f* at once
                lines = original.splitlines()
                fields = lines[2].split(",")
                fields[2] = "1.0"
                f.write("\n".join(lines[:2] + [",".join(fields)] + lines[3:]) + "\n")
            errors, _ = check_results.check(self.out)
        finally:
            with open(trace, "w") as f:
                f.write(original)
        self.assertTrue(errors)


class SyntheticFallbackTest(Workspace):
    def test_without_the_bal_file_a_synthetic_problem_is_used(self):
        out = os.path.join(self.tmp, "results")
        errors, _, completed = e2e_driver.run_e2e(
            FAKE, out, os.path.join(self.tmp, "no-such-dir"),
            solvers="sqrt-single,ceres-implicit", iterations=5)
        self.assertNoErrors(errors, completed)
        self.assertEqual({r["kind"] for r in runs_by_solver(out).values()}, {"synthetic"})

    def test_two_sizes_give_a_scaling_plot(self):
        out = os.path.join(self.tmp, "scaling")
        completed = e2e_driver.run_driver(FAKE, out, ["--no-bal", "--synthetic", "5k,20k",
                                                      "--solvers", "sqrt-single,ceres-implicit",
                                                      "--num-iterations", "4"])
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertNoErrors(check_results.check(out, require_ok=True)[0])
        self.assertTrue(os.path.isfile(os.path.join(out, "scaling.png")))
        self.assertRegex(read(os.path.join(out, "results.md")),
                         r"time/iteration vs observations, log-log slope \| 1 \|")


class RepeatTest(Workspace):
    def test_repeats_keep_the_median_run_and_list_all(self):
        out = os.path.join(self.tmp, "repeat")
        completed = e2e_driver.run_driver(FAKE, out, ["--no-bal", "--synthetic", "5k",
                                                      "--solvers", "sqrt-single,ceres-implicit",
                                                      "--num-iterations", "4", "--repeat", "3"])
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertNoErrors(check_results.check(out, require_ok=True)[0])
        with open(os.path.join(out, "repeats.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 6)
        runs = runs_by_solver(out)
        for solver in ("sqrt-single", "ceres-implicit"):
            mine = [r for r in rows if r["solver"] == solver]
            self.assertEqual(sorted(int(r["repeat"]) for r in mine), [1, 2, 3])
            chosen = [r for r in mine if r["chosen"] == "1"]
            self.assertEqual(len(chosen), 1)
            seconds = sorted(float(r["solver_seconds"]) for r in mine)
            self.assertEqual(float(chosen[0]["solver_seconds"]), seconds[1])
            self.assertAlmostEqual(runs[solver]["solver_seconds"], seconds[1])
            # The kept run's files are the ones in traces/.
            self.assertTrue(os.path.isfile(os.path.join(out, runs[solver]["trace"])))

    def test_a_run_that_fails_once_is_kept_as_failed(self):
        sys.path.insert(0, os.path.dirname(TESTS_DIR))
        import run_benchmarks  # noqa: E402
        ok = [{"status": "ok", "solver_seconds": t} for t in (3.0, 1.0, 2.0, 4.0)]
        self.assertEqual(run_benchmarks.representative(ok)["solver_seconds"], 2.0)
        failed = {"status": "failed", "solver_seconds": None}
        self.assertIs(run_benchmarks.representative(ok[:2] + [failed]), failed)


class FailedRunsTest(Workspace):
    SOLVERS = "sqrt-single,sqrt-double,ceres-implicit,ceres-explicit,ceres-sparse-schur"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.out = os.path.join(cls.tmp, "results")
        env = {"FAKE_BA_FAIL": "ceres-implicit:crash,sqrt-double:nocsv,ceres-explicit:hang,"
                               "ceres-sparse-schur:stuck"}
        cls.completed = e2e_driver.run_driver(
            FAKE, cls.out, ["--no-bal", "--synthetic", "5k", "--solvers", cls.SOLVERS,
                            "--num-iterations", "6", "--timeout", "2"], env)

    def test_driver_survives_and_records_each_failure(self):
        self.assertEqual(self.completed.returncode, 0, self.completed.stderr)
        runs = runs_by_solver(self.out)
        self.assertEqual(runs["sqrt-single"]["status"], "ok")
        self.assertEqual((runs["ceres-implicit"]["status"], runs["ceres-implicit"]["exit_code"]),
                         ("failed", 1))
        self.assertIn("fake failure", runs["ceres-implicit"]["error"])
        self.assertEqual(runs["sqrt-double"]["status"], "failed")
        self.assertIn("summary", runs["sqrt-double"]["error"])
        self.assertEqual(runs["ceres-explicit"]["status"], "timeout")
        self.assertLess(runs["ceres-explicit"]["wall_seconds"], 10)
        self.assertEqual(runs["ceres-sparse-schur"]["status"], "ok")

    def test_report_is_consistent_but_not_all_ok(self):
        self.assertEqual(check_results.check(self.out)[0], [])
        errors, _ = check_results.check(self.out, require_ok=True)
        self.assertEqual(len(errors), 3, errors)

    def test_failed_and_stuck_runs_never_reach_a_threshold(self):
        with open(os.path.join(self.out, "time_to_tau.csv"), newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["tau"] == "1e-3"]
        seconds = {r["solver"]: float(r["seconds"]) for r in rows}
        for solver in ("ceres-implicit", "sqrt-double", "ceres-explicit", "ceres-sparse-schur"):
            self.assertEqual(seconds[solver], float("inf"), solver)
        self.assertLess(seconds["sqrt-single"], float("inf"))
        self.assertIn("Failed runs", read(os.path.join(self.out, "results.md")))


class UnstartableBinaryTest(Workspace):
    def test_a_binary_that_cannot_run_is_a_failed_run(self):
        binary = os.path.join(self.tmp, "not_executable")
        open(binary, "w").close()
        out = os.path.join(self.tmp, "results")
        completed = e2e_driver.run_driver(binary, out, ["--no-bal", "--synthetic", "1k",
                                                        "--solvers", "sqrt-single"])
        self.assertEqual(completed.returncode, 0, completed.stderr)
        run = runs_by_solver(out)["sqrt-single"]
        self.assertEqual((run["status"], run["exit_code"]), ("failed", 127))
        self.assertIn("cannot start", run["error"])
        self.assertEqual(check_results.check(out)[0], [])


class DryRunTest(unittest.TestCase):
    def test_prints_one_command_per_run_with_the_solver_flags(self):
        completed = e2e_driver.run_driver(FAKE, "/nonexistent/out", [
            "--no-bal", "--synthetic", "1k", "--solvers", "sqrt-double,ceres-explicit",
            "--threads", "3", "--dry-run"])
        lines = completed.stdout.splitlines()
        self.assertEqual(len(lines), 2, completed.stderr)
        self.assertIn("--precision=double", lines[0])
        self.assertIn("--explicit_schur_complement", lines[1])
        self.assertTrue(all("--num_threads=3" in line and "--robustify" in line for line in lines))
        self.assertFalse(os.path.exists("/nonexistent/out"))

    def test_unknown_solver_is_a_usage_error(self):
        completed = e2e_driver.run_driver(FAKE, "/nonexistent/out", ["--solvers", "nope"])
        self.assertEqual(completed.returncode, 2)
        self.assertIn("unknown solver", completed.stderr)


if __name__ == "__main__":
    unittest.main()
