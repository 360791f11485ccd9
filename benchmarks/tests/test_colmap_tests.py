"""scripts/colmap_tests.py's tally, on stand-in test binaries that write
GoogleTest's JSON report (and one that crashes before writing it)."""

import importlib.util
import os
import stat
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("colmap_tests",
                                              os.path.join(ROOT, "scripts", "colmap_tests.py"))
colmap_tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(colmap_tests)

REPORT = """{"testsuites": [
 {"name": "Suite", "testsuite": [
  {"name": "Passes", "status": "RUN", "result": "COMPLETED"},
  {"name": "Fails", "status": "RUN", "result": "COMPLETED",
   "failures": [{"failure": "file.cc:12\\nExpected equality of these values:\\n  a\\n  b"}]},
  {"name": "Skips", "status": "RUN", "result": "SKIPPED"}]}]}"""


def stand_in(folder, name, body):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class TallyTest(unittest.TestCase):
    def test_passed_failed_and_skipped_are_counted_from_the_report(self):
        with tempfile.TemporaryDirectory() as folder:
            report = os.path.join(folder, "report.json")
            with open(report, "w") as f:
                f.write(REPORT)
            binary = stand_in(folder, "some_test",
                              'cp %s "${1#--gtest_output=json:}"; exit 1' % report)
            row = colmap_tests.run_binary(binary, timeout=30)
        self.assertEqual((row["tests"], row["passed"], row["failed"], row["skipped"]), (3, 1, 1, 1))
        self.assertEqual(row["failures"][0]["test"], "Suite.Fails")
        self.assertIn("file.cc:12 / Expected equality", row["failures"][0]["message"])

    def test_a_binary_that_dies_before_its_report_is_a_failure(self):
        with tempfile.TemporaryDirectory() as folder:
            binary = stand_in(folder, "crash_test", "echo 'Check failed: x'; kill -SEGV $$")
            row = colmap_tests.run_binary(binary, timeout=30)
        self.assertEqual(row["failed"], 1)
        self.assertEqual(row["failures"][0]["test"], "(the binary)")
        self.assertIn("Check failed: x", row["failures"][0]["message"])


if __name__ == "__main__":
    unittest.main()
