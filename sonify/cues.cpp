#include "sonify/cues.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/base/suggest.hpp"
#include "src/mapping/expression.hpp"
#include "src/mapping/mapping.hpp"

namespace kanoko::sonify {

namespace {

constexpr const char* kSpeed = "speed";

bool cue_order(const Cue& a, const Cue& b) {
  if (a.time_s != b.time_s) return a.time_s < b.time_s;
  if (a.body != b.body) return a.body < b.body;
  return a.rule < b.rule;
}

}  // namespace

mapping::AudioSpec stored_audio_section(const trajectory::Reader& reader, const std::string& run) {
  const trajectory::Metadata& meta = reader.meta();
  if (meta.mapping_text.empty()) return {};
  const std::string name = meta.source_mapping.empty()
                               ? run + " (its mapping)"
                               : meta.source_mapping + " (as stored in " + run + ")";
  return mapping::parse_mapping_text(meta.mapping_text, name).audio;
}

std::vector<std::string> watchable_quantities(const trajectory::Metadata& meta) {
  std::vector<std::string> names = meta.stat_names;
  names.emplace_back(kSpeed);
  return names;
}

std::vector<CueRule> resolve_cue_rules(const mapping::AudioSpec& audio,
                                       const trajectory::Metadata& meta) {
  std::vector<CueRule> rules;
  DiagnosticList diag;
  for (const mapping::CueSpec& spec : audio.effective_cues()) {
    CueRule rule;
    rule.quantity = spec.quantity;
    rule.rate_min = spec.rate_min;
    rule.rate_max = spec.rate_max;
    rule.edge = spec.edge;
    rule.refractory_s = spec.refractory_s;
    rule.gain = spec.gain;
    rule.rate_min_formula = spec.rate_min_formula;
    rule.rate_max_formula = spec.rate_max_formula;
    if (spec.quantity != kSpeed) {
      rule.stat_row = meta.stat_index(spec.quantity);
      if (rule.stat_row < 0) {
        std::string valid;
        const std::vector<std::string> names = watchable_quantities(meta);
        for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
        diag.add(spec.where.file.empty() ? FileLoc{"[audio.cue]"} : spec.where,
                 "cue quantity '" + spec.quantity + "' is not stored in this run" +
                     did_you_mean(spec.quantity, names) + "; it stores: " + valid);
        continue;
      }
    }
    rules.push_back(rule);
  }
  diag.throw_if_any();
  return rules;
}

CueDetector::CueDetector(std::vector<CueRule> rules, std::size_t body_count)
    : rules_(std::move(rules)),
      body_count_(body_count),
      inside_(rules_.size() * body_count, 0),
      last_fire_s_(rules_.size() * body_count, -std::numeric_limits<double>::infinity()) {}

void CueDetector::values_of(const trajectory::FrameView& frame, Eigen::MatrixXd& out) const {
  const auto bodies = static_cast<Eigen::Index>(body_count_);
  out.resize(static_cast<Eigen::Index>(rules_.size()), bodies);
  for (std::size_t r = 0; r < rules_.size(); ++r) {
    const auto row = static_cast<Eigen::Index>(r);
    if (rules_[r].stat_row < 0) {
      out.row(row) = frame.velocities.colwise().norm();
    } else {
      out.row(row) = frame.stats.row(rules_[r].stat_row);
    }
  }
}

void CueDetector::feed(double time_s, const Eigen::MatrixXd& values, std::vector<Cue>& out) {
  KANOKO_ASSERT(values.rows() == static_cast<Eigen::Index>(rules_.size()) &&
                    values.cols() == static_cast<Eigen::Index>(body_count_),
                "values must be rules x bodies");
  if (!have_previous_) {
    have_previous_ = true;
    previous_time_s_ = time_s;
    previous_ = values;
    return;
  }
  const double dt = time_s - previous_time_s_;
  if (!(dt > 0)) return;  // a repeated frame time carries no rate
  const std::size_t first_new = out.size();
  for (std::size_t r = 0; r < rules_.size(); ++r) {
    const CueRule& rule = rules_[r];
    for (std::size_t b = 0; b < body_count_; ++b) {
      const auto row = static_cast<Eigen::Index>(r);
      const auto col = static_cast<Eigen::Index>(b);
      const double rate = (values(row, col) - previous_(row, col)) / dt;
      const double lo = rule.body_min.empty() ? rule.rate_min : rule.body_min[b];
      const double hi = rule.body_max.empty() ? rule.rate_max : rule.body_max[b];
      const bool inside = rate >= lo && rate <= hi;
      const std::size_t i = r * body_count_ + b;
      const bool was_inside = inside_[i] != 0;
      inside_[i] = inside ? 1 : 0;
      const bool crossed = rule.edge == mapping::CueEdge::Enter ? (inside && !was_inside)
                                                                 : (!inside && was_inside);
      if (!crossed || time_s < last_fire_s_[i] + rule.refractory_s) continue;
      last_fire_s_[i] = time_s;
      out.push_back(Cue{time_s, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(r),
                        static_cast<float>(rule.gain), rate});
    }
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first_new), out.end(), cue_order);
  previous_time_s_ = time_s;
  previous_ = values;
}

