// BalProblem::Read: a streaming reader for BAL files, plain or bzip2.
//
// Bytes come from a ByteSource (the plain file, or libbz2 decompressing it
// block by block), a Scanner splits them into whitespace-separated fields and
// counts lines, and the parser checks every field against the header. Memory
// grows with the data actually read; the header's counts are only trusted
// after they have been checked against the memory that is available.
#include <bzlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "ceres_sqrtba/solver.h"
#include "bal_problem.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

constexpr size_t kBufferSize = 1 << 16;
constexpr size_t kMaxFieldLength = 128;
// White space between two fields: a few bytes in any BAL file. A longer run
// (a whole file of blanks behind a short header, which bzip2 squeezes into a
// few kilobytes) is refused rather than read to its end.
constexpr int64_t kMaxWhiteSpace = int64_t{1} << 20;
// What Drain reads at most: more than any one bzip2 block can decompress to
// (900 kB of run-length-encoded input, each 5 bytes of it a run of up to 255),
// so the block the parser stopped in is always checked whole, but no further
// (a few kilobytes of bzip2 can decompress to gigabytes).
constexpr int64_t kMaxDrain = int64_t{64} << 20;
constexpr int kMaxCount = INT_MAX;

struct FileCloser {
  void operator()(FILE* file) const {
    if (file != nullptr) std::fclose(file);
  }
};
using FilePtr = std::unique_ptr<FILE, FileCloser>;

// A stream of bytes. Read() returns false on error (with a message), and
// *size == 0 at the end of the data.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual bool Read(char* buffer, size_t capacity, size_t* size,
                    std::string* error) = 0;

  // Reads on, up to kMaxDrain bytes; false with the source's own error if it
  // has one (for compressed data: corruption found after the parser
  // stopped). True, without reading, once a Read has already failed.
  bool Drain(std::string* error) {
    if (failed_) return true;
    std::vector<char> buffer(kBufferSize);
    size_t size = 0;
    int64_t drained = 0;
    do {
      if (!Read(buffer.data(), buffer.size(), &size, error)) return false;
      drained += static_cast<int64_t>(size);
    } while (size > 0 && drained < kMaxDrain);
    return true;
  }

 protected:
  bool failed_ = false;  // a Read returned false
};

// The file as it is, after a few bytes already taken from it.
class PlainSource : public ByteSource {
 public:
  PlainSource(FILE* file, std::string prefix)
      : file_(file), prefix_(std::move(prefix)) {}

  bool Read(char* buffer, size_t capacity, size_t* size,
            std::string* error) override {
    if (!prefix_.empty()) {
      *size = std::min(capacity, prefix_.size());
      std::memcpy(buffer, prefix_.data(), *size);
      prefix_.erase(0, *size);
      return true;
    }
    *size = std::fread(buffer, 1, capacity, file_);
    if (*size == 0 && std::ferror(file_)) {
      *error = std::string("cannot read: ") + std::strerror(errno);
      failed_ = true;
      return false;
    }
    return true;
  }

 private:
  FILE* file_;
  std::string prefix_;
};

// bzip2 data decompressed while it is read. Concatenated streams (as written
// by parallel bzip2 tools) are read one after the other.
class Bzip2Source : public ByteSource {
 public:
  Bzip2Source(FILE* file, std::string prefix)
      : file_(file), pending_(std::move(prefix)) {}

  ~Bzip2Source() override { Close(); }

  bool Read(char* buffer, size_t capacity, size_t* size,
            std::string* error) override {
    *size = 0;
    while (*size == 0) {
      if (stream_ == nullptr) {
        if (finished_) return true;
        if (!Open(error)) {
          failed_ = true;
          return false;
        }
        if (stream_ == nullptr) return true;  // no further stream
      }
      int status = BZ_OK;
      const int wanted =
          static_cast<int>(std::min<size_t>(capacity, INT_MAX));
      const int got = BZ2_bzRead(&status, stream_, buffer, wanted);
      if (status != BZ_OK && status != BZ_STREAM_END) {
        *error = Describe(status);
        Close();
        finished_ = true;
        failed_ = true;
        return false;
      }
      *size = static_cast<size_t>(std::max(got, 0));
      if (status == BZ_STREAM_END) {
        // Keep the bytes libbz2 read past the end of this stream; they may
        // start another stream.
        void* unused = nullptr;
        int num_unused = 0;
        BZ2_bzReadGetUnused(&status, stream_, &unused, &num_unused);
        if (status == BZ_OK && num_unused > 0) {
          pending_.assign(static_cast<const char*>(unused), num_unused);
        }
        Close();
        streams_read_++;
      }
    }
    return true;
  }

