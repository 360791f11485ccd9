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
import problems  # noqa: E402
import report  # noqa: E402

FAKE = os.path.join(os.path.dirname(TESTS_DIR), "testdata", "fake_bundle_adjuster.py")
FAKE22 = os.path.join(os.path.dirname(TESTS_DIR), "testdata", "fake_ceres22_bundle_adjuster.py")
CERES22_SOLVERS = "ceres22-implicit,ceres22-explicit,ceres22-sparse-schur,ceres22-power-series"


def make_bal_dir(folder):
    """A BAL folder with a file named like ladybug-49 (the fakes read its header only)."""
    with bz2.open(os.path.join(folder, e2e_driver.E2E_BAL_FILE), "wt") as f:
        f.write("49 7776 31843\n0 0 1.5 2.5\n")
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
            FAKE, cls.out, make_bal_dir(os.path.join(cls.tmp)), iterations=12,
            ceres22_binary=FAKE22)

    def test_driver_and_checker_pass(self):
        self.assertNoErrors(self.errors, self.completed)
        self.assertEqual(self.warnings, [])
        self.assertIn(e2e_driver.E2E_PROBLEM, read(os.path.join(self.out, "results.md")))
        self.assertNotIn("README", read(os.path.join(self.out, "runs.csv")))

    def test_runs_record_memory_iterations_and_traces(self):
        runs = runs_by_solver(self.out)
        self.assertEqual(sorted(runs), sorted(e2e_driver.DEFAULT_SOLVERS.split(",")
                                              + [e2e_driver.CERES22_SOLVER]))
        for run in runs.values():
            # The fake example counts iteration 0 in "iterations", Ceres' does not.
            iterations = 12 if run["solver"] == e2e_driver.CERES22_SOLVER else 13
            self.assertEqual((run["status"], run["iterations"], run["num_observations"]),
                             ("ok", iterations, 31843))
            self.assertGreater(run["wall_seconds"], 0)
            self.assertIsNotNone(run["linear_solver_seconds"])
        # The fake holds ~0.4 vs 0.25 MiB per 1000 observations: ~4.8 MiB apart,
        # visible only if ru_maxrss is really per run and not the driver's.
        self.assertGreater(runs["sqrt-double"]["peak_rss_mib"],
                           runs["ceres-implicit"]["peak_rss_mib"] + 2.0)

    def test_docs_copy_updated_and_real_docs_untouched(self):
        docs = os.path.join(self.out, "docs", "benchmarks.md")
        text = read(docs)
        self.assertIn("](benchmarks/profiles.png)", text)
        self.assertTrue(os.path.isfile(os.path.join(self.out, "docs", "benchmarks", "memory.png")))
        self.assertEqual(read(e2e_driver.DOCS_PAGE), self.docs_before)

    def test_docs_section_has_results_but_no_target_checks(self):
        text = read(os.path.join(self.out, "docs", "benchmarks.md"))
        section = text[text.index(report.DOCS_BEGIN):text.index(report.DOCS_END)]
        self.assertIn("### Machine", section)
        self.assertIn("#### %s" % e2e_driver.E2E_PROBLEM, section)
        self.assertIn("| t iter 0 [s] |", section)
        self.assertNotIn("Targets", section)
        self.assertNotIn("| verdict |", section)
        for verdict in ("| pass |", "| FAIL |", "| n/a |"):
            self.assertNotIn(verdict, section)
        # The results folder keeps the checks (and the driver prints them).
        results_md = read(os.path.join(self.out, "results.md"))
        self.assertIn("## Targets", results_md)
        self.assertIn("| verdict |", results_md)
        self.assertIn("| verdict |", self.completed.stdout)

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

    def test_the_representative_is_the_run_closest_to_the_median_trace(self):
        sys.path.insert(0, os.path.dirname(TESTS_DIR))
        import run_benchmarks  # noqa: E402

        def trace(*seconds):
            return [{"iteration": i, "cumulative_seconds": t} for i, t in enumerate(seconds)]
        runs = [{"status": "ok", "solver_seconds": t} for t in (1.00, 0.98, 0.99)]
        # The third run has the median total time but a slow start, which
        # decides the early tolerances: the second run, the median at two
        # iterations and next to it at the others, stands for the three.
        traces = [trace(0.014, 0.024, 0.5, 1.00), trace(0.015, 0.026, 0.49, 0.98),
                  trace(0.021, 0.041, 0.5, 0.99)]
        self.assertIs(run_benchmarks.representative(runs, traces), runs[1])
        self.assertIs(run_benchmarks.representative(runs), runs[2])
        # Traces of different lengths are compared over the common iterations.
        self.assertIs(run_benchmarks.representative(runs, traces[:2] + [trace(0.021, 0.041)]), runs[1])
        # A missing trace, or two repeats: the median solver time decides.
        self.assertIs(run_benchmarks.representative(runs, traces[:2] + [None]), runs[2])
        self.assertIs(run_benchmarks.representative(runs[:2], traces[:2]), runs[1])
        # Equal distances: the earlier run in solver-time order.
        same = [trace(0.01, 0.02), trace(0.01, 0.02), trace(0.01, 0.02)]
        self.assertIs(run_benchmarks.representative(runs, same), runs[1])


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
        self.assertIn("Failed or not run", read(os.path.join(self.out, "results.md")))