namespace {

/// Running statistics of a rate: count, mean, sum of squared deviations (Welford), peak |rate|.
struct RateStats {
  double n = 0, mean = 0, m2 = 0, peak = 0;
  void add(double r) {
    n += 1;
    const double d = r - mean;
    mean += d / n;
    m2 += d * (r - mean);
    peak = std::max(peak, std::abs(r));
  }
  [[nodiscard]] double sd() const { return n > 0 ? std::sqrt(m2 / n) : 0; }
};

/// Calls f(rule, body, rate) for the rate of each rule's quantity of each body at every stored
/// frame after the first (frames at a repeated time carry no rate), as CueDetector::feed computes it.
template <typename F>
void for_each_rate(const trajectory::Reader& reader, const std::vector<CueRule>& rules, F&& f) {
  const std::size_t bodies = reader.meta().body_count();
  const CueDetector reader_of_values(rules, bodies);
  Eigen::MatrixXd values, previous;
  double previous_t = 0;
  for (std::size_t k = 0; k < reader.frame_count(); ++k) {
    const trajectory::FrameView frame = reader.frame(k);
    reader_of_values.values_of(frame, values);
    const double dt = frame.time_s - previous_t;
    if (k > 0 && dt > 0) {
      for (std::size_t w = 0; w < rules.size(); ++w) {
        for (std::size_t b = 0; b < bodies; ++b) {
          const auto row = static_cast<Eigen::Index>(w);
          const auto col = static_cast<Eigen::Index>(b);
          f(w, b, (values(row, col) - previous(row, col)) / dt);
        }
      }
    }
    if (k == 0 || dt > 0) {
      previous = values;
      previous_t = frame.time_s;
    }
  }
}

}  // namespace

std::vector<RateRange> observed_rates(const trajectory::Reader& reader, const std::vector<CueRule>& rules) {
  std::vector<RateRange> ranges(rules.size());
  for_each_rate(reader, rules, [&](std::size_t w, std::size_t, double rate) {
    RateRange& r = ranges[w];
    r.min = r.count == 0 ? rate : std::min(r.min, rate);
    r.max = r.count == 0 ? rate : std::max(r.max, rate);
    ++r.count;
  });
  return ranges;
}

