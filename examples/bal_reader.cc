// BalProblem::Read: a streaming reader for BAL files, plain or bzip2.
//
// Bytes come from a ByteSource (the plain file, or libbz2 decompressing it
// block by block), a Scanner splits them into whitespace-separated fields and
// counts lines (both in bal_input.{h,cc}), and the parser here checks every
// field against the header. Memory grows with the data actually read; the
// header's counts are only trusted after they have been checked against the
// memory that is available.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bal_input.h"
#include "bal_problem.h"
#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using bal_input::Field;
using bal_input::FilePtr;
using bal_input::NumberProblem;
using bal_input::ParseInteger;
using bal_input::ParseNumber;
using bal_input::ParseResult;
using bal_input::Quote;
using bal_input::Scanner;

constexpr int kMaxCount = INT_MAX;

class Parser {
 public:
  Parser(const std::string& path, const BalReadOptions& options,
         Scanner* scanner)
      : path_(path), options_(options), scanner_(scanner) {}

  bool Parse(int* num_cameras, int* num_points, std::vector<int>* camera_index,
             std::vector<int>* point_index, std::vector<double>* observations,
             std::vector<double>* parameters, std::string* error) {
    error_ = error;
    if (!ParseHeader(num_cameras, num_points)) return false;
    if (!ParseObservations(*num_cameras, *num_points, camera_index,
                           point_index, observations)) {
      return false;
    }
    if (!ParseParameters(*num_cameras, parameters)) return false;
    // (A first parameter line shaped like an observation, 4 values where a
    // camera and a point need at least 12, was refused as soon as it was whole.)
    Field extra;
    if (scanner_->Next(&extra)) {
      return Fail(extra.line,
                  "trailing data after the last of the " +
                      std::to_string(num_parameters_) + " parameter values: " +
                      Quote(extra.text) +
                      " (the counts in the header do not match the data)");
    }
    return CheckScanner();
  }

 private:
  bool Fail(int64_t line, const std::string& what) {
    *error_ = path_ + ":" + std::to_string(line) + ": " + what;
    return false;
  }

  // After the scanner stopped: an I/O or decompression error, or none.
  bool CheckScanner() {
    if (scanner_->error().empty()) return true;
    return Fail(scanner_->line(), scanner_->error());
  }

