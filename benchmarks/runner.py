"""Runs one solver on one problem in its own process of its program: our
example binary, or Ceres 2.2's own bundle_adjuster (solvers.py).

One process per run so that its peak resident memory (ru_maxrss of exactly
that child, via os.wait4) and its wall time belong to that run alone.  Any
failure of the child (non-zero exit, signal, timeout, missing or malformed
CSV or output) becomes a run record with status != ok, never an exception.
Ceres 2.2's runs leave the same files as ours: the driver writes their trace
and summary CSVs from the binary's output (ceres22_output.py), and their log
is that output.
"""

import os
import resource
import shlex
import subprocess
import sys
import threading
import time

import bench_io
import ceres22_output
import problems
import solvers

TRACES_DIR = "traces"
EXIT_NOT_STARTED = 127  # as a shell reports a command it cannot execute


def run_name(problem_name, solver_name):
    """File stem of a run's trace, summary and log in traces/."""
    return "%s__%s" % (problem_name, solver_name)


def run_files(problem_name, solver_name):
    """Paths (relative to the results folder) of a run's trace, summary and log."""
    stem = os.path.join(TRACES_DIR, run_name(problem_name, solver_name))
    return stem + ".csv", stem + ".summary.csv", stem + ".log"


def binary_command(binary):
    """argv prefix that executes `binary`; a *.py stand-in runs under this Python
    so a test's fake binary need not be executable."""
    if binary.endswith(".py"):
        return [sys.executable, binary]
    return [binary]


def build_command(binary, problem, solver, common_flags, output_flags=(), plain_bal=None):
    """argv of one run: problem, common and solver flags, then the CSV outputs.
    Ceres 2.2's example gets the plain-text BAL file instead of the problem's
    flags, and no output flags (it has none)."""
    if solver.program == solvers.CERES22:
        return (binary_command(binary) + ["--input=%s" % plain_bal] + list(common_flags)
                + list(solver.flags))
    return (binary_command(binary) + list(problem.flags) + list(common_flags)
            + list(solver.flags) + list(output_flags))


def _wait(process, timeout):
    """Wait for `process`; return (exit_code, rusage, wall_seconds, timed_out).

    The child is first waited for without being reaped (WNOWAIT), so the
    timeout killer can never signal a recycled pid; then os.wait4 reaps it
    and returns the rusage of this child only.
    """
    lock, state = threading.Lock(), {"exited": False, "killed": False}

    def kill():
        with lock:
            if not state["exited"]:
                state["killed"] = True
                process.kill()

    timer = threading.Timer(timeout, kill) if timeout else None
    if timer:
        timer.start()
    os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
    wall_end = time.perf_counter()
    with lock:
        state["exited"] = True
    if timer:
        timer.cancel()
    _, status, rusage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)  # keep Popen consistent
    return process.returncode, rusage, wall_end, state["killed"]