class Ceres22Test(Workspace):
    """The four ceres22-* solvers through the fake Ceres 2.2 example, on a BAL
    file (decompressed for it), a synthetic and a long-track problem (written
    by our fake binary with --write_bal)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.out = os.path.join(cls.tmp, "results")
        cls.bal_dir = make_bal_dir(os.path.join(cls.tmp))
        cls.completed = e2e_driver.run_driver(
            FAKE, cls.out, ["--bal-dir", cls.bal_dir, "--synthetic", "5k", "--long-track", "20k",
                            "--solvers", "sqrt-single,sqrt-double," + CERES22_SOLVERS,
                            "--num-iterations", "12", "--ceres22-binary", FAKE22])
        cls.runs = bench_io.read_runs(os.path.join(cls.out, "runs.csv"))

    def test_every_run_ok_and_the_results_consistent(self):
        self.assertEqual(self.completed.returncode, 0, self.completed.stderr)
        self.assertEqual(len(self.runs), 3 * 6)
        self.assertEqual({r["status"] for r in self.runs}, {"ok"})
        self.assertNoErrors(check_results.check(self.out, require_ok=True)[0])
        self.assertEqual({r["problem"] for r in self.runs},
                         {"problem-49-7776-pre", "synthetic-5k", "long-track-20k"})

    def test_ceres22_reads_plain_text_written_for_it_then_removed(self):
        commands = [r["command"] for r in self.runs if r["solver"].startswith("ceres22-")]
        inputs = os.path.join(self.out, "inputs")
        for name in ("problem-49-7776-pre", "synthetic-5k", "long-track-20k"):
            self.assertTrue(any("--input=%s.txt" % os.path.join(inputs, name) in c
                                for c in commands), name)
        for c in commands:
            self.assertIn("--linear_solver_ordering=automatic", c)
            self.assertIn("--logtostderr", c)
            self.assertNotIn("--csv", c)
        self.assertFalse(os.path.exists(inputs) and os.listdir(inputs))
        long_track = [r for r in self.runs if r["problem"] == "long-track-20k"]
        self.assertEqual({r["num_observations"] for r in long_track}, {20000})
        self.assertEqual({r["num_cameras"] for r in long_track}, {1000})

    def test_ceres22_traces_hold_accepted_steps_only(self):
        run = next(r for r in self.runs if r["solver"] == "ceres22-implicit"
                   and r["problem"] == "synthetic-5k")
        rows = bench_io.read_trace_rows(os.path.join(self.out, run["trace"]))
        rejected = [r["iteration"] for r in rows if not r["step_accepted"]]
        self.assertEqual(rejected, [5, 7, 10])  # rejected, invalid, rejected
        trace = bench_io.read_trace(os.path.join(self.out, run["trace"]))
        self.assertEqual(len(trace), 13 - 3)
        self.assertEqual(trace[-1][1], run["final_cost"])
        self.assertEqual(run["solver"], "ceres22-implicit")
        self.assertEqual(run["precision_switch_iteration"], -1)
        summary = bench_io.read_summary(os.path.join(self.out, run["summary"]))
        self.assertEqual(summary["solver"], "iterative_schur+schur_jacobi")
        self.assertEqual(summary["problem"], "synthetic-5k.txt")

    def test_report_has_phases_iteration_zero_and_best_ceres22_ratios(self):
        text = read(os.path.join(self.out, "results.md"))
        self.assertIn("t/t(best Ceres 2.2) τ=1e-2", text)
        self.assertIn("| t iter 0 [s] |", text)
        self.assertIn("Time per phase:", text)
        for problem in ("problem-49-7776-pre", "synthetic-5k", "long-track-20k"):
            self.assertTrue(os.path.isfile(os.path.join(self.out, "phases_%s.png" % problem)))
        self.assertIn("ceres 2.2 binary", text)
        with open(os.path.join(self.out, "targets.csv")) as f:
            verdicts = {r["target"]: r["verdict"] for r in csv.DictReader(f)}
        # The fake sqrt-single is 2.2-3x sooner than the fake Ceres 2.2 solvers.
        self.assertEqual(verdicts["single-vs-best-ceres22-1e-2"], "pass")
        self.assertEqual(verdicts["single-iteration-0"], "pass")
        self.assertEqual(verdicts["evaluator-jacobian-floor"], "n/a")

    def test_keep_inputs_keeps_the_plain_text_files(self):
        out = os.path.join(self.tmp, "keep")
        completed = e2e_driver.run_driver(FAKE, out, [
            "--no-bal", "--synthetic", "1k", "--solvers", "sqrt-single,ceres22-implicit",
            "--num-iterations", "3", "--ceres22-binary", FAKE22, "--keep-inputs"])
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertEqual(problems.read_bal_header(os.path.join(out, "inputs", "synthetic-1k.txt")),
                         (10, 200, 1000))


class Ceres22FailureTest(Workspace):
    def run_with(self, name, args, env=None):
        out = os.path.join(self.tmp, name)
        completed = e2e_driver.run_driver(
            FAKE, out, ["--no-bal", "--synthetic", "2k", "--num-iterations", "6", "--solvers",
                        "sqrt-single," + CERES22_SOLVERS] + args, env)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertNoErrors(check_results.check(out)[0])
        return out, runs_by_solver(out)

    def test_unavailable_binary_means_not_run(self):
        for args in (["--ceres22-binary", "none"],
                     ["--ceres22-binary", os.path.join(self.tmp, "no-such-binary")]):
            out, runs = self.run_with("none-%d" % len(args[1]), args)
            self.assertEqual(runs["sqrt-single"]["status"], "ok")
            for solver in CERES22_SOLVERS.split(","):
                self.assertEqual(runs[solver]["status"], "not run", args)
            text = read(os.path.join(out, "results.md"))
            self.assertIn("| ceres22-implicit | not run |", text)
            with open(os.path.join(out, "targets.csv")) as f:
                verdicts = {r["target"]: r["verdict"] for r in csv.DictReader(f)}
            self.assertEqual(verdicts["single-vs-best-ceres22-1e-2"], "n/a")
            self.assertEqual(verdicts["single-iteration-0"], "n/a")

    def test_crash_failure_garbage_and_hang_are_failed_runs(self):
        env = {"FAKE_CERES22_FAIL": "ceres22-implicit:crash,ceres22-explicit:failure,"
                                    "ceres22-sparse-schur:garbage,ceres22-power-series:hang"}
        _, runs = self.run_with("fail", ["--ceres22-binary", FAKE22, "--timeout", "3"], env)
        self.assertEqual(runs["sqrt-single"]["status"], "ok")
        self.assertEqual((runs["ceres22-implicit"]["status"],
                          runs["ceres22-implicit"]["exit_code"]), ("failed", 134))
        self.assertEqual(runs["ceres22-explicit"]["status"], "failed")
        self.assertIn("FAILURE (Residual and Jacobian evaluation failed.)",
                      runs["ceres22-explicit"]["error"])
        self.assertEqual(runs["ceres22-sparse-schur"]["status"], "failed")
        self.assertIn("no progress table", runs["ceres22-sparse-schur"]["error"])
        self.assertEqual(runs["ceres22-power-series"]["status"], "timeout")

    def test_input_that_cannot_be_written_fails_the_ceres22_runs_only(self):
        _, runs = self.run_with("input", ["--ceres22-binary", FAKE22],
                                {"FAKE_BA_FAIL": "write_bal:crash"})
        self.assertEqual(runs["sqrt-single"]["status"], "ok")
        for solver in CERES22_SOLVERS.split(","):
            self.assertEqual(runs[solver]["status"], "failed")
            self.assertIn("no plain-text BAL file for Ceres 2.2", runs[solver]["error"])

    def test_dry_run_shows_both_programs(self):
        completed = e2e_driver.run_driver(FAKE, "/nonexistent/out", [
            "--no-bal", "--synthetic", "1k", "--solvers", "sqrt-single,ceres22-power-series",
            "--ceres22-binary", FAKE22, "--dry-run"])
        lines = completed.stdout.splitlines()
        self.assertEqual(len(lines), 2, completed.stderr)
        self.assertIn("--parameter_tolerance=1e-16", lines[0])
        self.assertIn(FAKE22, lines[1])
        self.assertIn("--input=/nonexistent/out/inputs/synthetic-1k.txt", lines[1])
        self.assertIn("--preconditioner=schur_power_series_expansion", lines[1])
        self.assertFalse(os.path.exists("/nonexistent/out"))


class BaselineBuildTest(Workspace):
    """baseline-* solvers: an earlier build of our binary, given by
    --baseline-binary, run with our flags beside ours."""

    def run_with(self, name, args):
        out = os.path.join(self.tmp, name)
        completed = e2e_driver.run_driver(
            FAKE, out, ["--no-bal", "--synthetic", "1k", "--num-iterations", "4", "--solvers",
                        "sqrt-double,baseline-double"] + args)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertNoErrors(check_results.check(out)[0])
        with open(os.path.join(out, "targets.csv")) as f:
            verdicts = {r["target"]: r["verdict"] for r in csv.DictReader(f)}
        return out, runs_by_solver(out), verdicts

    def test_the_baseline_runs_with_our_flags_and_is_recorded(self):
        out, runs, verdicts = self.run_with("with", ["--baseline-binary", FAKE])
        self.assertEqual(runs["baseline-double"]["status"], "ok")
        self.assertIn("--precision=double", runs["baseline-double"]["command"])
        self.assertIn("--parameter_tolerance=1e-16", runs["baseline-double"]["command"])
        self.assertNotEqual(verdicts["double-vs-baseline"], "n/a")
        text = read(os.path.join(out, "results.md"))
        self.assertIn("baseline binary", text)
        self.assertIn("earlier build", text)

    def test_without_the_binary_the_baseline_is_not_run(self):
        for name, args in (("none", []), ("missing", ["--baseline-binary",
                                                      os.path.join(self.tmp, "no-such")])):
            _, runs, verdicts = self.run_with(name, args)
            self.assertEqual(runs["sqrt-double"]["status"], "ok")
            self.assertEqual(runs["baseline-double"]["status"], "not run", name)
            self.assertIn("baseline", runs["baseline-double"]["error"])
            self.assertEqual(verdicts["double-vs-baseline"], "n/a")


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
