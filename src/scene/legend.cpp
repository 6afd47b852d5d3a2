#include "src/scene/legend.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "src/trajectory/panel_values.hpp"
#include "src/trajectory/spring_colour.hpp"

namespace kanoko::scene {

namespace {

template <class ColourOf>
std::vector<LegendRgb> sample_gradient(const ColourOf& colour_of) {
  std::vector<LegendRgb> samples(kGradientSamples);
  for (std::size_t k = 0; k < kGradientSamples; ++k) {
    samples[k] = colour_of(static_cast<double>(k) / static_cast<double>(kGradientSamples - 1));
  }
  return samples;
}

LegendEntry gradient_entry(std::string title, std::vector<LegendRgb> samples, std::string low, std::string high) {
  LegendEntry e;
  e.kind = LegendEntry::Kind::gradient;
  e.title = std::move(title);
  e.samples = std::move(samples);
  e.low = std::move(low);
  e.high = std::move(high);
  return e;
}

LegendEntry note_entry(std::string title) {
  LegendEntry e;
  e.kind = LegendEntry::Kind::note;
  e.title = std::move(title);
  return e;
}

// One swatch per distinct colour, in the order of the bodies: named by its host when all its
// bodies share one, by the body when it is alone, else by its first bodies' names and a count.
LegendEntry swatch_entry(const std::vector<trajectory::BodyInfo>& bodies, std::size_t max_swatches, std::string title) {
  struct Group {
    LegendRgb rgb;
    const trajectory::BodyInfo* first;
    bool one_host = true;
    std::size_t count = 0;
    std::string names;  // the first kNamed bodies' names
  };
  constexpr std::size_t kNamed = 3;
  std::vector<Group> groups;
  std::map<LegendRgb, std::size_t> group_of;  // palettes may give every body its own colour
  for (const auto& b : bodies) {
    const auto [it, added] = group_of.try_emplace(b.colour_rgb, groups.size());
    if (added) {
      groups.push_back({b.colour_rgb, &b, true, 0, {}});
    } else if (groups[it->second].first->host != b.host) {
      groups[it->second].one_host = false;
    }
    Group& g = groups[it->second];
    if (g.count < kNamed) g.names += (g.count == 0 ? "" : ", ") + b.name;
    ++g.count;
  }
  LegendEntry e;
  e.kind = LegendEntry::Kind::swatches;
  e.title = std::move(title);
  for (const Group& g : groups) {
    if (e.swatches.size() >= max_swatches) {
      ++e.more;
      continue;
    }
    std::string label;
    if (g.count == 1) {
      label = g.first->name;
      if (!g.first->host.empty() && g.first->host != g.first->name) label += " (" + g.first->host + ")";
    } else if (g.one_host && !g.first->host.empty()) {
      label = g.first->host + " (" + std::to_string(g.count) + " bodies)";
    } else if (g.count <= kNamed) {
      label = g.names;
    } else {
      label = g.names + ", … (" + std::to_string(g.count) + " bodies)";
    }
    e.swatches.push_back({g.rgb, std::move(label)});
  }
  return e;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front())) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

std::string format_legend_value(const std::string& quantity, double value) {
  const std::string name = trimmed(quantity);
  if (is_identifier(name)) return trajectory::format_stat_value(name, value);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g", value);
  return buf;
}

Legend make_legend(const LegendInputs& in) {
  Legend legend;
  if (in.body_scale) {
    const BodyColourScale& s = *in.body_scale;
    const mapping::ColourMap map = s.map;
    legend.entries.push_back(gradient_entry("Bodies: " + trimmed(s.quantity),
                                            sample_gradient([map](double t) { return mapping::colour_at(map, t); }),
                                            format_legend_value(s.quantity, s.range[0]),
                                            format_legend_value(s.quantity, s.range[1])));
  } else if (in.bodies != nullptr && !in.bodies->empty()) {
    legend.entries.push_back(swatch_entry(*in.bodies, in.max_swatches, "Bodies: own colours"));
  }
  if (in.groups != nullptr && !in.groups->empty()) {
    if (in.body_scale) {
      legend.entries.push_back(note_entry("Groups: " + trimmed(in.body_scale->quantity) + " of their summed statistics"));
    } else {
      legend.entries.push_back(swatch_entry(*in.groups, in.max_swatches, "Groups: a colour each"));
    }
  }
  if (in.springs > 0) {
    switch (in.spring_colours) {
      case SpringColours::tension: {
        const double f = trajectory::kFullTensionStrain;
        legend.entries.push_back(gradient_entry(
            "Springs: tension",
            sample_gradient([f](double t) { return trajectory::tension_colour(1.0 - f + 2.0 * f * t, 1.0); }),
            "-" + std::to_string(static_cast<int>(std::lround(100 * f))) + " % shorter",
            "+" + std::to_string(static_cast<int>(std::lround(100 * f))) + " % longer"));
        break;
      }
      case SpringColours::traffic:
        legend.entries.push_back(gradient_entry("Springs: traffic (bytes)",
                                                sample_gradient([](double t) { return trajectory::traffic_colour(t, 1.0); }),
                                                "none", "busiest pair"));
        break;
      case SpringColours::off:
        legend.entries.push_back(note_entry("Springs: not coloured"));
        break;
    }
  }
  if (in.flashes) legend.entries.push_back(note_entry("Flashes: pairs talking now, brighter for more bytes"));
  return legend;
}

namespace {

// `text` cut at a character boundary with "…" so that it is at most `max_w` wide.
std::string fitted(const std::string& text, double size, double max_w, const TextWidth& width) {
  if (width(text, size) <= max_w) return text;
  std::string s = text;
  while (!s.empty()) {
    s.pop_back();
    while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0U) == 0x80U) s.pop_back();  // UTF-8 continuation
    if (!s.empty() && (static_cast<unsigned char>(s.back()) & 0x80U) != 0U) s.pop_back();        // its lead byte
    if (width(s + "…", size) <= max_w) return s + "…";
  }
  return "…";
}

