#!/usr/bin/env python3
"""The library's layers (docs/design.md, "Layers") against its includes.

The folders of ceres_sqrtba/internal/ are ranked in docs/design.md's layer
table (the markdown table whose first two columns are "rank" and "layer";
each layer names, in backticks relative to ceres_sqrtba/internal/, a folder or
public files such as `../types.*`). A file may include files of its own layer
and of layers of lower rank only, so:

  - an include of a layer of higher rank (up) or of another layer of the same
    rank (sideways) fails, in every .h/.cc file under ceres_sqrtba/;
  - unit tests (*_test.cc) follow the same rule, except that they may include
    the public headers (they may run whole solves through ceres_sqrtba::Solve);
  - a public header (ceres_sqrtba/*.h) includes no internal header;
  - every source file belongs to a layer (a new folder must be ranked), and an
    include names a file that exists;
  - the file table's "layer" column gives, for each row, the rank of the files
    the row names.

Only includes of "ceres_sqrtba/..." are checked; Ceres, Eigen and the tests'
helpers are outside the layers.

Run by ctest as layer_test:  python3 tests/layer_test.py [ROOT]
"""
import fnmatch
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import markdown_tables  # noqa: E402
INTERNAL = "ceres_sqrtba/internal/"
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](ceres_sqrtba/[^">]+)[">]')


def tables(text):
    """Every markdown table of `text`: ([header cells, lower case], [(line number, [cells])])."""
    for header, rows in markdown_tables.tables(text):
        yield [c.lower() for c in header], rows


def parse_layers(text):
    """[(rank, pattern)] of the layer table: each pattern a path relative to the
    repository root, a folder (matching the files under it) or a glob."""
    found = [rows for cells, rows in tables(text) if cells[:2] == ["rank", "layer"]]
    if not found:
        raise ValueError("no markdown table whose columns start with 'rank', 'layer'")
    layers = []
    for _, row in found[0]:
        for name in re.findall(r"`([^`]+)`", row[1]):
            layers.append((int(row[0]), os.path.normpath(INTERNAL + name)))
    if not layers:
        raise ValueError("the layer table names no layer")
    return layers


def layer_of(path, layers):
    """(rank, layer name as the table writes it) of a file (relative to the
    root), or None."""
    for rank, pattern in layers:
        if fnmatch.fnmatchcase(path, pattern) or path.startswith(pattern + "/"):
            name = os.path.relpath(pattern, INTERNAL)
            return rank, name
    return None


def source_files(root):
    """Every .h/.cc file under root/ceres_sqrtba, relative to root."""
    found = []
    for folder, _, files in os.walk(os.path.join(root, "ceres_sqrtba")):
        for f in files:
            if f.endswith((".h", ".cc")):
                found.append(os.path.relpath(os.path.join(folder, f), root))
    return sorted(found)


def is_public(path):
    return os.path.dirname(path) == "ceres_sqrtba"


def check_includes(root, layers):
    """Messages for every include that breaks the layers, and for every file
    without a layer."""
    errors = []
    for path in source_files(root):
        own = layer_of(path, layers)
        if own is None:
            errors.append(f"{path}: in no layer of docs/design.md's layer table")
            continue
        test = path.endswith("_test.cc")
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = os.path.normpath(m.group(1))
                where = f"{path}:{number}: includes {target}"
                if not os.path.isfile(os.path.join(root, target)):
                    errors.append(f"{where}, which does not exist")
                    continue
                if is_public(path) and path.endswith(".h") and not is_public(target):
                    errors.append(f"{where}: a public header includes an internal one")
                    continue
                if test and is_public(target) and target.endswith(".h"):
                    continue
                other = layer_of(target, layers)
                if other is None:
                    errors.append(f"{where}, which is in no layer")
                elif other[1] == own[1]:
                    continue
                elif other[0] > own[0]:
                    errors.append(f"{where}: up, from layer {own[0]} ({own[1]}) "
                                  f"to layer {other[0]} ({other[1]})")
                elif other[0] == own[0]:
                    errors.append(f"{where}: sideways, between {own[1]} and {other[1]} "
                                  f"(both layer {own[0]})")
    return errors


def check_file_table(root, text, layers):
    """Messages for rows of the file table whose "layer" column is not the rank
    of the files they name."""
    # The first table with a column whose header starts with "file", as in
    # design_table_test.py.
    cells, rows = next(((c, r) for c, r in tables(text) if any(h.startswith("file") for h in c)),
                       (None, None))
    if rows is None:
        return ["docs/design.md has no file table"]
    if "layer" not in cells:
        return ["docs/design.md's file table has no 'layer' column"]
    layer_column = cells.index("layer")
    file_column = next(k for k, c in enumerate(cells) if c.startswith("file"))
    errors = []
    for line, row in rows:
        try:
            rank = int(row[layer_column])
        except (ValueError, IndexError):
            errors.append(f"docs/design.md:{line}: the layer column is not a rank")
            continue
        for name in re.findall(r"`([^`]+)`", row[file_column]):
            path = os.path.normpath(INTERNAL + name)
            found = layer_of(path, layers)
            if found is not None and found[0] != rank:
                errors.append(f"docs/design.md:{line}: `{name}` is in layer {found[0]} "
                              f"({found[1]}), the row says {rank}")
    return errors


class LayerTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
            self.text = f.read()
        self.layers = parse_layers(self.text)

    def test_includes_point_down(self):
        errors = check_includes(ROOT, self.layers)
        if errors:
            self.fail("includes that break the layers of docs/design.md:\n" + "\n".join(errors))

    def test_file_table_names_the_layers(self):
        errors = check_file_table(ROOT, self.text, self.layers)
        if errors:
            self.fail("docs/design.md's file table and its layer table disagree:\n"
                      + "\n".join(errors))


class CheckerTest(unittest.TestCase):
    """The checker itself, on a made-up tree: it must see every kind of error."""

    LAYERS = ("| rank | layer | holds |\n|---|---|---|\n| 0 | `../types.*` | enums |\n"
              "| 1 | `low` | |\n| 2 | `left`, `right` | |\n| 3 | `../api.h` | |\n"
              "| 4 | `high` | |\n")

    def check(self, files):
        with tempfile.TemporaryDirectory() as root:
            for path, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            return check_includes(root, parse_layers(self.LAYERS))

    def test_down_and_within_a_layer_pass(self):
        self.assertEqual(self.check({
            "ceres_sqrtba/types.h": "",
            "ceres_sqrtba/api.h": '#include "ceres_sqrtba/types.h"\n',
            "ceres_sqrtba/internal/low/a.h": '#include "ceres_sqrtba/types.h"\n',
            "ceres_sqrtba/internal/low/b.h": '#include "ceres_sqrtba/internal/low/a.h"\n',
            "ceres_sqrtba/internal/left/c.h": '#include "ceres_sqrtba/internal/low/b.h"\n',
            "ceres_sqrtba/internal/high/d.cc": ('#include "ceres_sqrtba/api.h"\n'
                                                '#include "ceres_sqrtba/internal/left/c.h"\n'),
            "ceres_sqrtba/internal/low/a_test.cc": '#include "ceres_sqrtba/api.h"\n',
        }), [])

    def test_up_sideways_public_and_unranked_fail(self):
        errors = self.check({
            "ceres_sqrtba/types.h": "",
            "ceres_sqrtba/api.h": '#include "ceres_sqrtba/internal/low/a.h"\n',
            "ceres_sqrtba/internal/low/a.h": '#include "ceres_sqrtba/internal/high/d.h"\n',
            "ceres_sqrtba/internal/low/b.h": '#include "ceres_sqrtba/api.h"\n',
            "ceres_sqrtba/internal/left/c.h": '#include "ceres_sqrtba/internal/right/e.h"\n',
            "ceres_sqrtba/internal/right/e.h": '#include "ceres_sqrtba/internal/low/gone.h"\n',
            "ceres_sqrtba/internal/high/d.h": "",
            "ceres_sqrtba/internal/new/f.h": "",
            "ceres_sqrtba/internal/low/b_test.cc": '#include "ceres_sqrtba/internal/left/c.h"\n',
        })
        expected = [
            "ceres_sqrtba/api.h:1: includes ceres_sqrtba/internal/low/a.h: a public header",
            "ceres_sqrtba/internal/left/c.h:1: includes ceres_sqrtba/internal/right/e.h: sideways",
            "ceres_sqrtba/internal/low/a.h:1: includes ceres_sqrtba/internal/high/d.h: up",
            "ceres_sqrtba/internal/low/b.h:1: includes ceres_sqrtba/api.h: up",
            "ceres_sqrtba/internal/low/b_test.cc:1: includes ceres_sqrtba/internal/left/c.h: up",
            "ceres_sqrtba/internal/new/f.h: in no layer",
            "ceres_sqrtba/internal/right/e.h:1: includes ceres_sqrtba/internal/low/gone.h, which "
            "does not exist",
        ]
        self.assertEqual(len(errors), len(expected), "\n".join(errors))
        for e, x in zip(sorted(errors), sorted(expected)):
            self.assertTrue(e.startswith(x), f"{e!r} does not start with {x!r}")

    def test_file_table_rank_mismatch_fails(self):
        text = (self.LAYERS + "\n| layer | concept | file (`ceres_sqrtba/internal/`) |\n"
                "|---|---|---|\n| 1 | a | `low/a.h` |\n| 4 | c | `left/c.h` |\n")
        errors = check_file_table(ROOT, text, parse_layers(text))
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("`left/c.h` is in layer 2", errors[0])

    def test_no_layer_table_is_an_error(self):
        with self.assertRaises(ValueError):
            parse_layers("| a | b |\n|---|---|\n| `x` | `y` |\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        ROOT = os.path.abspath(sys.argv.pop(1))
    unittest.main()
