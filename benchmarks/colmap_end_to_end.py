#!/usr/bin/python3
"""COLMAP 4.1.1 end to end: the real COLMAP (scripts/build_colmap.sh builds it,
stock and with integrations/colmap/sqrtba.patch) reading what
colmap_bundle_adjuster writes, COLMAP's own bundle adjuster and mappers with
and without square-root BA, and the models they produce.  docs/colmap.md,
section "COLMAP 4.1.1 end to end", shows the latest results.

Stages (--stages, default all):
  files    every layout (legacy / rigs, text / binary): a synthetic scene
           refined by colmap_bundle_adjuster, then COLMAP's model_analyzer on
           the output (its statistics against the ones the tool printed),
           model_converter to the other format (analyzed again), and COLMAP's
           bundle_adjuster started from the output with 0 iterations (its
           initial cost against the tool's final cost); a legacy model
           refined into a folder that holds stale rig files is refused.
  ba       `colmap bundle_adjuster` with COLMAP's defaults, stock against
           patched (single and double precision), on the shared model
           perturbed and on synthetic scenes (100k, 1M observations, a rig
           scene): time, final cost, mean reprojection error.
  mapper   from images (../shared/sfm-images/templeRing): feature_extractor
           and exhaustive_matcher once, then the incremental `mapper` and the
           `global_mapper` with stock and patched COLMAP on copies of the
           same database: registered images, points, mean track length, mean
           reprojection error, the time in local and in global bundle
           adjustment (from the solvers' summaries, --log_level 1), total time.
  off      the patched source built with SQRTBA_ENABLED=OFF against stock:
           `bundle_adjuster` on the shared model perturbed, and both mappers
           on the images with one thread and a fixed seed; the md5 of each
           model's .bin files (stock run twice).

Each stage's rows are kept in <out>/rows-<stage>.txt; a stage not run now
is reported from the rows an earlier run left in the same --out, so the
untimed files stage can run while the machine is busy and the timed ones
later.  Timed runs hold an exclusive flock(2) on --lock (default /work/bench.lock when
it exists) so that no other benchmark runs beside them.  Results:
<out>/results.md (and every log); --update-docs rewrites the block between
the colmap-e2e markers of docs/colmap.md.  Debian's /usr/bin/python3 and the
standard library only.
"""

import argparse
import ast
import contextlib
import datetime
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(REPO_ROOT, "..", "shared"))
DOCS = os.path.join(REPO_ROOT, "docs", "colmap.md")
BEGIN, END = "<!-- colmap-e2e:begin -->", "<!-- colmap-e2e:end -->"
# COLMAP's logging: to stderr only; level 1 prints every bundle adjustment's
# report (PrintSolverSummary), level 3 also Ceres' FullReport.
LOG1 = ["--log_target", "stderr", "--log_level", "1"]
LOG3 = ["--log_target", "stderr", "--log_level", "3"]
GLOG_PREFIX = re.compile(r"^[IWEF]\d{8} [\d:.]+\s+\d+ [^\]]*\] ")


def message_lines(text):
    """The messages of a glog log (prefixes removed)."""
    return [GLOG_PREFIX.sub("", line) for line in text.splitlines()]


class Runner:
    def __init__(self, out, lock):
        self.out = out
        self.lock = lock
        self.count = 0

    def run(self, name, cmd, env=None, timed=False, check=True):
        """Runs cmd, its stdout+stderr to <out>/logs/<n>-<name>.log; returns
        (exit code, output, seconds)."""
        self.count += 1
        log = os.path.join(self.out, "logs", "%03d-%s.log" % (self.count, name))
        os.makedirs(os.path.dirname(log), exist_ok=True)
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env.setdefault("GLOG_logtostderr", "1")
        with contextlib.ExitStack() as stack:
            if timed and self.lock:
                handle = stack.enter_context(open(self.lock, "a"))
                fcntl.flock(handle, fcntl.LOCK_EX)
            start = time.monotonic()
            done = subprocess.run(cmd, env=full_env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, errors="replace")
            seconds = time.monotonic() - start
        with open(log, "w") as f:
            f.write("$ " + " ".join(cmd) + "\n" + done.stdout)
        if check and done.returncode != 0:
            raise RuntimeError("%s failed (exit %d), see %s" % (name, done.returncode, log))
        return done.returncode, done.stdout, seconds


