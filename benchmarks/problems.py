"""The problems a benchmark runs: BAL files from a folder, synthetic sizes
and long-track synthetic problems.

A Problem carries the example-binary flags that select it, so the runner
does not need to know where a problem comes from.  Ceres 2.2's example reads
plain-text BAL files only: prepare_plain_bal gives it one for every problem
(a BAL file decompressed, or the synthetic problem written by our binary with
--write_bal before its normalization, so that both binaries normalize the
same numbers the same way).
"""

import bz2
import fnmatch
import gzip
import os
import re
import shutil
import subprocess
import sys
from collections import namedtuple

# kind: "bal", "synthetic" or "long-track"; flags: binary flags selecting the
# problem; num_observations: from the BAL header, or the synthetic target (for
# sorting).
Problem = namedtuple("Problem", "name kind input flags num_observations")

_BAL_SUFFIXES = (".txt", ".bal")
_COMPRESSED = {".bz2": bz2.open, ".gz": gzip.open}

# Synthetic problems keep a BAL-like density at every size, so that a sweep
# over sizes measures scaling in the number of observations alone
# (ladybug-49 has ~160 points per camera and ~4 observations per point).
SYNTHETIC_OBSERVATIONS_PER_POINT = 5
SYNTHETIC_POINTS_PER_CAMERA = 200

# Long tracks: 1000 cameras, every point seen by 100 to 300 of them (drawn
# uniformly per point, 200 on average), the number of points from the size.
LONG_TRACK_CAMERAS = 1000
LONG_TRACK_MIN_OBSERVATIONS = 100
LONG_TRACK_MAX_OBSERVATIONS = 300

_SIZE_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}


def _split_compression(filename):
    """(name without .bz2/.gz, opener) for a possibly compressed file."""
    for ext, opener in _COMPRESSED.items():
        if filename.endswith(ext):
            return filename[: -len(ext)], opener
    return filename, open


def bal_stem(filename):
    """Problem name of a BAL file: its name without BAL and compression suffixes,
    or None if the name does not look like a BAL file."""
    base, _ = _split_compression(os.path.basename(filename))
    for suffix in _BAL_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return None


def read_bal_header(path):
    """(num_cameras, num_points, num_observations) from a BAL file's first line.

    Also the test that a *.txt file really is a BAL problem (a README.txt in
    the folder must not become a benchmark); returns None if it is not.
    """
    _, opener = _split_compression(path)
    try:
        with opener(path, "rt") as f:
            fields = f.readline().split()
        counts = tuple(int(x) for x in fields)
    except (OSError, ValueError, EOFError):
        return None
    return counts if len(counts) == 3 and all(c > 0 for c in counts) else None


def discover_bal(folder):
    """All BAL problems in `folder` (not recursive), smallest first."""
    if not folder or not os.path.isdir(folder):
        return []
    problems = []
    for entry in sorted(os.listdir(folder)):
        path = os.path.join(folder, entry)
        stem = bal_stem(entry)
        header = read_bal_header(path) if stem and os.path.isfile(path) else None
        if header:
            problems.append(Problem(stem, "bal", os.path.abspath(path),
                                    ("--input=%s" % os.path.abspath(path),), header[2]))
    return sorted(problems, key=lambda p: (p.num_observations, p.name))


def parse_count(text):
    """'100k' -> 100000, '1M' -> 1000000, '2.5e5' -> 250000."""
    match = re.fullmatch(r"\s*([0-9.eE+]+)\s*([kKmMgG]?)\s*", text)
    if not match:
        raise ValueError("not a count: %r (examples: 50000, 100k, 1M)" % text)
    value = float(match.group(1)) * _SIZE_SUFFIX[match.group(2).lower()]
    if value < 1:
        raise ValueError("count must be positive: %r" % text)
    return int(round(value))


def format_count(n):
    """Short label of an observation count: 100000 -> '100k', 1500000 -> '1.5M'."""
    for suffix, scale in (("M", 10**6), ("k", 10**3)):
        if n >= scale:
            return ("%.3g" % (n / scale)) + suffix
    return str(n)