std::string why_no_cues(const trajectory::Reader& reader, const std::vector<CueRule>& given_rules) {
  std::vector<CueRule> rules = given_rules;
  resolve_cue_thresholds(rules, reader);
  const std::vector<RateRange> seen = observed_rates(reader, rules);
  std::ostringstream os;
  for (std::size_t r = 0; r < rules.size(); ++r) {
    const CueRule& rule = rules[r];
    if (r > 0) os << "; ";
    os << "cue " << r + 1 << " watches the rate of '" << rule.quantity << "' ";
    if (rule.body_min.empty()) {
      os << (rule.edge == mapping::CueEdge::Enter ? "entering" : "leaving") << " [" << rule.rate_min << ", "
         << rule.rate_max << "] per trace second";
    } else {
      os << (rule.edge == mapping::CueEdge::Enter ? "entering" : "leaving") << " a range set per body by formulas";
    }
    if (seen[r].count == 0) {
      os << ", but the run has no two frames to take a rate from";
    } else {
      os << ", but over the run it stays within [" << seen[r].min << ", " << seen[r].max << "]";
    }
  }
  return os.str();
}

void resolve_cue_thresholds(std::vector<CueRule>& rules, const trajectory::Reader& reader) {
  const std::size_t bodies = reader.meta().body_count();
  std::vector<std::size_t> with_formulas;
  for (std::size_t r = 0; r < rules.size(); ++r) {
    if (rules[r].rate_min_formula || rules[r].rate_max_formula) with_formulas.push_back(r);
  }
  if (with_formulas.empty()) return;
  // One pass over the frames: the rate statistics of each such rule, per body and overall.
  std::vector<CueRule> watched;
  for (const std::size_t r : with_formulas) watched.push_back(rules[r]);
  std::vector<std::vector<RateStats>> per_body(watched.size(), std::vector<RateStats>(bodies));
  std::vector<RateStats> overall(watched.size());
  for_each_rate(reader, watched, [&](std::size_t w, std::size_t b, double rate) {
    per_body[w][b].add(rate);
    overall[w].add(rate);
  });
  // Each bound formula, once per body.
  std::vector<double> vars(mapping::kCueVarCount, 0.0);
  for (std::size_t w = 0; w < watched.size(); ++w) {
    CueRule& rule = rules[with_formulas[w]];
    std::optional<mapping::Expression> lo, hi;
    if (rule.rate_min_formula) lo.emplace(*rule.rate_min_formula, vars.data());
    if (rule.rate_max_formula) hi.emplace(*rule.rate_max_formula, vars.data());
    rule.body_min.assign(bodies, rule.rate_min);
    rule.body_max.assign(bodies, rule.rate_max);
    vars[mapping::kCueCount] = static_cast<double>(bodies);
    vars[mapping::kCueAllMeanRate] = overall[w].mean;
    vars[mapping::kCueAllSdRate] = overall[w].sd();
    vars[mapping::kCueAllPeakRate] = overall[w].peak;
    for (std::size_t b = 0; b < bodies; ++b) {
      vars[mapping::kCueIndex] = static_cast<double>(b);
      vars[mapping::kCueMeanRate] = per_body[w][b].mean;
      vars[mapping::kCueSdRate] = per_body[w][b].sd();
      vars[mapping::kCuePeakRate] = per_body[w][b].peak;
      const std::string subject = "body " + reader.meta().bodies.at(b).name + " (cue on '" + rule.quantity + "')";
      if (lo) {
        rule.body_min[b] = lo->eval();
        if (std::isnan(rule.body_min[b])) lo->throw_bad_value(subject, rule.body_min[b], "a number");
      }
      if (hi) {
        rule.body_max[b] = hi->eval();
        if (std::isnan(rule.body_max[b])) hi->throw_bad_value(subject, rule.body_max[b], "a number");
      }
      if (!(rule.body_min[b] < rule.body_max[b])) {
        std::ostringstream os;
        os << " (the range [" << rule.body_min[b] << ", " << rule.body_max[b] << "] is empty)";
        if (hi) hi->throw_bad_value(subject, rule.body_max[b], "above the low bound" + os.str());
        lo->throw_bad_value(subject, rule.body_min[b], "below the high bound" + os.str());
      }
    }
  }
}

std::vector<Cue> detect_cues(const trajectory::Reader& reader, const std::vector<CueRule>& given_rules) {
  std::vector<CueRule> rules = given_rules;
  resolve_cue_thresholds(rules, reader);
  CueDetector detector(rules, reader.meta().body_count());
  std::vector<Cue> cues;
  Eigen::MatrixXd values;
  for (std::size_t k = 0; k < reader.frame_count(); ++k) {
    const trajectory::FrameView frame = reader.frame(k);
    detector.values_of(frame, values);
    detector.feed(frame.time_s, values, cues);
  }
  return cues;
}