# ---------------------------------------------------------------- parsing

def analyzer_stats(text):
    """model_analyzer's statistics: registered images, points, observations,
    mean track length, mean reprojection error."""
    stats = {}
    patterns = {"rigs": r"^Rigs: (\d+)", "frames": r"^Frames: (\d+)",
                "images": r"^Registered images: (\d+)", "points": r"^Points: (\d+)",
                "observations": r"^Observations: (\d+)",
                "track_length": r"^Mean track length: ([\d.]+)",
                "error": r"^Mean reprojection error: ([\d.]+)px"}
    for line in message_lines(text):
        for key, pattern in patterns.items():
            m = re.match(pattern, line.strip())
            if m:
                stats[key] = float(m.group(1))
    return stats


def paired_costs(text, initial_pattern, final_pattern):
    """(initial, final) of every report in a log, in order: each line matching
    final_pattern paired with the line matching initial_pattern before it."""
    costs = []
    initial = None
    for line in message_lines(text):
        m = re.match(initial_pattern, line)
        if m:
            initial = float(m.group(1))
        m = re.match(final_pattern, line)
        if m and initial is not None:
            costs.append((initial, float(m.group(1))))
            initial = None
    return costs


def ceres_costs(text):
    """(initial, final) of every Ceres FullReport in a log, in order."""
    return paired_costs(text, r"^\s*Initial\s+([-+\d.e]+)\s*$", r"^\s*Final\s+([-+\d.e]+)\s*$")


def rms_costs(text):
    """(initial, final) of every 'Bundle adjustment report' in a COLMAP log:
    sqrt(cost / residuals) in pixels, six digits."""
    return paired_costs(text, r"^\s*Initial cost : ([-+\d.e]+) \[px\]",
                        r"^\s*Final cost : ([-+\d.e]+) \[px\]")


def colmap_choice(images):
    """The Ceres solver COLMAP 4.1.1 picks for a problem of this many images."""
    if images is None:
        return ""
    return "DENSE_SCHUR" if images <= 50 else "SPARSE_SCHUR" if images <= 1000 else "ITERATIVE_SCHUR"


def tool_summary(text):
    """What colmap_bundle_adjuster printed: counts read, mean reprojection
    error after, final cost."""
    out = {}
    m = re.search(r"(\d+) cameras, (\d+) images, (\d+) 3D points, (\d+) observations", text)
    if m:
        out["images"], out["points"], out["observations"] = (
            int(m.group(2)), int(m.group(3)), int(m.group(4)))
    m = re.search(r"Mean reprojection error after: ([\d.]+) px", text)
    if m:
        out["error"] = float(m.group(1))
    costs = ceres_costs(text)
    if costs:
        out["final_cost"] = costs[-1][1]
    return out


def ba_times(text):
    """Seconds in local and global bundle adjustment of a mapper's log, from
    the solvers' summaries (COLMAP prints them at --log_level 1): a summary
    after 'Global bundle adjustment' (until the next image registration) is
    global, any other local."""
    local = global_ = 0.0
    count_local = count_global = 0
    in_global = False
    for line in message_lines(text):
        if "Global bundle adjustment" in line:
            in_global = True
        elif line.startswith("Registering image"):
            in_global = False
        m = re.match(r"^\s*Time : ([\d.e+-]+) \[s\]", line)
        if m:
            if in_global:
                global_ += float(m.group(1))
                count_global += 1
            else:
                local += float(m.group(1))
                count_local += 1
    return {"local_s": local, "global_s": global_, "local_n": count_local,
            "global_n": count_global}


# ---------------------------------------------------------------- stages