  bool ParseHeader(int* num_cameras, int* num_points) {
    std::vector<Field> fields;
    size_t count = 0;
    if (!scanner_->NextLine(4, &fields, &count)) {
      if (!CheckScanner()) return false;
      return Fail(scanner_->line(),
                  "empty file; expected the header 'num_cameras num_points "
                  "num_observations'");
    }
    const int64_t line = fields[0].line;
    if (count != 3) {
      bool binary = false;
      for (const Field& f : fields) binary = binary || f.binary;
      return Fail(line,
                  "expected 3 counts in the header (cameras, points, "
                  "observations), found " +
                      std::to_string(count) +
                      (binary ? " (binary data: not a BAL text file; only plain "
                                "text and bzip2 files are read)"
                              : ""));
    }
    static const char* const kNames[3] = {"cameras", "points", "observations"};
    int64_t counts[3];
    for (int k = 0; k < 3; ++k) {
      const ParseResult result = ParseInteger(fields[k].text, &counts[k]);
      if (result == ParseResult::kOutOfRange ||
          (result == ParseResult::kOk && counts[k] > kMaxCount)) {
        return Fail(line, std::string("number of ") + kNames[k] + " " +
                              fields[k].text + " is larger than the limit " +
                              std::to_string(kMaxCount));
      }
      if (result != ParseResult::kOk) {
        return Fail(line, std::string("number of ") + kNames[k] + " " +
                              Quote(fields[k].text) + " is not an integer");
      }
      if (counts[k] < 0) {
        return Fail(line, std::string("negative number of ") + kNames[k] +
                              " (" + std::to_string(counts[k]) + ")");
      }
      if (counts[k] == 0) {
        return Fail(line, std::string("number of ") + kNames[k] +
                              " is 0; a problem needs at least one camera, "
                              "one point and one observation");
      }
    }
    // Memory the arrays will take once filled, and what the caller needs to
    // solve the problem, checked before anything is allocated for them.
    const double camera_values = options_.use_quaternions ? 10.0 : 9.0;
    const double bytes =
        static_cast<double>(counts[2]) *
            (2 * sizeof(int) + 2 * sizeof(double) +
             static_cast<double>(options_.solve_bytes_per_observation)) +
        (camera_values * static_cast<double>(counts[0]) +
         3.0 * static_cast<double>(counts[1])) *
            sizeof(double);
    int64_t limit = options_.memory_limit_in_bytes;
    if (limit <= 0) limit = AvailableMemoryInBytes();
    if (limit > 0 && bytes > static_cast<double>(limit)) {
      char message[256];
      std::snprintf(message, sizeof(message),
                    "the header's counts (%lld cameras, %lld points, %lld "
                    "observations) need %.0f MiB%s, more than the %.0f MiB of "
                    "memory available",
                    static_cast<long long>(counts[0]),
                    static_cast<long long>(counts[1]),
                    static_cast<long long>(counts[2]), bytes / 1048576.0,
                    options_.solve_bytes_per_observation > 0 ? " to read and solve" : "",
                    static_cast<double>(limit) / 1048576.0);
      return Fail(line, message);
    }
    *num_cameras = static_cast<int>(counts[0]);
    *num_points = static_cast<int>(counts[1]);
    num_observations_ = counts[2];
    num_parameters_ = 9 * counts[0] + 3 * counts[1];
    return true;
  }

  bool ParseIndex(const Field& field, const char* what, int64_t observation,
                  int limit, int* index) {
    int64_t value = 0;
    const ParseResult result = ParseInteger(field.text, &value);
    const std::string prefix =
        "observation " + std::to_string(observation) + ": ";
    if (result == ParseResult::kInvalid) {
      return Fail(field.line, prefix + what + " index " + Quote(field.text) +
                                  " is not an integer");
    }
    if (result != ParseResult::kOk || value < 0 || value >= limit) {
      return Fail(field.line, prefix + what + " index " + field.text +
                                  " is out of range [0, " +
                                  std::to_string(limit) + ")");
    }
    *index = static_cast<int>(value);
    return true;
  }

  bool ParseObservations(int num_cameras, int num_points,
                         std::vector<int>* camera_index,
                         std::vector<int>* point_index,
                         std::vector<double>* observations) {
    const size_t initial = static_cast<size_t>(
        std::min<int64_t>(num_observations_, int64_t{1} << 20));
    camera_index->reserve(initial);
    point_index->reserve(initial);
    observations->reserve(2 * initial);
    std::vector<Field> fields;
    for (int64_t i = 0; i < num_observations_; ++i) {
      size_t count = 0;
      if (!scanner_->NextLine(4, &fields, &count)) {
        if (!CheckScanner()) return false;
        return Fail(scanner_->line(),
                    "file ends after " + std::to_string(i) + " of " +
                        std::to_string(num_observations_) + " observations");
      }
      const int64_t line = fields[0].line;
      if (count < 2) {
        return Fail(line, "expected 'camera_index point_index x y' for "
                          "observation " +
                              std::to_string(i) + ", found " +
                              std::to_string(count) +
                              " field; the header says " +
                              std::to_string(num_observations_) +
                              " observations");
      }
      int camera = 0;
      int point = 0;
      if (!ParseIndex(fields[0], "camera", i, num_cameras, &camera) ||
          !ParseIndex(fields[1], "point", i, num_points, &point)) {
        return false;
      }
      if (count != 4) {
        return Fail(line, "expected 2 numbers for observation " +
                              std::to_string(i) + ", found " +
                              std::to_string(count - 2));
      }
      double xy[2];
      for (int k = 0; k < 2; ++k) {
        const ParseResult result = ParseNumber(fields[2 + k].text, &xy[k]);
        if (result != ParseResult::kOk) {
          return Fail(line, "observation " + std::to_string(i) + ": " +
                                NumberProblem(result, fields[2 + k].text));
        }
      }
      camera_index->push_back(camera);
      point_index->push_back(point);
      observations->push_back(xy[0]);
      observations->push_back(xy[1]);
    }
    return true;
  }