std::vector<Cue> merge_cues_per_frame(const std::vector<Cue>& sorted_cues, double origin_s,
                                      double period_s) {
  KANOKO_ASSERT(period_s > 0, "frame period must be positive");
  std::vector<Cue> out;
  // Per body: index in `out` of its cue in the current frame.
  std::unordered_map<std::uint32_t, std::size_t> open;
  std::int64_t frame = std::numeric_limits<std::int64_t>::min();
  for (const Cue& c : sorted_cues) {
    const auto k = static_cast<std::int64_t>(std::floor((c.time_s - origin_s) / period_s));
    if (k != frame) {
      frame = k;
      open.clear();
    }
    const auto it = open.find(c.body);
    if (it == open.end()) {
      open.emplace(c.body, out.size());
      out.push_back(c);
    } else if (c.gain > out[it->second].gain) {
      out[it->second].gain = c.gain;
      out[it->second].rule = c.rule;
      out[it->second].rate = c.rate;
    }
  }
  return out;
}

std::vector<Cue> cap_voices(const std::vector<Cue>& sorted_cues, std::uint32_t max_voices,
                            double duration_s) {
  std::vector<Cue> out;
  std::vector<double> ends;  // end times of the kept cues still sounding (min-heap)
  const auto later = [](double a, double b) { return a > b; };
  for (std::size_t i = 0; i < sorted_cues.size();) {
    // Cues starting together: loudest first.
    std::size_t j = i;
    while (j < sorted_cues.size() && sorted_cues[j].time_s == sorted_cues[i].time_s) ++j;
    std::vector<Cue> group(sorted_cues.begin() + static_cast<std::ptrdiff_t>(i),
                           sorted_cues.begin() + static_cast<std::ptrdiff_t>(j));
    std::stable_sort(group.begin(), group.end(),
                     [](const Cue& a, const Cue& b) { return a.gain > b.gain; });
    const double t = sorted_cues[i].time_s;
    while (!ends.empty() && ends.front() <= t) {
      std::pop_heap(ends.begin(), ends.end(), later);
      ends.pop_back();
    }
    const std::size_t first_kept = out.size();
    for (const Cue& c : group) {
      if (ends.size() >= max_voices) break;
      out.push_back(c);
      ends.push_back(t + duration_s);
      std::push_heap(ends.begin(), ends.end(), later);
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first_kept), out.end(), cue_order);
    i = j;
  }
  return out;
}

void cues_crossed(const std::vector<Cue>& sorted_cues, double from_s, double to_s,
                  std::vector<Cue>& out) {
  if (from_s == to_s) return;
  const bool forward = to_s > from_s;
  const auto by_time = [](const Cue& c, double t) { return c.time_s < t; };
  const auto time_before = [](double t, const Cue& c) { return t < c.time_s; };
  // Forward: (from, to]; backward: [to, from).
  auto first = forward ? std::upper_bound(sorted_cues.begin(), sorted_cues.end(), from_s, time_before)
                       : std::lower_bound(sorted_cues.begin(), sorted_cues.end(), to_s, by_time);
  auto last = forward ? std::upper_bound(sorted_cues.begin(), sorted_cues.end(), to_s, time_before)
                      : std::lower_bound(sorted_cues.begin(), sorted_cues.end(), from_s, by_time);
  std::unordered_map<std::uint32_t, std::size_t> seen;
  for (auto it = first; it != last; ++it) {
    const auto found = seen.find(it->body);
    if (found == seen.end()) {
      seen.emplace(it->body, out.size());
      out.push_back(*it);
    } else if (it->gain > out[found->second].gain) {
      out[found->second].gain = it->gain;
    }
  }
}

}  // namespace kanoko::sonify