def program(build, name):
    path = os.path.join(build, "examples", name)
    if not os.path.exists(path):
        sys.exit("colmap_end_to_end: %s not built (cmake --build %s)" % (path, build))
    return path


def stage_files(r, args, colmaps, rows):
    scene = program(args.build, "make_colmap_scene")
    adjuster = program(args.build, "colmap_bundle_adjuster")
    stock = colmaps["stock"]
    cases = []
    for rigs in (0, 2):
        for fmt in ("TXT", "BIN"):
            cases.append(("%s-%s" % ("rigs" if rigs else "legacy", fmt.lower()), rigs, fmt, None))
    # A rig model written by COLMAP itself (its model_converter writes rigs
    # and frames for the shared legacy model, perturbed first), and a rig
    # model refined into a copy of its own input folder (every file there
    # stale).
    shared = os.path.join(SHARED, "colmap", "statue-of-liberty")
    if os.path.isdir(shared):
        cases.append(("colmap-written-rigs-bin", None, "BIN", "converted"))
    cases.append(("rigs-bin-into-its-copy", 2, "BIN", "copy"))
    for name, rigs, fmt, special in cases:
        base = os.path.join(r.out, "files", name)
        for sub in ("in", "out", "converted", "colmap", "perturbed"):
            os.makedirs(os.path.join(base, sub), exist_ok=True)
        if special == "converted":
            r.run(name + "-perturb", [scene, "--input_path", shared, "--output_path",
                                      base + "/perturbed", "--perturbation=1"])
            r.run(name + "-colmap-writes", [stock, "model_converter", "--input_path",
                                            base + "/perturbed", "--output_path", base + "/in",
                                            "--output_type", "BIN"] + LOG1)
        else:
            r.run(name + "-scene", [scene, "--output_path", base + "/in", "--observations=20k",
                                    "--rigs=%d" % rigs, "--output_type=" + fmt, "--seed=3"])
        if special == "copy":
            shutil.rmtree(base + "/out")
            shutil.copytree(base + "/in", base + "/out")
        _, text, _ = r.run(name + "-refine", [adjuster, "--input_path", base + "/in",
                                              "--output_path", base + "/out"])
        ours = tool_summary(text)
        _, text, _ = r.run(name + "-analyze", [stock, "model_analyzer", "--path",
                                               base + "/out"] + LOG1)
        colmap = analyzer_stats(text)
        other = "BIN" if fmt == "TXT" else "TXT"
        r.run(name + "-convert", [stock, "model_converter", "--input_path", base + "/out",
                                  "--output_path", base + "/converted",
                                  "--output_type", other] + LOG1)
        _, text, _ = r.run(name + "-analyze-converted",
                           [stock, "model_analyzer", "--path", base + "/converted"] + LOG1)
        converted = analyzer_stats(text)
        _, text, _ = r.run(name + "-colmap-ba0",
                           [stock, "bundle_adjuster", "--input_path", base + "/out",
                            "--output_path", base + "/colmap",
                            "--BundleAdjustmentCeres.max_num_iterations", "0"] + LOG3)
        costs = ceres_costs(text)
        start = costs[-1][0] if costs else float("nan")
        relative = abs(start - ours.get("final_cost", float("nan"))) / ours.get(
            "final_cost", float("nan"))
        rows.append({
            "layout": name, "files": " ".join(sorted(os.listdir(base + "/out"))),
            "tool_images": ours.get("images"), "colmap_images": colmap.get("images"),
            "tool_points": ours.get("points"), "colmap_points": colmap.get("points"),
            "tool_error": ours.get("error"), "colmap_error": colmap.get("error"),
            "converted_error": converted.get("error"),
            "colmap_frames": colmap.get("frames"), "colmap_rigs": colmap.get("rigs"),
            "tool_cost": ours.get("final_cost"), "colmap_initial_cost": start,
            "cost_relative": relative})
    # Stale files: a legacy model refined into a folder that holds a rig
    # model's frames.bin is refused, nothing written.
    stale = os.path.join(r.out, "files", "stale")
    os.makedirs(stale, exist_ok=True)
    shutil.copy(os.path.join(r.out, "files", "rigs-bin", "out", "frames.bin"), stale)
    code, text, _ = r.run("stale-refused", [adjuster, "--input_path",
                                            os.path.join(r.out, "files", "legacy-bin", "in"),
                                            "--output_path", stale], check=False)
    rows.append({"layout": "stale", "exit": code, "message": text.strip().splitlines()[-1]
                 if text.strip() else "", "files": " ".join(sorted(os.listdir(stale)))})


