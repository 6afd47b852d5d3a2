#include "src/views/run_source.hpp"

#include <array>
#include <cstring>
#include <fstream>

#include "src/base/error.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::views {

bool is_run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 8> magic{};
  return in.read(magic.data(), magic.size()) && std::memcmp(magic.data(), "KANOKOTJ", magic.size()) == 0;
}

std::filesystem::path trace_for(const std::filesystem::path& input, const std::string& override) {
  if (!override.empty()) {
    if (!std::filesystem::is_regular_file(override)) throw InputError(FileLoc{override}, "no such trace file (--trace)");
    return override;
  }
  if (!std::filesystem::exists(input)) throw InputError(FileLoc{input.string()}, "no such file");
  if (!is_run_file(input)) return input;
  const trajectory::Reader run(input, trajectory::Open::partial);  // only the metadata is read
  const std::filesystem::path recorded = run.meta().source_trace;
  if (recorded.empty()) {
    throw InputError(FileLoc{input.string()}, "the run does not record its trace; give it with --trace PATH");
  }
  std::vector<std::filesystem::path> tried{recorded};
  if (recorded.is_relative()) tried.push_back(input.parent_path() / recorded);
  if (recorded.has_filename()) tried.push_back(input.parent_path() / recorded.filename());
  for (const auto& p : tried) {
    if (std::filesystem::is_regular_file(p)) return p;
  }
  std::string list;
  for (const auto& p : tried) list += (list.empty() ? "" : ", ") + p.string();
  throw InputError(FileLoc{input.string()}, "the run was simulated from trace '" + recorded.string() +
                                                "', which is missing (looked at " + list +
                                                "); give the trace with --trace PATH");
}

}  // namespace kanoko::views