def synthetic_sizes(num_observations):
    """(cameras, points, observations per point) giving ~num_observations."""
    per_point = SYNTHETIC_OBSERVATIONS_PER_POINT
    points = max(1, round(num_observations / per_point))
    cameras = max(2 * per_point, round(points / SYNTHETIC_POINTS_PER_CAMERA))
    return cameras, points, per_point


def synthetic_problem(num_observations, seed):
    """The built-in synthetic problem of the example binary with ~num_observations."""
    cameras, points, per_point = synthetic_sizes(num_observations)
    flags = ("--input=",
             "--synthetic_num_cameras=%d" % cameras,
             "--synthetic_num_points=%d" % points,
             "--synthetic_observations_per_point=%d" % per_point,
             "--random_seed=%d" % seed)
    return Problem("synthetic-%s" % format_count(num_observations), "synthetic", "",
                   flags, points * per_point)


def long_track_problem(num_observations, seed):
    """The synthetic problem with long tracks and ~num_observations."""
    mean = (LONG_TRACK_MIN_OBSERVATIONS + LONG_TRACK_MAX_OBSERVATIONS) // 2
    points = max(2, round(num_observations / mean))
    flags = ("--input=",
             "--synthetic_num_cameras=%d" % LONG_TRACK_CAMERAS,
             "--synthetic_num_points=%d" % points,
             "--synthetic_observations_per_point=%d" % LONG_TRACK_MIN_OBSERVATIONS,
             "--synthetic_max_observations_per_point=%d" % LONG_TRACK_MAX_OBSERVATIONS,
             "--random_seed=%d" % seed)
    return Problem("long-track-%s" % format_count(num_observations), "long-track", "",
                   flags, points * mean)


def select(problems, patterns):
    """Problems whose name matches any pattern (glob, or substring if no wildcard)."""
    if not patterns:
        return list(problems)

    def matches(name, pattern):
        if any(ch in pattern for ch in "*?["):
            return fnmatch.fnmatchcase(name, pattern)
        return pattern in name

    return [p for p in problems if any(matches(p.name, pat) for pat in patterns)]


def plain_bal_path(problem, folder):
    """Where prepare_plain_bal puts the plain-text BAL file of `problem`; a
    BAL file that is plain text already is used where it is."""
    if problem.kind == "bal":
        base, opener = _split_compression(problem.input)
        if opener is open:
            return problem.input
    return os.path.join(folder, "%s.txt" % problem.name)


def prepare_plain_bal(problem, folder, binary, timeout=None):
    """Make the plain-text BAL file of `problem` (see plain_bal_path) and
    return its path; OSError or ValueError with the reason when that fails.

    A compressed BAL file is decompressed; a synthetic problem is written by
    the example binary (`binary`, which generates it) with --write_bal, before
    its normalization and perturbation.
    """
    path = plain_bal_path(problem, folder)
    if path == problem.input:
        return path
    os.makedirs(folder, exist_ok=True)
    if problem.kind == "bal":
        _, opener = _split_compression(problem.input)
        with opener(problem.input, "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        return path
    command = ([sys.executable, binary] if binary.endswith(".py") else [binary])
    command += list(problem.flags) + ["--write_bal=%s" % path, "--write_bal_only"]
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ValueError("writing %s took more than %g s" % (path, timeout))
    if done.returncode != 0 or read_bal_header(path) is None:
        lines = done.stdout.decode(errors="replace").strip().splitlines()
        raise ValueError("%s --write_bal failed (exit %d): %s"
                         % (os.path.basename(binary), done.returncode,
                            lines[-1] if lines else "no output"))
    return path


def remove_plain_bal(problem, path):
    """Remove a file made by prepare_plain_bal (never the user's BAL file)."""
    if path and path != problem.input and os.path.isfile(path):
        os.remove(path)
