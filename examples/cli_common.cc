#include "cli_common.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "gflags/gflags.h"

namespace ceres_sqrtba {
namespace examples {

std::string Printable(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

int FailWithMessage(const char* program, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", program, Printable(message).c_str());
  return 1;
}

int RunAfterFlags(const char* program, int argc, char** argv, int (*run)()) {
  if (argc > 1) return FailWithMessage(program, std::string("unexpected argument '") + argv[1] + "'");
  try {
    return run();
  } catch (const std::bad_alloc&) {
    return FailWithMessage(program, "out of memory (std::bad_alloc)");
  }
}

bool ParsePreconditionerFlag(const std::string& value, const char* also, ceres::PreconditionerType* type,
                             std::string* error) {
  if (ceres::StringToPreconditionerType(value, type)) return true;
  *error = "unknown --preconditioner '" + value + "' (expected " + (also != nullptr ? std::string(also) + ", " : "") +
           "identity, jacobi, schur_jacobi, cluster_jacobi or cluster_tridiagonal)";
  return false;
}

bool ParsePrecisionFlag(const std::string& value, Precision* precision, std::string* error) {
  if (StringToPrecision(value, precision)) return true;
  *error = "unknown --precision '" + value + "' (expected double or single)";
  return false;
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool FlagIsDefault(const char* name) {
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(name, &info) && info.is_default;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool CheckWritable(const char* flag, const std::string& path, std::string* error) {
  if (path.empty()) return true;
  auto fail = [&](const std::string& why) {
    *error = std::string("--") + flag + "=" + path + ": cannot write to this path (" + why + ")";
    return false;
  };
  struct stat info;
  if (stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return fail("it is a directory");
    if (access(path.c_str(), W_OK) != 0) return fail(std::strerror(errno));
    return true;
  }
  if (errno != ENOENT) return fail(std::strerror(errno));
  // A new file (or the missing target of a symbolic link): its directory.
  const size_t slash = path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return fail("no directory " + directory);
  }
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    return fail("cannot create a file in " + directory + ": " + std::strerror(errno));
  }
  return true;
}

}  // namespace examples
}  // namespace ceres_sqrtba
