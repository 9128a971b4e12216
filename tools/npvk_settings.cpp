// npvk-settings: prints npvk::option_table() (base/options.cpp), the one
// list of every environment variable npvk reads, as the Markdown that
// docs/settings.md and the README carry between their
// <!-- BEGIN tools/npvk_settings KIND --> markers. It links the table itself,
// so what it prints cannot drift from it; tools/settings_docs.cmake compares
// the two files with it (ctest -R settings_docs) or rewrites them
// (cmake --build build --target settings-docs).
//
//   npvk-settings table    every row: variable, default, meaning, read by
//   npvk-settings readme   the rows a user sets: variable, default, meaning
#include <cstdio>
#include <cstring>
#include <string>

#include "base/options.hpp"

namespace {

// A table cell: '|' would end it.
std::string cell(const char *text) {
  std::string out;
  for (const char *c = text; *c; ++c) {
    if (*c == '|') out += '\\';
    out += *c;
  }
  return out;
}

int usage() {
  std::fprintf(stderr, "usage: npvk-settings table|readme\n");
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) return usage();
  const bool full = std::strcmp(argv[1], "table") == 0;
  if (!full && std::strcmp(argv[1], "readme") != 0) return usage();
  if (full) {
    std::printf("| variable | default (unset) | meaning | read by |\n|---|---|---|---|\n");
  } else {
    std::printf("| variable | default (unset) | meaning |\n|---|---|---|\n");
  }
  for (const npvk::OptionInfo &o : npvk::option_table()) {
    if (!full && !o.in_readme) continue;
    std::printf("| `%s` | %s | %s |", o.name, cell(o.default_value).c_str(),
                cell(o.meaning).c_str());
    if (full) std::printf(" %s |", cell(o.read_by).c_str());
    std::printf("\n");
  }
  return 0;
}
