#include "src/scene/mapping_visual.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <osg/Notify>
#include <osgDB/ReadFile>
#include <sstream>

#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/base/image_size.hpp"

namespace kanoko::scene {

namespace {

bool given(const mapping::Mapping& m, const char* key) { return m.locations.count(key) != 0; }

bool reads(const mapping::ExpressionSpec& spec, const std::string& name) {
  return std::find(spec.used.begin(), spec.used.end(), name) != spec.used.end();
}

/// The colour formula in effect: the mapping's, or `load` (the documented default) when only the
/// colour map or range is given.
std::optional<mapping::ExpressionSpec> colour_spec(const mapping::Mapping& m) {
  if (m.visual.colour) return m.visual.colour;
  if (!mapping_colours_bodies(m)) return std::nullopt;
  mapping::ExpressionSpec spec;
  spec.key = "visual.colour";
  spec.text = "load";
  spec.loc = m.where(given(m, "visual.colour_map") ? "visual.colour_map" : "visual.colour_range");
  spec.scope = mapping::Scope::Body;
  spec.used = {"load"};
  return spec;
}

}  // namespace

std::shared_ptr<const mapping::Mapping> stored_mapping(const trajectory::Reader& reader, const std::string& run) {
  const trajectory::Metadata& meta = reader.meta();
  if (meta.mapping_text.empty()) return nullptr;
  // The recorded path itself names the text: its folder is where [visual] texture lives.
  const std::string name = meta.source_mapping.empty() ? run + " (its mapping)" : meta.source_mapping;
  return std::make_shared<const mapping::Mapping>(mapping::parse_mapping_text(meta.mapping_text, name));
}

bool mapping_colours_bodies(const mapping::Mapping& m) {
  return given(m, "visual.colour") || given(m, "visual.colour_map") || given(m, "visual.colour_range");
}

mapping::LabelKind parse_label_kind(const std::string& text, const std::string& option) {
  // The order of mapping::LabelKind, as [visual] labels spells them.
  static const std::array<const char*, 5> names{"none", "name", "rank", "host", "index"};
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (text == names[k]) return static_cast<mapping::LabelKind>(k);
  }
  throw InputError(FileLoc{option}, "unknown label kind '" + text + "'; expected one of none, name, rank, host, index");
}

double checked_trail(double seconds, const std::string& option) {
  if (!std::isfinite(seconds) || seconds < 0) {
    throw InputError(FileLoc{option}, "expected a number of trace seconds >= 0, got " + std::to_string(seconds));
  }
  return seconds;
}

std::string label_text(const trajectory::BodyInfo& body, std::size_t index, mapping::LabelKind kind) {
  switch (kind) {
    case mapping::LabelKind::Rank:
      return body.rank >= 0 ? std::to_string(body.rank) : std::to_string(index);
    case mapping::LabelKind::Host:
      return body.host.empty() ? std::to_string(index) : body.host;
    case mapping::LabelKind::Index:
      return std::to_string(index);
    case mapping::LabelKind::None:
    case mapping::LabelKind::Name:
      break;
  }
  return body.name.empty() ? std::to_string(index) : body.name;
}

VisualOptions visual_from_mapping(const mapping::Mapping* m, const VisualOverrides& cli, VisualOptions base) {
  if (m != nullptr) {
    const mapping::VisualSpec& v = m->visual;
    if (given(*m, "visual.labels")) {
      base.labels = v.labels != mapping::LabelKind::None;
      if (v.labels != mapping::LabelKind::None) base.label_text = v.labels;
    }
    if (given(*m, "visual.trails")) base.trail_s = v.trails_s;
    if (!v.texture.empty()) {
      // osgDB's own complaint ("file not handled") would only precede the clearer one below.
      const osg::NotifySeverity level = osg::getNotifyLevel();
      osg::setNotifyLevel(osg::FATAL);
      check_image_size(v.texture, m->where("visual.texture"));  // before decoding: a small file may declare a huge picture
      osg::ref_ptr<osg::Image> image = osgDB::readRefImageFile(v.texture.string());
      osg::setNotifyLevel(level);
      if (!image.valid() || image->data() == nullptr || image->s() < 1 || image->t() < 1) {
        throw InputError(m->where("visual.texture"),
                         "'texture' names '" + v.texture.string() +
                             "', which is not an image this program can read (PNG or JPEG)");
      }
      base.texture_image = image;
    }
  }
  if (cli.labels) {
    base.labels = *cli.labels != mapping::LabelKind::None;
    if (*cli.labels != mapping::LabelKind::None) base.label_text = *cli.labels;
  }
  if (cli.trail_s) base.trail_s = *cli.trail_s;
  if (cli.textures) {
    base.textures = *cli.textures;
    base.texture_image = nullptr;  // the command line's choice replaces the mapping's image
  }
  return base;
}

