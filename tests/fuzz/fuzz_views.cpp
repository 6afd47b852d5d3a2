// libFuzzer target for the companion views (src/views). The first byte chooses the input: odd: a
// view group file (parse_view_groups); even: a native trace indexed by TraceIndexBuilder (bit 1:
// with a tiny raw-detail limit, so that the binned fallback runs), then every view model and
// drawing. Accepting or throwing kanoko::InputError are the only allowed outcomes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/base/error.hpp"
#include "tests/fuzz/targets.hpp"
#include "src/trace/native_reader.hpp"
#include "src/views/draw.hpp"
#include "src/views/models.hpp"
#include "src/views/trace_index.hpp"
#include "src/views/view.hpp"

void kanoko::fuzz::run_views(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::uint8_t flags = data[0];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if ((flags & 1U) != 0U) {
      g_count_sink = kanoko::views::parse_view_groups(text, "fuzz.toml").size();
      return;
    }
    kanoko::views::IndexOptions options;
    options.bins = 64;
    if ((flags & 2U) != 0U) options.max_detail_records = 8;
    kanoko::views::TraceIndexBuilder builder(options);
    kanoko::trace::read_native_trace_text(text, "fuzz.kntr", builder);
    const kanoko::views::TraceIndex index = builder.take();
    if (index.entity_count() > 64) return;  // keep each input cheap
    const double t0 = index.begin_s;
    const double t1 = index.end_s > t0 ? index.end_s : t0 + 1;
    g_count_sink = kanoko::views::state_columns(index, t0, t1, 7).cells.size() +
             kanoko::views::bundle_messages(index, t0, t1, 7).messages +
             kanoko::views::compute_matrix(index, t0, t1).max_messages +
             kanoko::views::compute_summary(index).rows.size() +
             kanoko::views::compute_kiviat(index, t0, (t0 + t1) / 2).busy_fraction.size();
    kanoko::views::ViewState state = kanoko::views::default_view_state(index);
    state.selection.entity = 0;
    for (const auto& name : kanoko::views::view_names()) {
      const auto view = kanoko::views::make_view(name);
      g_count_sink = g_count_sink + kanoko::views::render_view_image(*view, index, state, 64, 48).pixels.size();
      g_count_sink = g_count_sink + (view->pick(20, 30, kanoko::views::Rect{0, 0, 64, 48}, index, state).has_entity() ? 1U : 0U);
    }
  } catch (const kanoko::InputError&) {
  }
}