std::string more_text(std::size_t k) { return "… and " + std::to_string(k) + " more"; }

// The layout with at most `cap` swatches listed per swatch entry.
LegendLayout layout_with(const Legend& legend, int width_px, int height_px, double s, std::size_t cap,
                         const TextWidth& text_width) {
  LegendLayout out;
  out.text_px = s;
  if (legend.entries.empty()) return out;
  const double margin = s;
  const double pad = 0.6 * s;
  const double line = 1.35 * s;
  const double bar_h = 0.9 * s;
  const double swatch = 0.9 * s;
  const double max_text_w = std::max(10.0 * s, 0.45 * width_px - 2 * pad - margin);

  // Texts fitted to the widest the key may be, then the content width.
  double content_w = 10.0 * s;
  std::vector<LegendEntry> entries = legend.entries;
  for (LegendEntry& e : entries) {
    e.title = fitted(e.title, s, max_text_w, text_width);
    content_w = std::max(content_w, text_width(e.title, s));
    if (e.kind == LegendEntry::Kind::gradient) {
      content_w = std::max(content_w, text_width(e.low, s) + text_width(e.high, s) + s);
    }
    if (e.kind == LegendEntry::Kind::swatches) {
      if (e.swatches.size() > cap) {
        e.more += e.swatches.size() - cap;
        e.swatches.resize(cap);
      }
      for (LegendSwatch& w : e.swatches) {
        w.label = fitted(w.label, s, max_text_w - swatch - 0.5 * s, text_width);
        content_w = std::max(content_w, swatch + 0.5 * s + text_width(w.label, s));
      }
      if (e.more > 0) content_w = std::max(content_w, text_width(more_text(e.more), s));
    }
  }
  content_w = std::min(content_w, std::max(10.0 * s, max_text_w));
  const double right = width_px - margin;
  const double left = right - content_w - 2 * pad;
  const double x0 = left + pad;
  double y = height_px - margin - pad;  // top of the next row
  const auto text_row = [&](const std::string& text, double x) {
    out.texts.push_back({text, x, y - 0.95 * s, false});
    y -= line;
  };
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const LegendEntry& e = entries[k];
    if (k > 0) y -= 0.4 * s;
    text_row(e.title, x0);
    if (e.kind == LegendEntry::Kind::gradient) {
      y -= 0.1 * s;
      out.bars.push_back({LegendRect{x0, y - bar_h, content_w, bar_h}, e.samples});
      y -= bar_h + 0.15 * s;
      // The end labels share a row when they fit beside each other, else the high one goes below.
      const bool stacked = text_width(e.low, s) + text_width(e.high, s) + s > content_w;
      if (stacked) text_row(e.low, x0);
      out.texts.push_back({e.high, x0 + content_w, y - 0.95 * s, true});
      if (stacked) {
        y -= line;
      } else {
        text_row(e.low, x0);
      }
    } else if (e.kind == LegendEntry::Kind::swatches) {
      for (const LegendSwatch& w : e.swatches) {
        out.swatches.push_back({LegendRect{x0, y - 0.15 * s - swatch, swatch, swatch}, w.rgb});
        text_row(w.label, x0 + swatch + 0.5 * s);
      }
      if (e.more > 0) text_row(more_text(e.more), x0);
    }
  }
  const double bottom = y + 0.3 * s - pad;  // the last row ends 0.4 text heights below its baseline
  out.box = LegendRect{left, bottom, right - left, height_px - margin - bottom};
  return out;
}

}  // namespace

LegendLayout layout_legend(const Legend& legend, int width_px, int height_px, double text_px, double floor_px,
                           const TextWidth& text_width) {
  if (width_px < kLegendMinWidth_px || height_px < kLegendMinHeight_px) {
    LegendLayout none;
    none.text_px = text_px;
    return none;
  }
  std::size_t most = 0;
  for (const LegendEntry& e : legend.entries) most = std::max(most, e.swatches.size());
  LegendLayout out = layout_with(legend, width_px, height_px, text_px, most, text_width);
  // Fewer swatches until the backdrop clears the floor (the dial); gradients always stay.
  for (std::size_t cap = most; cap > 0 && out.box.y < floor_px; --cap) {
    out = layout_with(legend, width_px, height_px, text_px, cap - 1, text_width);
  }
  return out;
}

}  // namespace kanoko::scene