  std::string DescribeParameter(int num_cameras, int64_t k) const {
    const int64_t camera_values = 9 * static_cast<int64_t>(num_cameras);
    if (k < camera_values) {
      return "camera " + std::to_string(k / 9) + ", value " +
             std::to_string(k % 9 + 1) + " of 9";
    }
    const int64_t p = k - camera_values;
    return "point " + std::to_string(p / 3) + ", coordinate " +
           std::to_string(p % 3 + 1) + " of 3";
  }

  bool ParseParameters(int num_cameras, std::vector<double>* parameters) {
    parameters->reserve(static_cast<size_t>(
        std::min<int64_t>(num_parameters_, int64_t{1} << 22)));
    Field field;
    std::vector<Field> first_line;  // its first 4 fields
    size_t first_line_count = 0;
    bool first_line_done = false;
    while (static_cast<int64_t>(parameters->size()) < num_parameters_) {
      if (!scanner_->Next(&field)) {
        if (!CheckScanner()) return false;
        return Fail(scanner_->line(),
                    "file ends after " + std::to_string(parameters->size()) +
                        " of " + std::to_string(num_parameters_) +
                        " parameter values (9 per camera, 3 per point); the "
                        "counts in the header do not match the data");
      }
      // The first parameter line, once whole: shaped like an observation, it
      // is one the header did not count (whether the values then run out, run
      // over, or happen to come out even and would be read as cameras).
      if (!first_line_done) {
        if (first_line_count > 0 && field.starts_line) {
          first_line_done = true;
          if (LooksLikeObservation(first_line, first_line_count, num_cameras)) {
            return FailObservationLike(first_line[0].line);
          }
        } else {
          if (first_line.size() < 4) first_line.push_back(field);
          ++first_line_count;
        }
      }
      if (!AddParameter(num_cameras, field, parameters)) return false;
    }
    return true;
  }

  // Four numbers on one line, the first a camera index of the header's
  // range and the second an index too (a camera's values are written one per
  // line, or nine to a line).
  static bool LooksLikeObservation(const std::vector<Field>& fields,
                                   size_t count, int num_cameras) {
    int64_t camera = 0, point = 0;
    double value = 0;
    return count == 4 &&
           ParseInteger(fields[0].text, &camera) == ParseResult::kOk &&
           camera >= 0 && camera < num_cameras &&
           ParseInteger(fields[1].text, &point) == ParseResult::kOk &&
           point >= 0 &&
           ParseNumber(fields[2].text, &value) == ParseResult::kOk &&
           ParseNumber(fields[3].text, &value) == ParseResult::kOk;
  }

  bool FailObservationLike(int64_t line) {
    return Fail(line, "expected camera parameters after the observations, "
                      "found a line like another observation; the header "
                      "says " +
                          std::to_string(num_observations_) + " observations");
  }

