"""Markdown tables, read the one way the project reads them: by the docs'
tests (tests/layer_test.py, tests/design_table_test.py) and by the benchmark
reports (benchmarks/report.py).

A table is a row of cells (a line that starts with "|", after leading
blanks), a separator row ("|---|:--:|"), and the rows that follow it up to
the first line that does not start with "|". Cells are split on "|" and
stripped.
"""
import re

_SEPARATOR = re.compile(r"\|(\s*:?-+:?\s*\|)+")


def cells(line):
    """The stripped cells of one table row."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(text):
    """Every table of `text`, in order: (header cells, [(line number, cells)]),
    line numbers counted from 1."""
    lines = text.splitlines()
    found = []
    for i in range(len(lines) - 1):
        header, separator = lines[i].strip(), lines[i + 1].strip()
        if not (header.startswith("|") and _SEPARATOR.fullmatch(separator)):
            continue
        rows = []
        for number in range(i + 2, len(lines)):
            row = lines[number].strip()
            if not row.startswith("|"):
                break
            rows.append((number + 1, cells(row)))
        found.append((cells(header), rows))
    return found