 private:
  // Opens the next stream; leaves stream_ null when the data has ended.
  bool Open(std::string* error) {
    if (streams_read_ > 0 && pending_.empty()) {
      // Anything left in the file after a complete stream?
      const int c = std::fgetc(file_);
      if (c == EOF) {
        finished_ = true;
        return true;
      }
      pending_.push_back(static_cast<char>(c));
    }
    if (streams_read_ > 0 &&
        pending_.compare(0, std::min<size_t>(pending_.size(), 3), "BZh", 0,
                         std::min<size_t>(pending_.size(), 3)) != 0) {
      *error = "data after the end of the bzip2 stream is not bzip2 data";
      finished_ = true;
      return false;
    }
    int status = BZ_OK;
    stream_ = BZ2_bzReadOpen(&status, file_, 0, 0,
                             pending_.empty() ? nullptr : &pending_[0],
                             static_cast<int>(pending_.size()));
    if (status != BZ_OK) {
      *error = Describe(status);
      stream_ = nullptr;
      finished_ = true;
      return false;
    }
    // libbz2 copies the unused bytes into its own buffer.
    pending_.clear();
    return true;
  }

  void Close() {
    if (stream_ != nullptr) {
      int status = BZ_OK;
      BZ2_bzReadClose(&status, stream_);
      stream_ = nullptr;
    }
  }

  std::string Describe(int status) const {
    switch (status) {
      case BZ_UNEXPECTED_EOF:
        return "bzip2 data ends before its stream does (truncated .bz2 file)";
      case BZ_DATA_ERROR:
        return "bzip2 data is corrupt (checksum or block error)";
      case BZ_DATA_ERROR_MAGIC:
        return "bzip2 stream does not start with the bzip2 signature";
      case BZ_MEM_ERROR:
        return "out of memory while decompressing bzip2 data";
      case BZ_IO_ERROR:
        return std::string("cannot read: ") + std::strerror(errno);
      default:
        return "bzip2 error " + std::to_string(status);
    }
  }

  FILE* file_;
  std::string pending_;
  BZFILE* stream_ = nullptr;
  int streams_read_ = 0;
  bool finished_ = false;
};

struct Field {
  std::string text;
  int64_t line = 0;
  bool starts_line = false;  // first field of its line
  bool binary = false;       // holds a control byte no BAL text contains
};

// Splits the bytes into whitespace-separated fields and counts lines.
class Scanner {
 public:
  explicit Scanner(ByteSource* source) : source_(source), buffer_(kBufferSize) {}

  // Next field; false at the end of the data or on an error (see error()).
  bool Next(Field* field) {
    if (has_peeked_) {
      has_peeked_ = false;
      *field = std::move(peeked_);
      return true;
    }
    return Scan(field);
  }

  // The field Next() would return, without taking it.
  const Field* Peek() {
    if (!has_peeked_) {
      if (!Scan(&peeked_)) return nullptr;
      has_peeked_ = true;
    }
    return &peeked_;
  }

  // Reads the fields of the next non-empty line. Keeps at most max_kept of
  // them in *fields but counts all in *count. False at the end of the data.
  bool NextLine(size_t max_kept, std::vector<Field>* fields, size_t* count) {
    fields->clear();
    *count = 0;
    Field field;
    if (!Next(&field)) return false;
    fields->push_back(std::move(field));
    *count = 1;
    for (const Field* next = Peek(); next != nullptr && !next->starts_line;
         next = Peek()) {
      Next(&field);
      if (fields->size() < max_kept) fields->push_back(std::move(field));
      ++*count;
    }
    return error_.empty();
  }

  const std::string& error() const { return error_; }
  // Where a read error happened, else the line of the last field scanned.
  int64_t line() const { return error_.empty() ? last_field_line_ : line_; }

 private:
  // Next byte, or -1 at the end of the data or on error.
  int GetByte() {
    if (position_ == size_) {
      if (ended_) return -1;
      size_t got = 0;
      std::string message;
      if (!source_->Read(buffer_.data(), buffer_.size(), &got, &message)) {
        error_ = message;
        ended_ = true;
        return -1;
      }
      if (got == 0) {
        ended_ = true;
        return -1;
      }
      position_ = 0;
      size_ = got;
    }
    ++offset_;
    return static_cast<unsigned char>(buffer_[position_++]);
  }

  static bool IsSpace(int c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
  }

  // Line breaks: "\n", "\r\n" and a lone "\r" (old Mac files) each count once.
  void CountLineBreak(int c) {
    if (c == '\r' || (c == '\n' && !after_cr_)) {
      ++line_;
      newline_since_field_ = true;
    }
    after_cr_ = c == '\r';
  }

  // A byte no BAL text contains: a control character other than whitespace.
  static bool IsBinary(int c) { return (c < 0x20 || c == 0x7f) && !IsSpace(c); }