BodyFormulas::BodyFormulas(const mapping::Mapping& m, const trajectory::Reader& reader, const std::string& run)
    : map_(m.visual.colour_map), run_(run) {
  const trajectory::Metadata& meta = reader.meta();
  const std::size_t n = meta.body_count();
  const auto& names = mapping::variable_names(mapping::Scope::Body);
  for (std::size_t v = 0; v < mapping::kBodyVarCount; ++v) stat_row_[v] = meta.stat_index(names[v]);
  // Runs from before `busy` was stored have it only as the load of a run whose [mass] load is the
  // busy fraction.
  if (stat_row_[mapping::kBodyBusy] < 0 && m.mass.load == mapping::LoadSource::Busy) {
    stat_row_[mapping::kBodyBusy] = meta.stat_index(trajectory::stat::kLoad);
  }
  const std::array<std::size_t, 8> from_metadata{mapping::kBodyIndex, mapping::kBodyRank,      mapping::kBodyCount,
                                                 mapping::kBodyDegree, mapping::kBodyPeakBytes, mapping::kBodyPeakMsgs,
                                                 mapping::kBodyInterval, mapping::kBodyTime};
  const std::optional<mapping::ExpressionSpec> colour = colour_spec(m);
  for (const auto* spec : {&colour, &m.visual.scale}) {
    if (!*spec) continue;
    for (std::size_t v = 0; v < mapping::kBodyVarCount; ++v) {
      const bool available = stat_row_[v] >= 0 || std::find(from_metadata.begin(), from_metadata.end(), v) != from_metadata.end();
      if (available || !reads(**spec, names[v])) continue;
      std::string stored;
      for (const auto& s : meta.stat_names) stored += (stored.empty() ? "" : ", ") + s;
      throw InputError((*spec)->loc, "'" + (*spec)->key + "' reads '" + names[v] + "', which the run " + run +
                                         " does not store (it stores " + stored +
                                         "; simulate it again to store busy, communicating and idle)");
    }
  }
  if (colour) {
    colour_ = mapping::Expression(*colour, vars_.data());
    colour_text_ = colour->text;
  }
  if (m.visual.scale) scale_ = mapping::Expression(*m.visual.scale, vars_.data());

  rank_.resize(n);
  degree_.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    rank_[i] = meta.bodies[i].rank >= 0 ? static_cast<double>(meta.bodies[i].rank) : static_cast<double>(i);
  }
  for (const auto& [a, b] : meta.edges) {
    degree_[a] += 1;
    degree_[b] += 1;
  }
  // The peaks pass over every pair record of the run (millions at 10,000 ranks, a tenth of a
  // second before the first frame): only for a formula that reads them.
  bool peaks_read = false;
  for (const auto* spec : {&colour, &m.visual.scale}) {
    peaks_read = peaks_read || (*spec && (reads(**spec, names[mapping::kBodyPeakBytes]) ||
                                          reads(**spec, names[mapping::kBodyPeakMsgs])));
  }
  if (peaks_read) {
    for (const auto& p : meta.traffic) {
      peak_bytes_ = std::max(peak_bytes_, p.bytes);
      peak_msgs_ = std::max(peak_msgs_, p.messages);
    }
  }
  vars_[mapping::kBodyCount] = static_cast<double>(n);
  vars_[mapping::kBodyPeakBytes] = peak_bytes_;
  vars_[mapping::kBodyPeakMsgs] = peak_msgs_;
  vars_[mapping::kBodyInterval] = meta.interval_s;
  values_.assign(n, 0.0);
  colours_.resize(n);
  scales_.assign(n, 1.0);

  // Every interval of the run once (frames of one interval share their statistics): the range of
  // the colour values, and the check that no value is bad.
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  max_scale_ = 0;
  std::size_t last_bin = std::numeric_limits<std::size_t>::max();
  for (std::size_t k = 0; k < reader.frame_count(); ++k) {
    const std::size_t bin = meta.interval_of(reader.frame_time(k));
    if (bin == last_bin) continue;
    last_bin = bin;
    evaluate(reader, k, true);
    for (std::size_t i = 0; i < n; ++i) {
      low = std::min(low, values_[i]);
      high = std::max(high, values_[i]);
      max_scale_ = std::max(max_scale_, scales_[i]);
    }
  }
  if (m.visual.colour_range) {
    range_ = *m.visual.colour_range;
  } else if (low <= high) {
    range_ = {low, high};
  }
  last_reader_ = nullptr;
  update(reader, reader.begin_time());
}

