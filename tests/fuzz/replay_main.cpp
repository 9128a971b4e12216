// Without libFuzzer (a gcc build): runs a fuzz target once over each file
// of the given corpus directories, so the committed corpus and every crash
// turned regression input run in the ordinary test suite.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

int run_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  int runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;  // libFuzzer's flags
    struct stat st {};
    if (stat(arg.c_str(), &st) != 0) {
      std::fprintf(stderr, "no such input: %s\n", arg.c_str());
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      runs += run_file(arg);
      continue;
    }
    DIR *dir = opendir(arg.c_str());
    while (dirent *e = dir ? readdir(dir) : nullptr)
      if (e->d_name[0] != '.') runs += run_file(arg + "/" + e->d_name);
    if (dir) closedir(dir);
  }
  std::printf("replayed %d inputs\n", runs);
  return runs > 0 ? 0 : 1;
}
