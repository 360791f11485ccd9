// The input side of the BAL reader (bal_input.h): plain and bzip2 sources,
// the field scanner, and parsing one field.
#include "bal_input.h"

#include <bzlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace ceres_sqrtba {
namespace examples {
namespace bal_input {

bool ByteSource::Drain(std::string* error) {
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

namespace {

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

}  // namespace

std::unique_ptr<ByteSource> PlainFileSource(FILE* file, std::string prefix) {
  return std::make_unique<PlainSource>(file, std::move(prefix));
}

std::unique_ptr<ByteSource> Bzip2FileSource(FILE* file, std::string prefix) {
  return std::make_unique<Bzip2Source>(file, std::move(prefix));
}

bool Scanner::Next(Field* field) {
  if (has_peeked_) {
    has_peeked_ = false;
    *field = std::move(peeked_);
    return true;
  }
  return Scan(field);
}

const Field* Scanner::Peek() {
  if (!has_peeked_) {
    if (!Scan(&peeked_)) return nullptr;
    has_peeked_ = true;
  }
  return &peeked_;
}

bool Scanner::NextLine(size_t max_kept, std::vector<Field>* fields, size_t* count) {
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

int Scanner::GetByte() {
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

void Scanner::CountLineBreak(int c) {
  if (c == '\r' || (c == '\n' && !after_cr_)) {
    ++line_;
    newline_since_field_ = true;
  }
  after_cr_ = c == '\r';
}

bool Scanner::Scan(Field* field) {
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

namespace {

// Accepts an optional sign; from_chars alone takes '-' but not '+'.
const char* SkipPlus(const std::string& text) {
  const char* begin = text.data();
  if (text.size() >= 2 && begin[0] == '+' &&
      (std::isdigit(static_cast<unsigned char>(begin[1])) || begin[1] == '.')) {
    return begin + 1;
  }
  return begin;
}

}  // namespace

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

}  // namespace bal_input
}  // namespace examples
}  // namespace ceres_sqrtba