BodyFormulas::~BodyFormulas() = default;

void BodyFormulas::fill(const trajectory::FrameView& f, std::size_t i) {
  const auto col = static_cast<Eigen::Index>(i);
  for (std::size_t v = 0; v < mapping::kBodyVarCount; ++v) {
    if (stat_row_[v] >= 0) vars_[v] = f.stats(stat_row_[v], col);
  }
  vars_[mapping::kBodyIndex] = static_cast<double>(i);
  vars_[mapping::kBodyRank] = rank_[i];
  vars_[mapping::kBodyDegree] = degree_[i];
}

void BodyFormulas::evaluate(const trajectory::Reader& reader, std::size_t k, bool check) {
  const trajectory::Metadata& meta = reader.meta();
  const trajectory::FrameView f = reader.frame(k);
  const std::size_t bin = meta.interval_of(f.time_s);
  vars_[mapping::kBodyTime] = meta.trace_begin_s + static_cast<double>(bin) * meta.interval_s;
  const auto subject = [&](std::size_t i) {
    std::ostringstream os;
    os << "body " << i << " '" << meta.bodies[i].name << "' at t = " << f.time_s << " s of " << run_;
    return os.str();
  };
  for (std::size_t i = 0; i < values_.size(); ++i) {
    fill(f, i);
    if (colour_.valid()) {
      const double c = colour_.eval();
      if (check && !std::isfinite(c)) colour_.throw_bad_value(subject(i), c, "finite");
      values_[i] = std::isfinite(c) ? c : range_[0];
    }
    if (scale_.valid()) {
      const double s = scale_.eval();
      if (check && !(s >= 0 && std::isfinite(s))) scale_.throw_bad_value(subject(i), s, "finite and ≥ 0");
      scales_[i] = s >= 0 && std::isfinite(s) ? s : 1.0;
    }
  }
}

std::array<float, 3> BodyFormulas::aggregate_colour(const Eigen::Ref<const Eigen::VectorXd>& stats, std::size_t first_body) {
  KANOKO_ASSERT(colour_.valid(), "a colour formula to evaluate");
  for (std::size_t v = 0; v < mapping::kBodyVarCount; ++v) {
    if (stat_row_[v] >= 0 && stat_row_[v] < stats.size()) vars_[v] = stats(stat_row_[v]);
  }
  vars_[mapping::kBodyIndex] = static_cast<double>(first_body);
  vars_[mapping::kBodyRank] = rank_.at(first_body);
  vars_[mapping::kBodyDegree] = degree_.at(first_body);
  const double value = colour_.eval();
  const double width = range_[1] - range_[0];
  const double t = !std::isfinite(value) ? 0.0 : width > 0 ? (value - range_[0]) / width : 0.5;
  return mapping::colour_at(map_, t);
}

bool BodyFormulas::update(const trajectory::Reader& reader, double t_s) {
  const std::size_t k = reader.frame_at_or_before(t_s);
  if (&reader == last_reader_ && k == last_frame_) return false;
  last_reader_ = &reader;
  last_frame_ = k;
  evaluate(reader, k, false);
  if (colour_.valid()) {
    const double width = range_[1] - range_[0];
    for (std::size_t i = 0; i < values_.size(); ++i) {
      // One value over the whole run: the middle of the map.
      const double t = width > 0 ? (values_[i] - range_[0]) / width : 0.5;
      colours_[i] = mapping::colour_at(map_, t);
    }
  }
  return true;
}

DrawnRun open_drawn_run(const std::string& run, const VisualOverrides& cli, VisualOptions base, trajectory::Open open) {
  return drawn_run_of(std::make_unique<trajectory::Reader>(run, open), run, cli, std::move(base));
}

DrawnRun drawn_run_of(std::unique_ptr<trajectory::Reader> reader, const std::string& run, const VisualOverrides& cli,
                      VisualOptions base) {
  DrawnRun d;
  d.reader = std::move(reader);
  check_has_bodies(*d.reader, run);
  d.mapping = stored_mapping(*d.reader, run);
  base.labels = d.reader->meta().body_count() <= kDefaultLabelledBodies;
  d.visual = visual_from_mapping(d.mapping.get(), cli, base);
  return d;
}

}  // namespace kanoko::scene