def own_peak_rss_mib():
    """Peak resident memory of this (driver) process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def execute(command, log_path, timeout):
    """Run `command` with output to log_path.

    Returns (exit_code, peak_rss_mib, wall_seconds, timed_out).  Linux folds
    the memory of the forking process into the child's ru_maxrss (the address
    space replaced at exec counts; with vfork that is the driver's peak), so
    the driver's own peak is a floor of every measurement: the driver keeps it
    small (about 13 MiB; matplotlib is imported only after all runs) and
    records it per run as driver_rss_mib.
    """
    with open(log_path, "wb") as log:
        start = time.perf_counter()
        try:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
        except OSError as error:  # e.g. not executable: a failed run, not a failed driver
            log.write(("cannot start %s: %s\n" % (command[0], error)).encode())
            return EXIT_NOT_STARTED, 0.0, 0.0, False
        exit_code, rusage, end, timed_out = _wait(process, timeout)
    return exit_code, rusage.ru_maxrss / 1024.0, end - start, timed_out  # KiB on Linux


def _last_log_line(log_path):
    """Last non-empty line of a run's log: usually the reason it failed."""
    try:
        with open(log_path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


def _optional(summary, key, kind):
    text = summary.get(key)
    return kind(float(text)) if text not in (None, "") else None


def _summary_fields(summary):
    """The run-record fields taken from the binary's summary row, typed."""
    fields = {
        "num_cameras": int(summary["num_cameras"]),
        "num_points": int(summary["num_points"]),
        "num_observations": int(summary["num_observations"]),
        "initial_cost": float(summary["initial_cost"]),
        "final_cost": float(summary["final_cost"]),
        "iterations": int(summary["iterations"]),
        "linear_solver_iterations_total": int(summary["linear_solver_iterations_total"]),
        "solver_seconds": float(summary["total_seconds"]),
        "termination": summary["termination"],
        "precision": summary["precision"],
        "precision_switch_iteration": _optional(summary, "precision_switch_iteration", int),
    }
    for key in bench_io.PHASE_COLUMNS:
        fields[key] = _optional(summary, key, float)
    return fields


def _outcome(exit_code, timed_out, out_dir, trace, summary, log, timeout):
    """(status, error, summary fields) of a finished process."""
    if timed_out:
        return bench_io.STATUS_TIMEOUT, "killed after %g s" % timeout, {}
    if exit_code != 0:
        reason = _last_log_line(os.path.join(out_dir, log))
        return bench_io.STATUS_FAILED, "exit code %d: %s" % (exit_code, reason), {}
    try:
        bench_io.read_trace_rows(os.path.join(out_dir, trace))
        fields = _summary_fields(bench_io.read_summary(os.path.join(out_dir, summary)))
    except (OSError, ValueError, KeyError) as error:
        return bench_io.STATUS_FAILED, str(error), {}
    return bench_io.STATUS_OK, "", fields


def convert_ceres22_output(out_dir, trace, summary, log, problem_name, plain_bal):
    """Parse a Ceres 2.2 run's log and write its trace and summary CSVs.
    Returns "" or why the run does not count (ParseError, FAILURE, ...)."""
    try:
        output = ceres22_output.read(os.path.join(out_dir, log))
    except (OSError, ceres22_output.ParseError) as error:
        return "Ceres 2.2 output: %s" % error
    counts = problems.read_bal_header(plain_bal) or (0, 0, 0)
    bench_io.write_trace_rows(os.path.join(out_dir, trace), output.rows)
    bench_io.write_summary(os.path.join(out_dir, summary),
                           ceres22_output.summary_row(output, problem_name, counts))
    return ceres22_output.failure_reason(output)


def _record(problem, solver, threads, files, **fields):
    trace, summary, log = files
    run = {"problem": problem.name, "kind": problem.kind, "input": problem.input,
           "solver": solver.name, "threads": threads, "driver_rss_mib": own_peak_rss_mib(),
           "trace": trace, "summary": summary, "log": log}
    run.update(fields)
    return run


def not_run(problem, solver, threads, reason, status=bench_io.STATUS_NOT_RUN):
    """The record of a run that could not start: its program is unavailable
    (status "not run"), or its input could not be prepared (pass "failed")."""
    return _record(problem, solver, threads, run_files(problem.name, solver.name),
                   status=status, exit_code=None, error=reason, wall_seconds=None,
                   peak_rss_mib=None, command="")


def run_one(binary, problem, solver, common_flags, out_dir, threads, timeout=None,
            plain_bal=None):
    """Run `solver` on `problem` with `binary` (the solver's program); return the
    run record (a runs.csv row as a dict).  Ceres 2.2's example reads the
    plain-text BAL file `plain_bal`."""
    files = run_files(problem.name, solver.name)
    trace, summary, log = files
    for path in (trace, summary):
        if os.path.exists(os.path.join(out_dir, path)):
            os.remove(os.path.join(out_dir, path))  # a stale file must not pass as output
    ceres22 = solver.program == solvers.CERES22
    output_flags = () if ceres22 else ["--csv=%s" % os.path.join(out_dir, trace),
                                       "--summary_csv=%s" % os.path.join(out_dir, summary)]
    command = build_command(binary, problem, solver, common_flags, output_flags, plain_bal)
    exit_code, peak_mib, wall, timed_out = execute(command, os.path.join(out_dir, log), timeout)
    reason = ""
    if ceres22 and exit_code == 0 and not timed_out:
        reason = convert_ceres22_output(out_dir, trace, summary, log,
                                        ceres22_output.input_name(plain_bal), plain_bal)
    status, error, fields = _outcome(exit_code, timed_out, out_dir, trace, summary, log, timeout)
    if reason:  # the output was unreadable, or the solve ended in FAILURE
        status, error, fields = bench_io.STATUS_FAILED, reason, {}
    run = _record(problem, solver, threads, files, status=status, exit_code=exit_code,
                  error=error, wall_seconds=wall, peak_rss_mib=peak_mib,
                  command=shlex.join(command))
    run.update(fields)
    return run
