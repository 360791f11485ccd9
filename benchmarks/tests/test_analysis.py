"""Unit tests of analysis.py's readers of a results folder."""

import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import analysis  # noqa: E402
import bench_io  # noqa: E402


class LoadRoundsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_the_repeats_that_succeeded_by_problem_solver_and_round(self):
        with open(os.path.join(self.tmp, bench_io.REPEATS_FILE), "w") as f:
            f.write("problem,solver,repeat,chosen,status,solver_seconds,wall_seconds\n"
                    "p,sqrt-double,1,0,ok,2.5,3\n"
                    "p,baseline-double,1,1,ok,2.0,3\n"
                    "p,sqrt-double,2,1,ok,1.5,2\n"
                    "p,baseline-double,2,0,failed,0.1,1\n"
                    "q,sqrt-double,1,1,timeout,,\n"
                    "q,sqrt-single,x,1,ok,1.0,1\n")
        self.assertEqual(analysis.load_rounds(self.tmp),
                         {"p": {"sqrt-double": {1: 2.5, 2: 1.5}, "baseline-double": {1: 2.0}}})

    def test_a_single_run_has_no_rounds(self):
        self.assertEqual(analysis.load_rounds(self.tmp), {})


if __name__ == "__main__":
    unittest.main()