  bool Scan(Field* field) {
    if (!error_.empty()) return false;
    int c = GetByte();
    int64_t white_space = 0;
    while (c >= 0 && IsSpace(c)) {
      CountLineBreak(c);
      if (++white_space > kMaxWhiteSpace) {
        error_ = "more than " + std::to_string(kMaxWhiteSpace >> 20) +
                 " MiB of white space in a row: not a BAL file";
        return false;
      }
      c = GetByte();
    }
    if (c < 0) return false;
    field->text.clear();
    field->line = line_;
    field->starts_line = newline_since_field_;
    newline_since_field_ = false;
    last_field_line_ = line_;
    after_cr_ = false;
    field->binary = false;
    const bool stream_start = offset_ == 1;
    while (c >= 0 && !IsSpace(c)) {
      field->binary = field->binary || IsBinary(c);
      // gzip's signature at the start of the data (of the file, or of what
      // bzip2 decompresses to: both read alike).
      if (stream_start && field->text.size() == 1 && field->text[0] == '\x1f' && c == 0x8b) {
        error_ = "gzip-compressed data: only plain text and bzip2 (.bz2) files are read (decompress it first)";
        return false;
      }
      if (field->text.size() >= kMaxFieldLength) {
        error_ = "a field longer than " + std::to_string(kMaxFieldLength) +
                 " characters";
        // Binary data rarely contains whitespace: a file in another format
        // (or a bzip2 file whose signature is damaged) ends up here.
        if (field->binary) {
          error_ += " of binary data: not a BAL text file (only plain text "
                    "and bzip2 files are read)";
        }
        return false;
      }
      field->text.push_back(static_cast<char>(c));
      c = GetByte();
    }
    if (c >= 0) CountLineBreak(c);
    return error_.empty();
  }

  ByteSource* source_;
  std::vector<char> buffer_;
  size_t position_ = 0;
  size_t size_ = 0;
  bool ended_ = false;
  std::string error_;
  int64_t line_ = 1;
  int64_t last_field_line_ = 1;
  bool newline_since_field_ = true;
  bool after_cr_ = false;
  int64_t offset_ = 0;  // bytes taken from the source
  bool has_peeked_ = false;
  Field peeked_;
};

// A field as it may be shown in a message: quoted, at most 40 characters,
// unprintable bytes escaped.
std::string Quote(const std::string& text) {
  std::string out = "'";
  const size_t shown = std::min<size_t>(text.size(), 40);
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  if (shown < text.size()) out += "...";
  out += "'";
  return out;
}

enum class ParseResult { kOk, kInvalid, kOutOfRange, kNotFinite };

// Accepts an optional sign; from_chars alone takes '-' but not '+'.
const char* SkipPlus(const std::string& text) {
  const char* begin = text.data();
  if (text.size() >= 2 && begin[0] == '+' &&
      (std::isdigit(static_cast<unsigned char>(begin[1])) || begin[1] == '.')) {
    return begin + 1;
  }
  return begin;
}

ParseResult ParseInteger(const std::string& text, int64_t* value) {
  const char* begin = SkipPlus(text);
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(begin, end, *value);
  if (result.ptr != end || begin == end) return ParseResult::kInvalid;
  if (result.ec == std::errc::result_out_of_range) {
    return ParseResult::kOutOfRange;
  }
  if (result.ec != std::errc()) return ParseResult::kInvalid;
  return ParseResult::kOk;
}

ParseResult ParseNumber(const std::string& text, double* value) {
  const char* begin = SkipPlus(text);
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(begin, end, *value);
  if (result.ptr != end || begin == end) return ParseResult::kInvalid;
  if (result.ec == std::errc::result_out_of_range) {
    // Tiny magnitudes round to zero or a subnormal; large ones overflow.
    *value = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(*value)) return ParseResult::kOutOfRange;
    return ParseResult::kOk;
  }
  if (result.ec != std::errc()) return ParseResult::kInvalid;
  if (!std::isfinite(*value)) return ParseResult::kNotFinite;
  return ParseResult::kOk;
}

std::string NumberProblem(ParseResult result, const std::string& text) {
  switch (result) {
    case ParseResult::kInvalid:
      return Quote(text) + " is not a number";
    case ParseResult::kOutOfRange:
      return "number " + Quote(text) + " is out of the range of a double";
    case ParseResult::kNotFinite:
      return "non-finite number " + Quote(text);
    case ParseResult::kOk:
      break;
  }
  return "";
}

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
  std::unique_ptr<ByteSource> source;
  if (prefix == "BZh") {
    source = std::make_unique<Bzip2Source>(file, prefix);
  } else {
    source = std::make_unique<PlainSource>(file, prefix);
  }
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