  bool AddParameter(int num_cameras, const Field& field,
                    std::vector<double>* parameters) {
    const int64_t k = static_cast<int64_t>(parameters->size());
    double value = 0;
    const ParseResult result = ParseNumber(field.text, &value);
    if (result != ParseResult::kOk) {
      return Fail(field.line, NumberProblem(result, field.text) + " (" +
                                  DescribeParameter(num_cameras, k) + ")");
    }
    parameters->push_back(value);
    // The third value of a camera completes its angle-axis rotation. Every
    // use of the rotation (the reprojection error, quaternions, camera
    // centres) squares its norm: a vector whose squared norm overflows is
    // not a rotation that can be evaluated.
    if (k < 9 * static_cast<int64_t>(num_cameras) && k % 9 == 2) {
      const double* r = parameters->data() + (k - 2);
      if (!std::isfinite(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])) {
        char rotation[128];
        std::snprintf(rotation, sizeof(rotation), "(%g, %g, %g)", r[0], r[1],
                      r[2]);
        return Fail(field.line,
                    "camera " + std::to_string(k / 9) +
                        ": the angle-axis rotation " + rotation +
                        " is too large (its squared norm overflows a double)");
      }
    }
    return true;
  }

  const std::string& path_;
  const BalReadOptions& options_;
  Scanner* scanner_;
  std::string* error_ = nullptr;
  int64_t num_observations_ = 0;
  int64_t num_parameters_ = 0;
};

}  // namespace

bool BalProblem::Read(const std::string& path, const BalReadOptions& options,
                      BalProblem* problem, std::string* error) {
  *problem = BalProblem();
  errno = 0;
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    *error = path + ": cannot open for reading: " + std::strerror(errno);
    return false;
  }
  return ReadOpenFile(file.get(), path, options, problem, error);
}

bool BalProblem::ReadFromMemory(const std::string& name, const void* data,
                                size_t size, const BalReadOptions& options,
                                BalProblem* problem, std::string* error) {
  *problem = BalProblem();
  // A read-only stream over the caller's bytes (fmemopen does not write in
  // mode "r"); the reader then runs exactly as on a file.
  static char empty = '\0';
  void* bytes = size == 0 || data == nullptr ? &empty : const_cast<void*>(data);
  errno = 0;
  FilePtr file(fmemopen(bytes, size == 0 || data == nullptr ? 0 : size, "r"));
  if (file == nullptr) {
    *error = name + ": cannot read: " + std::strerror(errno);
    return false;
  }
  return ReadOpenFile(file.get(), name, options, problem, error);
}

bool BalProblem::ReadOpenFile(std::FILE* file, const std::string& name,
                              const BalReadOptions& options,
                              BalProblem* problem, std::string* error) {
  *problem = BalProblem();
  // Look at the first bytes to tell bzip2 data from text.
  char magic[3];
  const size_t got = std::fread(magic, 1, sizeof(magic), file);
  if (got < sizeof(magic) && std::ferror(file)) {
    *error = name + ": cannot read: " + std::strerror(errno);
    return false;
  }
  std::string prefix(magic, got);
  std::unique_ptr<bal_input::ByteSource> source = prefix == "BZh"
                                                      ? bal_input::Bzip2FileSource(file, prefix)
                                                      : bal_input::PlainFileSource(file, prefix);
  Scanner scanner(source.get());
  Parser parser(name, options, &scanner);
  BalProblem result;
  if (!parser.Parse(&result.num_cameras_, &result.num_points_,
                    &result.camera_index_, &result.point_index_,
                    &result.observations_, &result.parameters_, error)) {
    // A bzip2 block is checked only once it has been decompressed whole, so a
    // corrupt block shows first as nonsense to the parser: read on to find
    // out, and name the corruption rather than its symptom.
    std::string corruption;
    if (prefix == "BZh" && !source->Drain(&corruption)) {
      std::string found = *error;
      if (found.rfind(name + ":", 0) == 0 && found.size() > name.size() + 1 &&
          std::isdigit(static_cast<unsigned char>(found[name.size() + 1]))) {
        found = "line " + found.substr(name.size() + 1);
      }
      *error = name + ": " + corruption + " (the parser had already stopped at " + found + ")";
    }
    return false;
  }
  if (options.use_quaternions) result.ConvertToQuaternions();
  *problem = std::move(result);
  return true;
}

}  // namespace examples
}  // namespace ceres_sqrtba
