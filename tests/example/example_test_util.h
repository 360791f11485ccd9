// Helpers shared by the bundle_adjuster example's tests.
#ifndef CERES_SQRTBA_TESTS_EXAMPLE_EXAMPLE_TEST_UTIL_H_
#define CERES_SQRTBA_TESTS_EXAMPLE_EXAMPLE_TEST_UTIL_H_

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace examples {
namespace testing_util {

// A fresh folder for one test's files, removed with its files at the end.
class TempDir {
 public:
  TempDir() {
    std::string base = ::testing::TempDir();
    if (base.empty() || base.back() != '/') base += '/';
    std::string pattern = base + "bal_example_test_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    const char* made = mkdtemp(buffer.data());
    if (made == nullptr) {
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
    } else {
      path_ = made;
    }
  }
  ~TempDir() {
    if (!path_.empty()) {
      const std::string command = "rm -rf '" + path_ + "'";
      if (std::system(command.c_str()) != 0) {
        std::fprintf(stderr, "could not remove %s\n", path_.c_str());
      }
    }
  }
  std::string Path(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  ASSERT_TRUE(out.good()) << path;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

inline std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.push_back("");
  return fields;
}

// Folder of the real BAL problems: $CERES_SQRTBA_BAL_DIR, else the default
// compiled into the test.
inline std::string BalDir() {
  const char* env = std::getenv("CERES_SQRTBA_BAL_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  return CERES_SQRTBA_DEFAULT_BAL_DIR;
}

inline bool FileExists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a shell command with its stdout and stderr sent to files in dir.
inline CommandResult RunCommand(const std::string& command,
                                const TempDir& dir) {
  CommandResult result;
  const std::string out_path = dir.Path("command_stdout.txt");
  const std::string err_path = dir.Path("command_stderr.txt");
  const std::string full =
      command + " >'" + out_path + "' 2>'" + err_path + "' </dev/null";
  const int status = std::system(full.c_str());
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

}  // namespace testing_util
}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_EXAMPLE_EXAMPLE_TEST_UTIL_H_