def stage_ba(r, args, colmaps, rows):
    scene = program(args.build, "make_colmap_scene")
    cases = []
    shared = os.path.join(SHARED, "colmap", "statue-of-liberty")
    if os.path.isdir(shared):
        cases.append(("statue-of-liberty-perturbed", ["--input_path", shared, "--perturbation=1"]))
    cases += [("synthetic-100k", ["--observations=100k"]),
              ("synthetic-1M", ["--observations=1M"]),
              ("rigs-100k", ["--observations=100k", "--rigs=2", "--num_cameras=4"])]
    # The patched program's own flags choose the precision (SINGLE is its
    # default; written out so the runs say what they are).
    variants = [("stock", colmaps["stock"], []),
                ("sqrtba-single", colmaps["sqrtba"],
                 ["--BundleAdjustmentCeres.sqrtba_precision", "SINGLE"]),
                ("sqrtba-double", colmaps["sqrtba"],
                 ["--BundleAdjustmentCeres.sqrtba_precision", "DOUBLE"])]
    for name, flags in cases:
        if args.problems and not any(p in name for p in args.problems):
            continue
        base = os.path.join(r.out, "ba", name)
        os.makedirs(base + "/in", exist_ok=True)
        r.run(name + "-scene", [scene, "--output_path", base + "/in"] + flags)
        for repeat in range(args.repeat):
            for variant, binary, variant_flags in variants:
                out = os.path.join(base, "%s-%d" % (variant, repeat))
                os.makedirs(out, exist_ok=True)
                env = {"OMP_NUM_THREADS": str(args.threads)}
                _, text, seconds = r.run("%s-%s-%d" % (name, variant, repeat),
                                         [binary, "bundle_adjuster", "--input_path", base + "/in",
                                          "--output_path", out] + variant_flags + LOG1, env=env,
                                         timed=True)
                costs = rms_costs(text)
                _, analyzed, _ = r.run("%s-%s-%d-analyze" % (name, variant, repeat),
                                       [colmaps["stock"], "model_analyzer", "--path", out])
                stats = analyzer_stats(analyzed)
                solve = ba_times(text)
                rows.append({"problem": name, "variant": variant, "repeat": repeat,
                             "seconds": seconds,
                             "solve_seconds": solve["global_s"] + solve["local_s"],
                             "initial_cost": costs[-1][0] if costs else None,
                             "final_cost": costs[-1][1] if costs else None,
                             "error": stats.get("error"), "images": stats.get("images"),
                             "solver": colmap_choice(stats.get("images"))})


def mapper_database(r, args, colmaps):
    """The images' folder and a database of their features and matches (made
    once per --out by stock COLMAP), or (None, None) without images."""
    images = os.path.join(SHARED, "sfm-images", args.images)
    if not os.path.isdir(images):
        return None, None
    base = os.path.join(r.out, "mapper")
    os.makedirs(base, exist_ok=True)
    database = os.path.join(base, "database.db")
    if not os.path.exists(database):
        r.run("features", [colmaps["stock"], "feature_extractor", "--database_path", database,
                           "--image_path", images, "--FeatureExtraction.use_gpu", "0",
                           "--FeatureExtraction.num_threads", str(args.threads)])
        r.run("matches", [colmaps["stock"], "exhaustive_matcher", "--database_path", database,
                          "--FeatureMatching.use_gpu", "0",
                          "--FeatureMatching.num_threads", str(args.threads)])
    return images, database


