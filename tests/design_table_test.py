#!/usr/bin/env python3
"""docs/design.md's file table against the source tree.

The table (the markdown table with a column whose header starts with "file")
is the map of the code for the next engineer, so:

  - every file it names must exist (names are in backticks, relative to the
    folder given in backticks in that header, e.g. `ceres_sqrtba/internal/`,
    or to the repository root when the header names none; `name.*` stands
    for name.h and name.cc and must match at least one file);
  - every .h/.cc file under ceres_sqrtba/, unit tests (*_test.cc) excepted,
    must be named in it.

Run by ctest as design_table_test:  python3 tests/design_table_test.py [ROOT]
"""
import glob
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import markdown_tables  # noqa: E402


def parse_file_table(text):
    """Returns (base, [(line number, name)]) of the file table in `text`: the
    first table with a column whose header starts with "file"; base is the
    folder that header names in backquotes.

    Raises ValueError when there is no such table.
    """
    for header, rows in markdown_tables.tables(text):
        columns = [k for k, c in enumerate(header) if c.lower().startswith("file")]
        if not columns:
            continue
        column = columns[0]
        base = re.findall(r"`([^`]+)`", header[column])
        names = [(number, name) for number, row in rows if len(row) > column
                 for name in re.findall(r"`([^`]+)`", row[column])]
        return (base[0] if base else ""), names
    raise ValueError("no markdown table with a column whose header starts with 'file'")


def source_files(root):
    """The .h/.cc files under root/ceres_sqrtba except unit tests, relative to root."""
    found = []
    for folder, _, files in os.walk(os.path.join(root, "ceres_sqrtba")):
        for f in files:
            if f.endswith((".h", ".cc")) and not f.endswith("_test.cc"):
                found.append(os.path.relpath(os.path.join(folder, f), root))
    return sorted(found)


def check(root, design_text):
    """Returns (names that match no file, source files the table does not name)."""
    base, names = parse_file_table(design_text)
    missing, named = [], set()
    for line, name in names:
        pattern = os.path.normpath(os.path.join(root, base, name))
        matches = [os.path.relpath(m, root) for m in glob.glob(pattern) if os.path.isfile(m)]
        if not matches:
            missing.append(f"docs/design.md:{line}: `{name}` "
                           f"({os.path.relpath(pattern, root)}) matches no file")
        named.update(matches)
    unlisted = [f for f in source_files(root) if f not in named]
    return missing, unlisted


class DesignTableTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
            self.missing, self.unlisted = check(ROOT, f.read())

    def test_named_files_exist(self):
        if self.missing:
            self.fail("files named in docs/design.md's table do not exist:\n"
                      + "\n".join(self.missing))

    def test_every_source_file_is_named(self):
        if self.unlisted:
            self.fail("source files missing from docs/design.md's file table:\n"
                      + "\n".join(self.unlisted))


class CheckerTest(unittest.TestCase):
    """The checker itself, on a made-up tree: it must see both kinds of error."""

    def test_reports_missing_and_unlisted_files(self):
        with tempfile.TemporaryDirectory() as root:
            for path in ["ceres_sqrtba/solver.h", "ceres_sqrtba/internal/a/x.h",
                         "ceres_sqrtba/internal/a/x.cc", "ceres_sqrtba/internal/a/x_test.cc",
                         "ceres_sqrtba/internal/b/y.h"]:
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                open(os.path.join(root, path), "w").close()
            text = ("intro\n\n| concept | file (`ceres_sqrtba/internal/`) |\n|---|---|\n"
                    "| api | `../solver.h` |\n| x | `a/x.*`, `a/gone.h` |\n\nafter\n")
            missing, unlisted = check(root, text)
            self.assertEqual(len(missing), 1)
            self.assertIn("`a/gone.h`", missing[0])
            self.assertIn("docs/design.md:6", missing[0])
            self.assertEqual(unlisted, ["ceres_sqrtba/internal/b/y.h"])

    def test_no_table_is_an_error(self):
        with self.assertRaises(ValueError):
            parse_file_table("| a | b |\n|---|---|\n| `x` | `y` |\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        ROOT = os.path.abspath(sys.argv.pop(1))
    unittest.main()
