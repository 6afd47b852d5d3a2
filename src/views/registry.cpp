// The view registry: one row per view, in the order `--help` lists them. A new view is one file
// and one row here.
#include "src/views/builtin_views.hpp"

namespace kanoko::views {

const std::vector<ViewInfo>& view_registry() {
  static const std::vector<ViewInfo> table = {
      {"spacetime", "space-time diagram: state bars per entity over time, message lines sender -> receiver, "
                    "merged per pixel (level of detail)",
       make_spacetime_view},
      {"matrix", "communication matrix: sender x receiver, messages or bytes, current interval or cumulative",
       make_matrix_view},
      {"kiviat", "utilisation Kiviat: busy fraction of each entity over the current interval, on a circle",
       make_kiviat_view},
      {"utilisation", "utilisation over time: number of entities busy, in overhead and idle", make_utilisation_view},
      {"summary", "per-entity table: busy/comm/wait/no-state shares of the span, messages, bytes", make_summary_view},
  };
  return table;
}

}  // namespace kanoko::views
