#include "src/views/location_colours.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include "src/base/error.hpp"

namespace kanoko::views {

namespace {

/// Distinct hues for the coloured locations, then grey for "other".
constexpr std::array<Rgb, LocationColouring::kTop> kPalette{{{0.12, 0.47, 0.71},
                                                             {1.00, 0.50, 0.05},
                                                             {0.17, 0.63, 0.17},
                                                             {0.84, 0.15, 0.16},
                                                             {0.58, 0.40, 0.74},
                                                             {0.55, 0.34, 0.29},
                                                             {0.89, 0.47, 0.76},
                                                             {0.09, 0.75, 0.81}}};
constexpr Rgb kOtherColour{0.45, 0.45, 0.45};
constexpr Rgb kNoLocationColour{0.86, 0.86, 0.86};

}  // namespace

LocationColouring location_colouring(std::shared_ptr<const profile::LocationSource> source, std::size_t top) {
  LocationColouring c;
  c.source = std::move(source);
  top = std::min(top, LocationColouring::kTop);
  profile::ProfileOptions o = c.source->defaults;
  o.by = profile::GroupBy::Line;
  const profile::Profile p = profile::profile_of(c.source->trace, o);
  std::map<std::tuple<std::string, std::int64_t, std::string>, std::uint8_t> coloured;
  for (const profile::ProfileRow& r : p.rows) {
    if (coloured.size() == top) break;
    if (!r.located) continue;
    c.labels.push_back(profile::printable(r.label));
    coloured.emplace(std::make_tuple(r.file, r.line, r.function), static_cast<std::uint8_t>(c.labels.size()));
  }
  const std::size_t n = c.source->trace.locations();
  c.category.assign(n + 1, LocationColouring::kNone);
  for (trace::LocationIndex l = 1; l <= n; ++l) {
    const trace::CodeLocation loc = c.source->trace.location(l);
    const auto it = coloured.find(std::make_tuple(std::string(loc.file), loc.line, std::string(loc.function)));
    c.category[l] = it != coloured.end() ? it->second : LocationColouring::kOther;
  }
  return c;
}

LocationColouring read_location_colouring(const std::filesystem::path& trace, const std::string& format) {
  auto source = std::make_shared<profile::LocationSource>(profile::read_location_source(trace, format));
  if (!source->no_locations.empty()) throw InputError(FileLoc{"--colour-by"}, source->no_locations);
  return location_colouring(std::move(source));
}

Rgb location_colour(std::uint8_t category) {
  if (category == LocationColouring::kNone) return kNoLocationColour;
  if (category > kPalette.size()) return kOtherColour;
  return kPalette[category - 1U];
}

std::vector<std::uint8_t> location_columns(const LocationColouring& c, EntityIndex e, double t0_s, double t1_s,
                                           std::size_t columns) {
  std::vector<std::uint8_t> out(columns, LocationColouring::kNone);
  if (columns == 0 || !(t1_s > t0_s)) return out;
  constexpr std::size_t kSlots = LocationColouring::kTop + 2;  // none, the coloured, other
  std::vector<double> seconds(columns * kSlots, 0.0);
  const double w = (t1_s - t0_s) / static_cast<double>(columns);
  const auto slot = [](std::uint8_t cat) { return cat == LocationColouring::kOther ? kSlots - 1 : std::size_t{cat}; };
  for (const profile::RecordedTrace::State& s : c.source->trace.states(e)) {
    const double a = std::max(s.begin_s, t0_s);
    const double b = std::min(s.end_s, t1_s);
    if (!(b > a) || s.location >= c.category.size()) continue;
    const std::size_t k = slot(c.category[s.location]);
    const auto first = static_cast<std::size_t>(std::clamp(std::floor((a - t0_s) / w), 0.0, static_cast<double>(columns - 1)));
    for (std::size_t col = first; col < columns; ++col) {
      const double c0 = t0_s + w * static_cast<double>(col);
      if (c0 >= b) break;
      const double part = std::min(b, c0 + w) - std::max(a, c0);
      if (part > 0) seconds[col * kSlots + k] += part;
    }
  }
  for (std::size_t col = 0; col < columns; ++col) {
    const double* cell = &seconds[col * kSlots];
    // The located categories first: a column with any located time shows its location.
    std::size_t best = 0;
    for (std::size_t k = 1; k < kSlots; ++k) {
      if (cell[k] > 0 && (best == 0 || cell[k] > cell[best])) best = k;
    }
    if (best == kSlots - 1) {
      out[col] = LocationColouring::kOther;
    } else if (best > 0) {
      out[col] = static_cast<std::uint8_t>(best);
    } else {
      out[col] = cell[0] > 0 ? LocationColouring::kNone : std::uint8_t{254};  // 254: no state at all
    }
  }
  return out;
}

void draw_location_row(cairo_t* cr, const LocationColouring& c, EntityIndex e, const Rect& row, double t0_s, double t1_s,
                       std::size_t columns) {
  const std::vector<std::uint8_t> cat = location_columns(c, e, t0_s, t1_s, columns);
  const double colw = row.w / static_cast<double>(std::max<std::size_t>(columns, 1));
  std::size_t start = 0;
  for (std::size_t col = 1; col <= columns; ++col) {
    if (col < columns && cat[col] == cat[start]) continue;
    if (cat[start] != 254) {
      set_colour(cr, location_colour(cat[start]));
      cairo_rectangle(cr, row.x + static_cast<double>(start) * colw, row.y, static_cast<double>(col - start) * colw, row.h);
      cairo_fill(cr);
    }
    start = col;
  }
}

void draw_location_legend(cairo_t* cr, const LocationColouring& c, const Rect& plot) {
  std::vector<std::pair<Rgb, std::string>> items;
  for (std::size_t k = 0; k < c.labels.size(); ++k) items.emplace_back(location_colour(static_cast<std::uint8_t>(k + 1)), c.labels[k]);
  items.emplace_back(kOtherColour, "other locations");
  items.emplace_back(kNoLocationColour, "no location");
  constexpr double kLine = 12;
  constexpr double kWidth = 190;
  const double h = kLine * static_cast<double>(items.size()) + 6;
  const double x = plot.x + plot.w - kWidth - 4;
  const double y = plot.y + 4;
  const ClipTo clip(cr, plot);
  cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
  cairo_rectangle(cr, x, y, kWidth, h);
  cairo_fill(cr);
  for (std::size_t k = 0; k < items.size(); ++k) {
    const double yk = y + 3 + kLine * static_cast<double>(k);
    set_colour(cr, items[k].first);
    cairo_rectangle(cr, x + 4, yk + 1, 10, kLine - 3);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
    draw_text(cr, x + 18, yk + kLine - 3, items[k].second, 9, 0.0);
  }
}

}  // namespace kanoko::views
