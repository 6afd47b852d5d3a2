// The fuzz target table and the timeline reader the targets share.
#include "tests/fuzz/targets.hpp"

#include <array>

namespace kanoko::fuzz {

std::span<const Target> targets() {
  static constexpr std::array<Target, 10> kTargets{{
      {"native_trace", run_native_trace},
      {"paje", run_paje},
      {"chrome", run_chrome},
      {"mapping", run_mapping},
      {"trajectory", run_trajectory},
      {"paraver", run_paraver},
      {"simgrid_ti", run_simgrid_ti},
      {"otf2", run_otf2},
      {"views", run_views},
      {"viewer_files", run_viewer_files},
  }};
  return kTargets;
}

double touch(const trace::Timeline& tl) {
  double sum = 0;
  for (std::size_t b = 0; b < tl.bin_count; ++b) {
    for (const auto& p : tl.traffic(b)) sum += p.bytes + p.messages + p.src + p.dst;
    for (trace::EntityIndex e = 0; e < tl.entity_count(); ++e) sum += tl.load_at(b, e) + tl.busy_fraction(b, e);
  }
  return sum;
}

}  // namespace kanoko::fuzz