def stage_mapper(r, args, colmaps, rows):
    images, database = mapper_database(r, args, colmaps)
    if images is None:
        rows.append({"skipped": "no images in %s" % os.path.join(SHARED, "sfm-images", args.images)})
        return
    base = os.path.join(r.out, "mapper")
    for mapper in ("mapper", "global_mapper"):
        for repeat in range(args.repeat):
            for variant, binary in (("stock", colmaps["stock"]),
                                    ("sqrtba-single", colmaps["sqrtba"])):
                run_dir = os.path.join(base, "%s-%s-%d" % (mapper, variant, repeat))
                shutil.rmtree(run_dir, ignore_errors=True)
                os.makedirs(run_dir + "/sparse")
                db = os.path.join(run_dir, "database.db")
                shutil.copy(database, db)
                cmd = [binary, mapper, "--database_path", db, "--image_path", images,
                       "--output_path", run_dir + "/sparse"]
                # COLMAP's default random_seed -1 seeds RANSAC at random, so
                # two runs of one program can start from different image
                # pairs; one fixed seed for both programs gives them the same
                # draws, and the runs differ only by their bundle adjustment.
                if mapper == "mapper":
                    cmd += ["--Mapper.num_threads", str(args.threads),
                            "--Mapper.random_seed", str(args.seed)]
                    if variant != "stock":
                        cmd += ["--Mapper.ba_sqrtba_precision", "SINGLE"]
                else:
                    cmd += ["--GlobalMapper.random_seed", str(args.seed)]
                    if variant != "stock":
                        cmd += ["--GlobalMapper.gp_sqrtba_precision", "SINGLE",
                                "--GlobalMapper.ba_ceres_sqrtba_precision", "SINGLE"]
                code, text, seconds = r.run("%s-%s-%d" % (mapper, variant, repeat), cmd + LOG1,
                                            timed=True, check=False)
                model = os.path.join(run_dir, "sparse", "0")
                stats = {}
                if code == 0 and os.path.isdir(model):
                    _, analyzed, _ = r.run("%s-%s-%d-analyze" % (mapper, variant, repeat),
                                           [colmaps["stock"], "model_analyzer", "--path", model])
                    stats = analyzer_stats(analyzed)
                row = {"mapper": mapper, "variant": variant, "repeat": repeat, "exit": code,
                       "seconds": seconds}
                row.update(stats)
                row.update(ba_times(text))
                rows.append(row)


