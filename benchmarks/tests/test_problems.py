"""Unit tests of problem discovery, size parsing and the synthetic-size mapping."""

import bz2
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import problems  # noqa: E402


class DiscoverTest(unittest.TestCase):
    def test_finds_bal_files_in_any_spelling_smallest_first(self):
        with tempfile.TemporaryDirectory() as folder:
            def write(name, text, opener=open):
                with opener(os.path.join(folder, name), "wt") as f:
                    f.write(text)
            write("big.txt.bz2", "10 200 3000\n", bz2.open)
            write("small.bal", "2 3 4\n")
            write("README.txt", "BAL problems from grail.cs.washington.edu\n")
            write("SHA256SUMS", "abc  big.txt.bz2\n")
            write("empty.txt", "")
            found = problems.discover_bal(folder)
        self.assertEqual([(p.name, p.num_observations) for p in found],
                         [("small", 4), ("big", 3000)])
        self.assertTrue(found[1].flags[0].startswith("--input=/"))

    def test_missing_folder_has_no_problems(self):
        self.assertEqual(problems.discover_bal("/nonexistent/folder"), [])
        self.assertEqual(problems.discover_bal(""), [])

    def test_select_by_glob_or_substring(self):
        ps = [problems.Problem(n, "bal", "", (), 1) for n in ("problem-49-7776-pre", "x-16")]
        self.assertEqual([p.name for p in problems.select(ps, ["problem-49*"])],
                         ["problem-49-7776-pre"])
        self.assertEqual([p.name for p in problems.select(ps, ["16"])], ["x-16"])
        self.assertEqual(len(problems.select(ps, None)), 2)


class SyntheticTest(unittest.TestCase):
    def test_parse_and_format_counts(self):
        for text, n in (("100k", 100000), ("1M", 1000000), ("2.5e5", 250000), ("50000", 50000)):
            self.assertEqual(problems.parse_count(text), n)
        self.assertEqual(problems.format_count(1500000), "1.5M")
        self.assertEqual(problems.format_count(100000), "100k")
        for bad in ("", "abc", "0", "-5"):
            with self.assertRaises(ValueError):
                problems.parse_count(bad)

    def test_synthetic_problem_has_about_the_requested_observations(self):
        p = problems.synthetic_problem(100000, seed=7)
        self.assertEqual(p.name, "synthetic-100k")
        self.assertEqual(p.num_observations, 100000)
        self.assertIn("--input=", p.flags)
        self.assertIn("--random_seed=7", p.flags)
        cameras, points, per_point = problems.synthetic_sizes(1000000)
        self.assertEqual(points * per_point, 1000000)
        self.assertGreaterEqual(cameras, per_point)

    def test_density_is_the_same_at_every_size(self):
        small, large = problems.synthetic_sizes(100000), problems.synthetic_sizes(1000000)
        self.assertEqual(small[2], large[2])
        self.assertAlmostEqual(small[1] / small[0], large[1] / large[0])


class LongTrackTest(unittest.TestCase):
    def test_long_track_problem(self):
        p = problems.long_track_problem(1000000, seed=5)
        self.assertEqual((p.name, p.kind, p.num_observations), ("long-track-1M", "long-track",
                                                                1000000))
        self.assertIn("--synthetic_num_cameras=1000", p.flags)
        self.assertIn("--synthetic_num_points=5000", p.flags)
        self.assertIn("--synthetic_observations_per_point=100", p.flags)
        self.assertIn("--synthetic_max_observations_per_point=300", p.flags)
        self.assertIn("--random_seed=5", p.flags)


FAKE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "testdata",
                    "fake_bundle_adjuster.py")


class PlainBalTest(unittest.TestCase):
    """The plain-text BAL files Ceres 2.2's example reads."""

    def test_compressed_bal_is_decompressed_plain_bal_used_in_place(self):
        with tempfile.TemporaryDirectory() as folder:
            text = "1 2 2\n0 0 1 2\n0 1 3 4\n" + "0.5\n" * 15
            with bz2.open(os.path.join(folder, "p.txt.bz2"), "wt") as f:
                f.write(text)
            with open(os.path.join(folder, "q.txt"), "w") as f:
                f.write(text)
            p, q = problems.discover_bal(folder)
            inputs = os.path.join(folder, "inputs")
            path = problems.prepare_plain_bal(p, inputs, FAKE)
            self.assertEqual(path, os.path.join(inputs, "p.txt"))
            with open(path) as f:
                self.assertEqual(f.read(), text)
            self.assertEqual(problems.prepare_plain_bal(q, inputs, FAKE), q.input)
            problems.remove_plain_bal(p, path)
            problems.remove_plain_bal(q, q.input)  # never the user's file
            self.assertFalse(os.path.exists(path))
            self.assertTrue(os.path.exists(q.input))

    def test_synthetic_problem_is_written_by_the_binary(self):
        with tempfile.TemporaryDirectory() as folder:
            p = problems.long_track_problem(20000, seed=1)
            path = problems.prepare_plain_bal(p, folder, FAKE)
            self.assertEqual(path, os.path.join(folder, "long-track-20k.txt"))
            self.assertEqual(problems.read_bal_header(path), (1000, 100, 20000))
            os.environ["FAKE_BA_FAIL"] = "write_bal:crash"
            try:
                with self.assertRaisesRegex(ValueError, "--write_bal failed"):
                    problems.prepare_plain_bal(problems.synthetic_problem(1000, 1), folder, FAKE)
            finally:
                del os.environ["FAKE_BA_FAIL"]


if __name__ == "__main__":
    unittest.main()
