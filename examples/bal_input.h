// The input side of the BAL reader (bal_reader.cc, BalProblem::Read):
// bytes from a plain or a bzip2 file (ByteSource), split into
// whitespace-separated fields that know their line (Scanner), and one field
// parsed as an integer or a number (ParseInteger, ParseNumber) with the text
// a message shows of it (Quote, NumberProblem). Internal to the library
// `bal`.
#ifndef CERES_SQRTBA_EXAMPLES_BAL_INPUT_H_
#define CERES_SQRTBA_EXAMPLES_BAL_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace ceres_sqrtba {
namespace examples {
namespace bal_input {

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
  bool Drain(std::string* error);

 protected:
  bool failed_ = false;  // a Read returned false
};

// The file as it is, after `prefix`, the bytes already taken from it.
std::unique_ptr<ByteSource> PlainFileSource(FILE* file, std::string prefix);
// bzip2 data (`prefix`, then the rest of the file) decompressed while it is
// read. Concatenated streams (as written by parallel bzip2 tools) are read
// one after the other.
std::unique_ptr<ByteSource> Bzip2FileSource(FILE* file, std::string prefix);

// One whitespace-separated field of the text, and where it is.
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
  bool Next(Field* field);
  // The field Next() would return, without taking it.
  const Field* Peek();
  // Reads the fields of the next non-empty line. Keeps at most max_kept of
  // them in *fields but counts all in *count. False at the end of the data.
  bool NextLine(size_t max_kept, std::vector<Field>* fields, size_t* count);

  const std::string& error() const { return error_; }
  // Where a read error happened, else the line of the last field scanned.
  int64_t line() const { return error_.empty() ? last_field_line_ : line_; }

 private:
  // Next byte, or -1 at the end of the data or on error.
  int GetByte();
  static bool IsSpace(int c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
  }
  // Line breaks: "\n", "\r\n" and a lone "\r" (old Mac files) each count once.
  void CountLineBreak(int c);
  // A byte no BAL text contains: a control character other than whitespace.
  static bool IsBinary(int c) { return (c < 0x20 || c == 0x7f) && !IsSpace(c); }
  bool Scan(Field* field);

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
std::string Quote(const std::string& text);

enum class ParseResult { kOk, kInvalid, kOutOfRange, kNotFinite };

// An optional sign (from_chars alone takes '-' but not '+'), then the
// integer or number and nothing else.
ParseResult ParseInteger(const std::string& text, int64_t* value);
ParseResult ParseNumber(const std::string& text, double* value);
// What is wrong with a number that did not parse, for a message.
std::string NumberProblem(ParseResult result, const std::string& text);

}  // namespace bal_input
}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_BAL_INPUT_H_