def model_digest(path):
    """The md5 of a model's binary files, in name order."""
    import hashlib
    digest = hashlib.md5()
    names = sorted(n for n in os.listdir(path) if n.endswith(".bin"))
    for name in names:
        with open(os.path.join(path, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()[:12] if names else None


def stage_off(r, args, colmaps, rows):
    """The patched source built with SQRTBA_ENABLED=OFF against stock: the
    same models, bit for bit. Stock runs twice, so that a difference between
    the programs is told from one between two runs of the same program."""
    runs = []
    shared = os.path.join(SHARED, "colmap", "statue-of-liberty")
    if os.path.isdir(shared):
        base = os.path.join(r.out, "off", "bundle_adjuster")
        os.makedirs(base + "/in", exist_ok=True)
        r.run("off-scene", [program(args.build, "make_colmap_scene"), "--output_path", base + "/in",
                            "--input_path", shared, "--perturbation=1"])
        runs.append(("bundle_adjuster, statue-of-liberty perturbed", base,
                     lambda binary, out: [binary, "bundle_adjuster", "--input_path", base + "/in",
                                          "--output_path", out], ""))
    images, database = mapper_database(r, args, colmaps)
    if images is not None:
        for mapper, seed_flag in (("mapper", "--Mapper.random_seed"),
                                  ("global_mapper", "--GlobalMapper.random_seed")):
            base = os.path.join(r.out, "off", mapper)

            def command(binary, out, mapper=mapper, seed_flag=seed_flag, base=base):
                db = out + ".db"
                shutil.copy(database, db)
                extra = ["--Mapper.num_threads", "1"] if mapper == "mapper" else \
                    ["--GlobalMapper.num_threads", "1"]
                return [binary, mapper, "--database_path", db, "--image_path", images,
                        "--output_path", out, seed_flag, str(args.seed)] + extra
            runs.append(("%s, %s (one thread)" % (mapper, args.images), base, command, "0"))
    for name, base, command, model in runs:
        digests = {}
        for variant, binary in (("stock", colmaps["stock"]), ("stock again", colmaps["stock"]),
                                ("option off", colmaps["sqrtba-off"])):
            out = os.path.join(base, variant.replace(" ", "-"))
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            code, _, _ = r.run("off-%s-%s" % (os.path.basename(base), variant.replace(" ", "-")),
                               command(binary, out) + LOG1, check=False)
            model_dir = os.path.join(out, model) if model else out
            digests[variant] = model_digest(model_dir) if code == 0 and os.path.isdir(model_dir) \
                else "exit %s" % code
        rows.append({"run": name, "stock": digests["stock"], "stock_again": digests["stock again"],
                     "option_off": digests["option off"]})


STAGES = ("files", "ba", "mapper", "off")


def save_rows(out, stage, rows):
    """<out>/rows-<stage>.txt: one Python literal per row."""
    with open(os.path.join(out, "rows-%s.txt" % stage), "w") as f:
        for row in rows:
            f.write(repr(row) + "\n")


def load_rows(out, stage):
    """The rows save_rows wrote for `stage` into `out`, [] when there are none."""
    path = os.path.join(out, "rows-%s.txt" % stage)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [ast.literal_eval(line) for line in f if line.strip()]


def merge_problem_rows(earlier, now):
    """The ba stage's rows when --problems ran some of its problems: an
    earlier run's rows of the problems not run now stay (e.g. the 1M scene
    with --repeat 1, the rest with 3), the problems run now replace theirs."""
    ran = {row["problem"] for row in now}
    return [row for row in earlier if row.get("problem") not in ran] + now


# ---------------------------------------------------------------- report

def fmt(value, spec="%.4g"):
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return spec % value
    return str(value)


def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def across(runs, key, spec):
    """One value when every run gave it, else each run's, in run order
    ("3 / 47 / 47"): a model that differs between runs is shown, not hidden
    behind the first run's."""
    values = [fmt(r.get(key), spec) for r in runs]
    return values[0] if len(set(values)) == 1 else " / ".join(values)


def report(files, ba, mapper, machine, seed=0, off=()):
    lines = ["Measured by `benchmarks/colmap_end_to_end.py` (%s)." % machine, ""]
    if files:
        lines += ["**COLMAP reads what `colmap_bundle_adjuster` writes** (a 20k-observation scene per "
                  "layout; `model_analyzer` on the output and on its `model_converter` copy; COLMAP's "
                  "`bundle_adjuster` started from the output with 0 iterations):", "",
                  "| layout | files written | COLMAP's rigs / frames | images (tool / COLMAP) | points (tool / COLMAP) | "
                  "mean reprojection error, tool / COLMAP / converted [px] | cost, tool's final / "
                  "COLMAP's initial | relative |",
                  "|---|---|---|---|---|---|---|---|"]
        for row in files:
            if row["layout"] == "stale":
                continue
            lines.append("| %s | %s | %s / %s | %s / %s | %s / %s | %s / %s / %s | %s / %s | %.1e |" % (
                row["layout"], row["files"], fmt(row["colmap_rigs"], "%d"),
                fmt(row["colmap_frames"], "%d"), row["tool_images"], fmt(row["colmap_images"], "%d"),
                row["tool_points"], fmt(row["colmap_points"], "%d"), fmt(row["tool_error"], "%.6f"),
                fmt(row["colmap_error"], "%.6f"), fmt(row["converted_error"], "%.6f"),
                fmt(row["tool_cost"], "%.7g"), fmt(row["colmap_initial_cost"], "%.7g"),
                row["cost_relative"]))
        for row in files:
            if row["layout"] == "stale":
                lines += ["", "A legacy model refined into a folder holding a rig model's "
                          "`frames.bin`: exit %d, `%s`; the folder holds `%s` afterwards." % (
                              row["exit"], row["message"], row["files"])]
    if ba:
        lines += ["", "**`colmap bundle_adjuster`, COLMAP's defaults**, stock against patched "
                  "(median of each program's runs, seconds of the whole command):", "",
                  "| problem | COLMAP's solver | runs each | stock [s] | sqrt single [s] | sqrt double [s] | "
                  "sooner (single / double) | the solve alone (COLMAP's \"Time\"), stock / single / double [s] | "
                  "final RMS reprojection (COLMAP's \"Final cost\"), stock / single / double [px] | "
                  "mean reprojection error, stock / single / double [px] |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for problem in dict.fromkeys(r["problem"] for r in ba):
            runs = {v: [r for r in ba if r["problem"] == problem and r["variant"] == v]
                    for v in ("stock", "sqrtba-single", "sqrtba-double")}
            t = {v: median([r["seconds"] for r in runs[v]]) for v in runs}
            c = {v: runs[v][0]["final_cost"] for v in runs}
            e = {v: runs[v][0]["error"] for v in runs}
            solve = {v: median([r.get("solve_seconds") for r in runs[v]]) for v in runs}
            lines.append("| %s | %s | %d | %s | %s | %s | %s / %s | %s / %s / %s | %s / %s / %s | %s / %s / %s |" % (
                problem, runs["stock"][0]["solver"], len(runs["stock"]), fmt(t["stock"], "%.2f"),
                fmt(t["sqrtba-single"], "%.2f"), fmt(t["sqrtba-double"], "%.2f"),
                fmt(t["stock"] / t["sqrtba-single"], "%.2f×"),
                fmt(t["stock"] / t["sqrtba-double"], "%.2f×"),
                fmt(solve["stock"], "%.3g"), fmt(solve["sqrtba-single"], "%.3g"),
                fmt(solve["sqrtba-double"], "%.3g"),
                fmt(c["stock"], "%.6g"), fmt(c["sqrtba-single"], "%.6g"),
                fmt(c["sqrtba-double"], "%.6g"), fmt(e["stock"], "%.4g"),
                fmt(e["sqrtba-single"], "%.4g"), fmt(e["sqrtba-double"], "%.4g")))
    if mapper:
        if "skipped" in mapper[0]:
            lines += ["", "From images: skipped (%s)." % mapper[0]["skipped"]]
        else:
            lines += ["", "**From images** (`feature_extractor` and `exhaustive_matcher` once, then "
                      "each mapper on a copy of the same database, `--Mapper.random_seed` / `--GlobalMapper.random_seed` %d for both programs; "
                      "a model statistic that differs between runs is given for each run; median of the runs' times):" % seed, "",
                      "| mapper | COLMAP | registered images | points | mean track length | "
                      "mean reprojection error [px] | local BA [s] (solves) | global BA [s] "
                      "(solves) | total [s] |",
                      "|---|---|---|---|---|---|---|---|---|"]
            for m in ("mapper", "global_mapper"):
                for v in ("stock", "sqrtba-single"):
                    runs = [r for r in mapper if r["mapper"] == m and r["variant"] == v]
                    if not runs:
                        continue
                    first = runs[0]
                    lines.append("| %s | %s | %s | %s | %s | %s | %s (%d) | %s (%d) | %s |" % (
                        m, v, across(runs, "images", "%d"), across(runs, "points", "%d"),
                        across(runs, "track_length", "%.3f"), across(runs, "error", "%.4f"),
                        fmt(median([r["local_s"] for r in runs]), "%.2f"), first["local_n"],
                        fmt(median([r["global_s"] for r in runs]), "%.2f"), first["global_n"],
                        fmt(median([r["seconds"] for r in runs]), "%.1f")))
    if off:
        lines += ["", "**The patch with `SQRTBA_ENABLED=OFF` is COLMAP as released**: the md5 of the "
                  "models' `.bin` files, stock twice and the patched source built with the option off "
                  "(`sqrtba-off/bin/colmap`):", "",
                  "| run | stock | stock again | option off | identical |", "|---|---|---|---|---|"]
        for row in off:
            same = row["stock"] == row["option_off"] and not str(row["stock"]).startswith("exit")
            lines.append("| %s | %s | %s | %s | %s |" % (
                row["run"], row["stock"], row["stock_again"], row["option_off"],
                "yes" if same else "**no**"))
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stages", default=",".join(STAGES))
    parser.add_argument("--build", default=os.path.join(REPO_ROOT, "build"),
                        help="this project's build folder (colmap_bundle_adjuster, make_colmap_scene)")
    parser.add_argument("--colmap-cache", default=None,
                        help="scripts/build_colmap.sh's cache (default: ask it, --if-built)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--problems", nargs="*", default=[])
    parser.add_argument("--images", default="templeRing")
    parser.add_argument("--seed", type=int, default=0,
                        help="--Mapper.random_seed / --GlobalMapper.random_seed of every mapper run")
    parser.add_argument("--lock", default="/work/bench.lock" if os.path.exists("/work/bench.lock")
                        else None)
    parser.add_argument("--update-docs", action="store_true")
    args = parser.parse_args(argv)
    cache = args.colmap_cache
    if cache is None:
        done = subprocess.run(["bash", os.path.join(REPO_ROOT, "scripts", "build_colmap.sh"),
                               "--if-built"], stdout=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit("colmap_end_to_end: COLMAP is not built: run scripts/build_colmap.sh")
        cache = done.stdout.strip()
    colmaps = {"stock": os.path.join(cache, "stock", "bin", "colmap"),
               "sqrtba": os.path.join(cache, "sqrtba", "bin", "colmap"),
               "sqrtba-off": os.path.join(cache, "sqrtba-off", "bin", "colmap")}
    out = args.out or os.path.join(REPO_ROOT, "results", "colmap-e2e-" +
                                   datetime.datetime.now().strftime("%Y%m%d_%H%M%S"))
    os.makedirs(out, exist_ok=True)
    r = Runner(out, args.lock)
    # --stages "": no stage, the report of the rows an earlier run left in --out.
    stages = [stage for stage in args.stages.split(",") if stage]
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        sys.exit("colmap_end_to_end: unknown stage %s (stages: %s)" % (unknown[0], ",".join(STAGES)))
    results = {}
    for stage, run in (("files", stage_files), ("ba", stage_ba), ("mapper", stage_mapper),
                       ("off", stage_off)):
        if stage in stages:
            results[stage] = []
            run(r, args, colmaps, results[stage])
            if stage == "ba" and args.problems:
                results[stage] = merge_problem_rows(load_rows(out, stage), results[stage])
            save_rows(out, stage, results[stage])
        else:
            # A stage run earlier into the same --out (e.g. the untimed files
            # stage while the machine was busy): its rows, for the report.
            results[stage] = load_rows(out, stage)
    files, ba, mapper, off = results["files"], results["ba"], results["mapper"], results["off"]
    commit = subprocess.run(["git", "-C", REPO_ROOT, "rev-parse", "--short", "HEAD"],
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    machine = "%s, %d cores, ceres_sqrtba %s, COLMAP 4.1.1, %s" % (
        os.uname().nodename, os.cpu_count() or 1, commit,
        datetime.date.today().isoformat())
    text = report(files, ba, mapper, machine, args.seed, off)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    print(text)
    if args.update_docs:
        with open(DOCS) as f:
            doc = f.read()
        if BEGIN not in doc or END not in doc:
            sys.exit("colmap_end_to_end: no %s ... %s block in %s" % (BEGIN, END, DOCS))
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(DOCS, "w") as f:
            f.write(head + BEGIN + "\n" + text + END + tail)


if __name__ == "__main__":
    main()
