#include "fuzz_entry_points.h"

#include <bzlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "bal_problem.h"
#include "bal_random.h"
#include "build_problem.h"
#include "colmap_model.h"
#include "colmap_problem.h"
#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace fuzz {
namespace {

using examples::BalProblem;
using examples::BalReadOptions;

// A violated invariant: say which, and crash.
[[noreturn]] void Violated(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

void Check(bool condition, const std::string& what) {
  if (!condition) Violated(what);
}

// Messages name blocks by address, as Ceres' do; two runs build their own
// problems, so the same block has a different address in each: "0x..."
// compares as one token.
std::string WithoutAddresses(const std::string& message) {
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    const bool address = message.compare(i, 2, "0x") == 0 && i + 2 < message.size() &&
                         std::isxdigit(static_cast<unsigned char>(message[i + 2]));
    if (address) {
      out += "0x?";
      i += 2;
      while (i + 1 < message.size() && std::isxdigit(static_cast<unsigned char>(message[i + 1]))) ++i;
      continue;
    }
    out += message[i];
  }
  return out;
}

bool AllFinite(const std::vector<double>& values) {
  for (double v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

bool SameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

bool Read(const uint8_t* data, size_t size, bool use_quaternions,
          BalProblem* problem, std::string* error) {
  BalReadOptions options;
  options.use_quaternions = use_quaternions;
  options.memory_limit_in_bytes = kReaderMemoryLimit;
  return BalProblem::ReadFromMemory(kInputName, data, size, options, problem,
                                    error);
}

ReadOutcome Describe(bool ok, const std::string& error,
                     const BalProblem& problem) {
  ReadOutcome outcome;
  outcome.ok = ok;
  if (!ok) outcome.error = error;
  outcome.num_cameras = problem.num_cameras();
  outcome.num_points = problem.num_points();
  outcome.num_observations = problem.num_observations();
  return outcome;
}

// bzip2 data of the bytes (level 1: the smallest blocks, fastest).
std::string Compress(const uint8_t* data, size_t size) {
  static const uint8_t kNothing = 0;
  if (size == 0) data = &kNothing;  // libbz2 refuses a null source
  unsigned int capacity = static_cast<unsigned int>(size + size / 100 + 600);
  std::string out(capacity, '\0');
  const int status = BZ2_bzBuffToBuffCompress(
      &out[0], &capacity,
      const_cast<char*>(reinterpret_cast<const char*>(data)),
      static_cast<unsigned int>(size), 1, 0, 0);
  Check(status == BZ_OK, "BZ2_bzBuffToBuffCompress failed: " + std::to_string(status));
  out.resize(capacity);
  return out;
}

void CheckSameOutcome(const char* how, bool ok, const std::string& error,
                      const BalProblem& problem, bool other_ok,
                      const std::string& other_error, const BalProblem& other) {
  const std::string prefix = std::string("plain text and ") + how + ": ";
  Check(ok == other_ok, prefix + "one read succeeded, the other did not (" +
                            error + " | " + other_error + ")");
  if (!ok) {
    Check(error == other_error,
          prefix + "different messages: '" + error + "' vs '" + other_error + "'");
    return;
  }
  Check(problem.num_cameras() == other.num_cameras() &&
            problem.num_points() == other.num_points() &&
            problem.camera_index() == other.camera_index() &&
            problem.point_index() == other.point_index() &&
            SameBits(problem.observations(), other.observations()) &&
            SameBits(problem.parameters(), other.parameters()),
        prefix + "different problems");
}

void CheckProblem(const BalProblem& p, int camera_size) {
  Check(p.num_cameras() > 0 && p.num_points() > 0 && p.num_observations() > 0,
        "a problem read without error has an empty count");
  Check(p.camera_block_size() == camera_size, "camera block size");
  Check(p.parameters().size() ==
            static_cast<size_t>(camera_size) * p.num_cameras() +
                3 * static_cast<size_t>(p.num_points()),
        "parameter count does not match the counts");
  Check(p.camera_index().size() == static_cast<size_t>(p.num_observations()) &&
            p.point_index().size() == static_cast<size_t>(p.num_observations()) &&
            p.observations().size() == 2 * static_cast<size_t>(p.num_observations()),
        "observation arrays of different lengths");
  for (int i = 0; i < p.num_observations(); ++i) {
    Check(p.camera_index()[i] >= 0 && p.camera_index()[i] < p.num_cameras(),
          "camera index out of range");
    Check(p.point_index()[i] >= 0 && p.point_index()[i] < p.num_points(),
          "point index out of range");
  }
  Check(AllFinite(p.observations()) && AllFinite(p.parameters()),
        "non-finite value in a problem read without error");
}

}  // namespace

ReadOutcome FuzzBalReader(const uint8_t* data, size_t size) {
  BalProblem problem;
  std::string error;
  const bool ok = Read(data, size, false, &problem, &error);
  if (!ok) {
    const std::string prefix = std::string(kInputName) + ":";
    Check(error.compare(0, prefix.size(), prefix) == 0,
          "message does not start with the input's name: " + error);
    Check(error.find('\n') == std::string::npos, "message of more than one line: " + error);
    Check(problem.num_cameras() == 0 && problem.num_points() == 0 &&
              problem.num_observations() == 0 && problem.parameters().empty(),
          "a failed read left data behind");
  } else {
    CheckProblem(problem, 9);
    BalProblem quaternions;
    std::string quaternion_error;
    Check(Read(data, size, true, &quaternions, &quaternion_error),
          "read with use_quaternions failed: " + quaternion_error);
    CheckProblem(quaternions, 10);
    Check(quaternions.camera_index() == problem.camera_index() &&
              SameBits(quaternions.observations(), problem.observations()),
          "use_quaternions changed the observations");
  }

  // Plain text must read the same through the bzip2 decompressor.
  const bool is_bzip2 = size >= 3 && std::memcmp(data, "BZh", 3) == 0;
  if (!is_bzip2) {
    const std::string one = Compress(data, size);
    BalProblem from_one;
    std::string one_error;
    const bool one_ok = Read(reinterpret_cast<const uint8_t*>(one.data()),
                             one.size(), false, &from_one, &one_error);
    CheckSameOutcome("one bzip2 stream", ok, error, problem, one_ok, one_error,
                     from_one);

    const size_t half = size / 2;
    const std::string two =
        Compress(data, half) + Compress(data + half, size - half);
    BalProblem from_two;
    std::string two_error;
    const bool two_ok = Read(reinterpret_cast<const uint8_t*>(two.data()),
                             two.size(), false, &from_two, &two_error);
    CheckSameOutcome("two bzip2 streams", ok, error, problem, two_ok,
                     two_error, from_two);
  }
  return Describe(ok, error, problem);
}

namespace {

struct Variant {
  const char* name;
  Precision precision;
  bool quaternions;    // 10-value cameras, with manifolds
  bool robustify;      // Huber loss
  bool user_ordering;  // points in group 0, cameras in group 1
  bool perturb_and_preprocess;
  int num_threads;
  ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI;
};

// Solves a copy of `read` as bundle_adjuster would; `bal` receives the
// problem as solved (for comparisons between variants).
SolveRun SolveVariant(const BalProblem& read, const Variant& v, BalProblem* bal) {
  SolveRun run;
  run.variant = v.name;
  run.stage = "normalize";
  const std::vector<double> cameras(read.parameters().begin(),
                                    read.parameters().begin() + 9 * static_cast<size_t>(read.num_cameras()));
  const std::vector<double> points(read.parameters().begin() + cameras.size(),
                                   read.parameters().end());
  *bal = BalProblem::FromArrays(read.num_cameras(), read.num_points(),
                                read.camera_index(), read.point_index(),
                                read.observations(), cameras, points,
                                v.quaternions);
  if (!bal->Normalize(&run.error)) return run;
  Check(AllFinite(bal->parameters()), std::string(v.name) +
                                          ": Normalize succeeded with a non-finite parameter");
  if (v.perturb_and_preprocess) {
    run.stage = "preprocess";
    examples::BalRandom random(38401);
    bal->Perturb(0.01, 0.1, 0.5, &random);
    bal->DropObservationsBelowDepth(0.1);
    bal->DropPointsWithFewObservations(2);
    if (bal->num_observations() == 0) {
      run.error = "preprocessing removed every observation";
      return run;
    }
    CheckProblem(*bal, v.quaternions ? 10 : 9);
  }

  run.stage = "build";
  ceres::Problem problem;
  examples::BuildOptions build;
  build.robustify = v.robustify;
  build.use_manifolds = v.quaternions;
  if (!examples::BuildProblem(build, bal, &problem, &run.error)) return run;

  run.stage = "solve";
  Solver::Options options;
  options.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  options.linear_solver_type = ceres::ITERATIVE_SCHUR;
  options.preconditioner_type = v.preconditioner;
  options.precision = v.precision;
  options.max_num_iterations = 2;
  options.num_threads = v.num_threads;
  options.logging_type = ceres::SILENT;
  options.minimizer_progress_to_stdout = false;
  options.memory_limit_in_bytes = int64_t{256} << 20;
  // As bundle_adjuster: run to the iteration limit.
  options.gradient_tolerance = 1e-16;
  options.function_tolerance = 1e-16;
  if (v.user_ordering) options.linear_solver_ordering = examples::PointsFirstOrdering(bal, problem);
  std::string error;
  const bool valid = options.IsValid(&error);
  Check(valid, "the fuzzer's options are invalid: " + error);

  const std::vector<double> before = bal->parameters();
  ceres::Solver::Summary summary;
  Solve(options, &problem, &summary);
  run.termination = summary.termination_type;
  run.message = summary.message;
  run.num_iterations = static_cast<int>(summary.iterations.size());
  run.initial_cost = summary.initial_cost;
  run.final_cost = summary.final_cost;

  const std::string where = std::string(v.name) + ": " + summary.message + ": ";
  Check(summary.termination_type == ceres::CONVERGENCE ||
            summary.termination_type == ceres::NO_CONVERGENCE ||
            summary.termination_type == ceres::FAILURE,
        where + "unexpected termination type " +
            ceres::TerminationTypeToString(summary.termination_type));
  Check(!summary.message.empty(), where + "empty message");
  Check(summary.iterations.size() <= 3u, where + "more iterations than allowed");
  if (summary.IsSolutionUsable()) {
    Check(std::isfinite(summary.initial_cost) && std::isfinite(summary.final_cost),
          where + "non-finite cost in a usable solution");
    Check(summary.final_cost <= summary.initial_cost, where + "final cost above the initial cost");
    Check(AllFinite(bal->parameters()), where + "non-finite parameter in a usable solution");
  } else {
    Check(SameBits(before, bal->parameters()), where + "a failed solve changed the parameters");
  }
  return run;
}

}  // namespace

SolveOutcome FuzzSolve(const uint8_t* data, size_t size) {
  SolveOutcome outcome;
  BalProblem read;
  std::string error;
  const bool ok = Read(data, size, false, &read, &error);
  outcome.read = Describe(ok, error, read);
  if (!ok) return outcome;
  if (read.num_observations() > kMaxSolveObservations ||
      read.num_cameras() > kMaxSolveCameras || read.num_points() > kMaxSolvePoints) {
    outcome.too_large = true;
    return outcome;
  }

  const Variant kDouble = {"double", DOUBLE_PRECISION, false, false, false, false, 1};
  const Variant kSingle = {"single", SINGLE_PRECISION, false, false, false, false, 1};
  // With the visibility-based preconditioner (clusters, forest, retry).
  const Variant kSingleHuber = {"single-quaternions-huber-cluster-tridiagonal", SINGLE_PRECISION, true, true,
                                true, true, 2, ceres::CLUSTER_TRIDIAGONAL};
  const Variant kDouble2 = {"double-2threads", DOUBLE_PRECISION, false, false, false, false, 2};

  BalProblem solved_double, solved_single, solved_single_huber, solved_double2;
  outcome.runs.push_back(SolveVariant(read, kDouble, &solved_double));
  outcome.runs.push_back(SolveVariant(read, kSingle, &solved_single));
  outcome.runs.push_back(SolveVariant(read, kSingleHuber, &solved_single_huber));
  outcome.runs.push_back(SolveVariant(read, kDouble2, &solved_double2));

  // Results do not depend on the number of threads, to the last bit.
  const SolveRun& a = outcome.runs[0];
  const SolveRun& b = outcome.runs[3];
  Check(a.stage == b.stage && a.error == b.error && a.termination == b.termination &&
            WithoutAddresses(a.message) == WithoutAddresses(b.message) &&
            a.num_iterations == b.num_iterations &&
            std::memcmp(&a.initial_cost, &b.initial_cost, sizeof(double)) == 0 &&
            std::memcmp(&a.final_cost, &b.final_cost, sizeof(double)) == 0 &&
            SameBits(solved_double.parameters(), solved_double2.parameters()),
        "1 and 2 threads gave different results: '" + a.message + "' vs '" + b.message + "'");
  return outcome;
}

// ---------------------------------------------------------------- COLMAP --

namespace {

using examples::ColmapFormat;
using examples::ColmapModel;

void AppendLength(uint32_t length, std::string* out) {
  for (int k = 0; k < 4; ++k) out->push_back(static_cast<char>((length >> (8 * k)) & 0xff));
}

uint32_t LengthAt(const uint8_t* data) {
  return static_cast<uint32_t>(data[0]) | static_cast<uint32_t>(data[1]) << 8 |
         static_cast<uint32_t>(data[2]) << 16 | static_cast<uint32_t>(data[3]) << 24;
}

bool ReadColmap(ColmapFormat format, const examples::ColmapFiles& files, ColmapModel* model,
                std::string* error) {
  examples::ColmapReadOptions options;
  options.memory_limit_in_bytes = kReaderMemoryLimit;
  return examples::ReadColmapModelFromMemory(format, kInputName, files, options, model, error);
}

bool FinitePose(const examples::ColmapRigid3& pose) {
  for (double v : pose.qvec) {
    if (!std::isfinite(v)) return false;
  }
  for (double v : pose.tvec) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

bool SamePose(const examples::ColmapRigid3& pose, const examples::ColmapImage& image) {
  return std::memcmp(pose.qvec, image.qvec, sizeof(image.qvec)) == 0 &&
         std::memcmp(pose.tvec, image.tvec, sizeof(image.tvec)) == 0;
}

// Every value finite and every id reference resolved: what the reader
// promises of a model it returns.
void CheckModel(const ColmapModel& model) {
  for (const examples::ColmapCamera& camera : model.cameras) {
    Check(AllFinite(camera.params), "a camera parameter is not finite");
  }
  std::unordered_map<uint64_t, const examples::ColmapPoint3D*> points;
  for (const examples::ColmapPoint3D& point : model.points3D) {
    Check(points.emplace(point.id, &point).second, "duplicate 3D point id");
    Check(std::isfinite(point.xyz[0]) && std::isfinite(point.xyz[1]) &&
              std::isfinite(point.xyz[2]) && std::isfinite(point.error),
          "a 3D point is not finite");
  }
  for (const examples::ColmapImage& image : model.images) {
    Check(model.CameraIndex(image.camera_id) >= 0, "an image's camera is missing");
    for (double v : image.qvec) Check(std::isfinite(v), "a quaternion is not finite");
    for (double v : image.tvec) Check(std::isfinite(v), "a translation is not finite");
    for (const examples::ColmapPoint2D& point : image.points2D) {
      Check(std::isfinite(point.x) && std::isfinite(point.y), "a 2D point is not finite");
      Check(point.point3D_id == examples::kInvalidPoint3DId || points.count(point.point3D_id) == 1,
            "a 2D point's 3D point is missing");
    }
  }
  for (const examples::ColmapPoint3D& point : model.points3D) {
    for (const examples::ColmapTrackElement& element : point.track) {
      const int image = model.ImageIndex(element.image_id);
      Check(image >= 0, "a track element's image is missing");
      Check(element.point2D_idx < model.images[image].points2D.size() &&
                model.images[image].points2D[element.point2D_idx].point3D_id == point.id,
            "a track element does not refer back");
    }
  }
  if (!model.has_rigs_and_frames) {
    Check(model.rigs.empty() && model.frames.empty(), "a legacy model has rigs or frames");
    return;
  }
  for (const examples::ColmapRig& rig : model.rigs) {
    Check(rig.has_ref_sensor || rig.sensors.empty(), "a rig has sensors but no reference one");
    for (const examples::ColmapRigSensor& sensor : rig.sensors) {
      Check(FinitePose(sensor.sensor_from_rig), "a sensor_from_rig is not finite");
    }
  }
  for (const examples::ColmapFrame& frame : model.frames) {
    Check(model.RigIndex(frame.rig_id) >= 0, "a frame's rig is missing");
    Check(FinitePose(frame.rig_from_world), "a rig_from_world is not finite");
  }
  for (size_t i = 0; i < model.images.size(); ++i) {
    const int f = model.ImageFrameIndex(static_cast<int>(i));
    Check(f >= 0, "an image of a rig model is in no frame");
    const int s = model.ImageSensorIndex(static_cast<int>(i));
    const examples::ColmapRig& rig = model.rigs[model.RigIndex(model.frames[f].rig_id)];
    Check(s < 0 || (s < static_cast<int>(rig.sensors.size()) && rig.sensors[s].has_sensor_from_rig),
          "an image's sensor has no sensor_from_rig");
    Check(SamePose(examples::ColmapCamFromWorld(model, static_cast<int>(i)), model.images[i]),
          "an image's pose is not the one derived from its frame and rig");
  }
}

// The model written in `format` reads back bit-identical; its three-file
// form is the five-file one without rigs and frames.
void CheckRoundTrip(const ColmapModel& model, ColmapFormat format) {
  examples::ColmapFiles files;
  examples::SerializeColmapModel(model, format, &files);
  Check(files.rigs.has_value() == model.has_rigs_and_frames &&
            files.frames.has_value() == model.has_rigs_and_frames,
        "the files written do not match the model's layout");
  std::string cameras, images, points;
  examples::SerializeColmapModel(model, format, &cameras, &images, &points);
  Check(cameras == files.cameras && images == files.images && points == files.points3D,
        "the three files differ from the five files' first three");
  ColmapModel again;
  std::string error;
  // Read first: the message needs the error (arguments are evaluated in any order).
  const bool read_back = ReadColmap(format, files, &again, &error);
  Check(read_back, "the written model does not read back: " + error);
  Check(again == model, "the written model reads back different");
  examples::ColmapFiles files2;
  examples::SerializeColmapModel(again, format, &files2);
  Check(files.cameras == files2.cameras && files.images == files2.images &&
            files.points3D == files2.points3D && files.rigs == files2.rigs &&
            files.frames == files2.frames,
        "writing the model read back gives other bytes");
}

bool TextCanHoldNames(const ColmapModel& model) {
  for (const examples::ColmapImage& image : model.images) {
    if (image.name.empty() || image.name.find_first_of(" \t\r\n\v\f") != std::string::npos) {
      return false;
    }
  }
  return true;
}

constexpr uint8_t kBinaryBit = 1;
constexpr uint8_t kRigsBit = 2;
constexpr uint8_t kFramesBit = 4;

}  // namespace

std::string PackColmapInput(bool binary, const examples::ColmapFiles& files) {
  const uint8_t flags = (binary ? kBinaryBit : 0) | (files.rigs.has_value() ? kRigsBit : 0) |
                        (files.frames.has_value() ? kFramesBit : 0);
  std::vector<const std::string*> present = {&files.cameras, &files.images, &files.points3D};
  if (files.rigs.has_value()) present.push_back(&*files.rigs);
  if (files.frames.has_value()) present.push_back(&*files.frames);
  std::string out(1, static_cast<char>(flags));
  for (size_t k = 0; k + 1 < present.size(); ++k) {
    AppendLength(static_cast<uint32_t>(present[k]->size()), &out);
  }
  for (const std::string* file : present) out += *file;
  return out;
}

std::string PackColmapInput(bool binary, const std::string& cameras, const std::string& images,
                            const std::string& points3D) {
  examples::ColmapFiles files;
  files.cameras = cameras;
  files.images = images;
  files.points3D = points3D;
  return PackColmapInput(binary, files);
}

ColmapReadOutcome FuzzColmapReader(const uint8_t* data, size_t size) {
  ColmapReadOutcome outcome;
  examples::ColmapFiles files;
  const uint8_t flags = size > 0 ? data[0] : 0;
  std::vector<std::string*> present = {&files.cameras, &files.images, &files.points3D};
  if ((flags & kRigsBit) != 0) present.push_back(&files.rigs.emplace());
  if ((flags & kFramesBit) != 0) present.push_back(&files.frames.emplace());
  const size_t header = 1 + 4 * (present.size() - 1);
  if (size >= header) {
    outcome.binary = (flags & kBinaryBit) != 0;
    size_t rest = size - header;
    const uint8_t* at = data + header;
    for (size_t k = 0; k < present.size(); ++k) {
      const size_t length =
          k + 1 < present.size() ? std::min<size_t>(LengthAt(data + 1 + 4 * k), rest) : rest;
      present[k]->assign(reinterpret_cast<const char*>(at), length);
      at += length;
      rest -= length;
    }
  } else {
    files = examples::ColmapFiles();  // three empty text files
  }
  const ColmapFormat format = outcome.binary ? ColmapFormat::kBinary : ColmapFormat::kText;
  ColmapModel model;
  std::string error;
  outcome.ok = ReadColmap(format, files, &model, &error);
  if (!outcome.ok) {
    Check(!error.empty() && error.find('\n') == std::string::npos &&
              error.rfind(std::string(kInputName) + "/", 0) == 0,
          "the error is not one line naming the file: '" + error + "'");
    Check(model.cameras.empty() && model.images.empty() && model.points3D.empty() &&
              model.rigs.empty() && model.frames.empty() && !model.has_rigs_and_frames,
          "a failed read left a model behind");
    outcome.error = error;
    return outcome;
  }
  Check(model.has_rigs_and_frames == files.rigs.has_value(),
        "the model's layout is not the files'");
  CheckModel(model);
  outcome.rigs_and_frames = model.has_rigs_and_frames;
  outcome.num_cameras = static_cast<int>(model.cameras.size());
  outcome.num_images = static_cast<int>(model.images.size());
  outcome.num_points = static_cast<int>(model.points3D.size());
  outcome.num_rigs = static_cast<int>(model.rigs.size());
  outcome.num_frames = static_cast<int>(model.frames.size());
  CheckRoundTrip(model, format);
  if (format == ColmapFormat::kBinary) {
    if (TextCanHoldNames(model)) CheckRoundTrip(model, ColmapFormat::kText);
  } else {
    CheckRoundTrip(model, ColmapFormat::kBinary);
  }

  if (model.NumTrackElements() > kMaxSolveObservations) return outcome;
  ceres::Problem problem;
  examples::ColmapProblem colmap_problem;
  if (!colmap_problem.Build(examples::ColmapBundleOptions(), model, &problem, &error)) {
    Check(error.find("nothing to adjust") != std::string::npos && error.find('\n') == std::string::npos,
          "the problem did not build: '" + error + "'");
    return outcome;
  }
  int expected = 0;
  for (const examples::ColmapImage& image : model.images) {
    for (const examples::ColmapPoint2D& point : image.points2D) {
      if (point.point3D_id == examples::kInvalidPoint3DId) continue;
      for (const examples::ColmapPoint3D& p : model.points3D) {
        if (p.id == point.point3D_id) expected += p.track.size() >= 2;
      }
    }
  }
  Check(problem.NumResidualBlocks() == expected && colmap_problem.num_observations() == expected,
        "the problem does not have one residual block per observation");
  outcome.num_observations = expected;
  // The cost evaluates unless a residual is not finite (huge coordinates or
  // parameters overflow the projection; the solvers report that).
  std::vector<ceres::ResidualBlockId> blocks;
  problem.GetResidualBlocks(&blocks);
  bool all_finite = true;
  for (const ceres::ResidualBlockId block : blocks) {
    double block_cost = 0.0;
    double residuals[2];
    const bool evaluated = problem.EvaluateResidualBlock(block, true, &block_cost, residuals,
                                                         nullptr);
    all_finite = all_finite && evaluated && std::isfinite(residuals[0]) &&
                 std::isfinite(residuals[1]) && std::isfinite(block_cost);
  }
  double cost = 0.0;
  const bool evaluated =
      problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost, nullptr, nullptr, nullptr);
  Check(evaluated || !all_finite, "the problem's cost does not evaluate, every residual finite");
  return outcome;
}

}  // namespace fuzz
}  // namespace ceres_sqrtba
