#include "src/profile/location_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "src/base/progress.hpp"
#include "src/trace/readers.hpp"

namespace kanoko::profile {

void RecordedTrace::on_entity(const trace::Entity& e) {
  if (entities_.size() <= e.index) {
    entities_.resize(std::size_t{e.index} + 1);
    states_.resize(entities_.size());
    sent_.resize(entities_.size());
  }
  entities_[e.index] = e;
}

void RecordedTrace::on_location(trace::LocationIndex index, const trace::CodeLocation& l) {
  if (index == 0) return;
  if (locations_.size() < index) locations_.resize(index);
  locations_[index - 1] = Location{std::string(l.file), l.line, std::string(l.function), l.caller < index ? l.caller : 0};
}

void RecordedTrace::on_state(const trace::StateInterval& s) {
  const double t = std::min(s.begin_s, s.end_s);
  begin_s_ = any_time_ ? std::min(begin_s_, t) : t;
  any_time_ = true;
  if (++records_ > kMaxRecords || s.entity >= states_.size()) return;
  auto [it, inserted] = name_index_.try_emplace(std::string(s.name), static_cast<std::uint32_t>(names_.size()));
  if (inserted) names_.emplace_back(s.name);
  states_[s.entity].push_back(State{s.begin_s, s.end_s, it->second, s.location});
}

void RecordedTrace::on_message(const trace::Message& m) {
  begin_s_ = any_time_ ? std::min(begin_s_, m.send_s) : m.send_s;
  any_time_ = true;
  if (++records_ > kMaxRecords || m.src >= sent_.size()) return;
  sent_[m.src].push_back(Sent{m.send_s, m.recv_s, m.bytes, m.dst, m.location});
}

void RecordedTrace::on_end(double end_s) {
  end_s_ = end_s;
  if (!complete()) {
    // Partial detail would give wrong numbers: none is kept.
    states_.assign(entities_.size(), {});
    sent_.assign(entities_.size(), {});
  }
}

void RecordedTrace::replay(trace::TraceSink& sink, std::span<const trace::EntityIndex> only) const {
  std::vector<trace::EntityIndex> all;
  if (only.empty()) {
    for (trace::EntityIndex e = 0; e < entities_.size(); ++e) all.push_back(e);
    only = all;
  }
  // The locations these entities' events use, with their callers, announced in index order.
  std::vector<bool> used(locations_.size() + 1, false);
  const auto use = [&](trace::LocationIndex l) {
    while (l != 0 && l <= locations_.size() && !used[l]) {
      used[l] = true;
      l = locations_[l - 1].caller;
    }
  };
  for (const trace::EntityIndex e : only) {
    if (e >= entities_.size()) continue;
    for (const State& s : states_[e]) use(s.location);
    for (const Sent& m : sent_[e]) use(m.location);
  }
  for (trace::LocationIndex l = 1; l <= locations_.size(); ++l) {
    if (!used[l]) continue;
    const Location& loc = locations_[l - 1];
    sink.on_location(l, trace::CodeLocation{loc.file, loc.line, loc.function, loc.caller});
  }
  for (const trace::EntityIndex e : only) {
    if (e < entities_.size()) sink.on_entity(entities_[e]);
  }
  for (const trace::EntityIndex e : only) {
    if (e >= entities_.size()) continue;
    for (const State& s : states_[e]) sink.on_state(trace::StateInterval{s.begin_s, s.end_s, e, names_[s.name], s.location});
    for (const Sent& m : sent_[e]) sink.on_message(trace::Message{m.send_s, m.recv_s, e, m.dst, m.bytes, -1, m.location});
  }
  sink.on_end(end_s_);
}

ProfileOptions profile_defaults(const std::string& format) {
  ProfileOptions o;
  const trace::FormatFacts& facts = trace::format_facts(format);
  o.computing = facts.states.computing;
  o.communicating = facts.states.communicating;
  o.idle = facts.states.idle;
  return o;
}

std::string no_locations_message(const std::string& path, const std::string& format) {
  return path + ": no code locations in this " + format + " trace; " +
         std::string(trace::format_facts(format).record_locations) + " (docs/profile.md)";
}

LocationSource read_location_source(const std::filesystem::path& path, const std::string& format) {
  LocationSource s;
  const std::string detected = format == "auto" ? trace::detect_format(path) : format;
  const trace::ReadReport report = trace::read_trace(path, s.trace, detected);
  s.format = report.format;
  s.defaults = profile_defaults(report.format);
  if (report.locations == 0) s.no_locations = no_locations_message(path.string(), report.format);
  s.warnings = report.warning_lines();
  return s;
}

Profile profile_of(const RecordedTrace& trace, ProfileOptions options, std::optional<trace::EntityIndex> entity) {
  options.ranks.clear();
  ProfileBuilder builder(std::move(options));
  if (entity) {
    const trace::EntityIndex e = *entity;
    trace.replay(builder, std::span<const trace::EntityIndex>(&e, 1));
  } else {
    trace.replay(builder);
  }
  return builder.take();
}

void sort_rows(Profile& p, SortBy key, bool reverse) {
  const auto value = [key](const ProfileRow& r) {
    switch (key) {
      case SortBy::waiting: return r.waiting_s;
      case SortBy::communicating: return r.communicating_s;
      case SortBy::computing: return r.computing_s;
      case SortBy::calls: return static_cast<double>(r.calls);
      case SortBy::time: return r.time_s();
      case SortBy::location: return 0.0;
    }
    return 0.0;
  };
  std::stable_sort(p.rows.begin(), p.rows.end(), [&](const ProfileRow& a, const ProfileRow& b) {
    if (key == SortBy::location) return reverse ? b.label < a.label : a.label < b.label;
    return reverse ? value(a) < value(b) : value(a) > value(b);
  });
}

bool same_row(const ProfileRow& a, const ProfileRow& b) {
  return a.located == b.located && a.label == b.label && a.file == b.file && a.line == b.line && a.function == b.function;
}

namespace {

/// The row's share of the measure in `p`, and whether it dominates there.
std::pair<double, bool> share_in(const Profile& p, const ProfileRow& row, bool by_waiting) {
  const auto measure = [&](const ProfileRow& r) { return by_waiting ? r.waiting_s : r.time_s(); };
  double total = 0;
  const ProfileRow* best = nullptr;
  const ProfileRow* mine = nullptr;
  for (const ProfileRow& r : p.rows) {
    total += measure(r);
    if (best == nullptr || measure(r) > measure(*best)) best = &r;
    if (same_row(r, row)) mine = &r;
  }
  if (mine == nullptr || !(measure(*mine) > 0) || !(total > 0)) return {0.0, false};
  const double share = measure(*mine) / total;
  return {share, mine == best || share >= Dominance::kDominantShare};
}

/// One ProfileBuilder per time bin: a state goes to each bin it overlaps, a message to the bin of
/// its send.
struct BinnedProfiles final : trace::TraceSink {
  std::vector<std::unique_ptr<ProfileBuilder>> b;
  double t0 = 0;
  double w = 1;
  void on_entity(const trace::Entity& e) override {
    for (auto& x : b) x->on_entity(e);
  }
  void on_link(const trace::Link& /*l*/) override {}
  void on_load(const trace::LoadSample& /*s*/) override {}
  void on_location(trace::LocationIndex i, const trace::CodeLocation& l) override {
    for (auto& x : b) x->on_location(i, l);
  }
  [[nodiscard]] std::size_t bin_of(double t) const {
    const double k = std::floor((t - t0) / w);
    return static_cast<std::size_t>(std::clamp(k, 0.0, static_cast<double>(b.size() - 1)));
  }
  void on_state(const trace::StateInterval& s) override {
    for (std::size_t k = bin_of(s.begin_s); k <= bin_of(s.end_s); ++k) b[k]->on_state(s);
  }
  void on_message(const trace::Message& m) override { b[bin_of(m.send_s)]->on_message(m); }
  void on_end(double end_s) override {
    for (auto& x : b) x->on_end(end_s);
  }
};

}  // namespace

Dominance dominance(const RecordedTrace& trace, const ProfileOptions& options, const ProfileRow& row, std::size_t bins) {
  Dominance d;
  d.by_waiting = row.waiting_s > 0;
  const std::size_t n = trace.entities().size();
  d.share.assign(n, 0.0);
  d.dominant.assign(n, false);
  ProfileOptions whole = options;
  whole.from_s = -std::numeric_limits<double>::infinity();
  whole.to_s = std::numeric_limits<double>::infinity();
  for (trace::EntityIndex e = 0; e < n; ++e) {
    const auto [share, dominant] = share_in(profile_of(trace, whole, e), row, d.by_waiting);
    d.share[e] = share;
    d.dominant[e] = dominant;
  }
  // Over time: one profile per bin, all bins made in one replay.
  const double t0 = trace.begin_s();
  const double t1 = std::max(trace.end_s(), t0);
  bins = std::max<std::size_t>(bins, 1);
  d.bin_s = (t1 - t0) / static_cast<double>(bins);
  if (!(d.bin_s > 0)) return d;
  BinnedProfiles binned;
  binned.t0 = t0;
  binned.w = d.bin_s;
  for (std::size_t k = 0; k < bins; ++k) {
    ProfileOptions o = whole;
    o.from_s = t0 + d.bin_s * static_cast<double>(k);
    o.to_s = k + 1 == bins ? std::numeric_limits<double>::infinity() : t0 + d.bin_s * static_cast<double>(k + 1);
    binned.b.push_back(std::make_unique<ProfileBuilder>(o));
  }
  trace.replay(binned);
  for (std::size_t k = 0; k < bins; ++k) {
    if (!share_in(binned.b[k]->take(), row, d.by_waiting).second) continue;
    const double a = t0 + d.bin_s * static_cast<double>(k);
    if (!d.spans.empty() && std::abs(d.spans.back().second - a) < 1e-9 * d.bin_s) {
      d.spans.back().second = a + d.bin_s;
    } else {
      d.spans.emplace_back(a, a + d.bin_s);
    }
  }
  return d;
}

std::string locations_text(const Profile& interval, const Profile& run, std::size_t top) {
  // The location first (so that a narrow panel cuts numbers, not names), at most kLabel bytes.
  constexpr std::size_t kLabel = 24;
  const auto shown_rows = [top](const Profile& p) {
    std::vector<std::string> labels;
    std::vector<const ProfileRow*> rows;
    for (const ProfileRow& r : p.rows) {
      if (rows.size() == top) break;
      if (!(r.time_s() > 0) && r.calls == 0) continue;
      std::string label = printable(r.label);
      if (label.size() > kLabel) {
        std::size_t cut = kLabel - 3;
        while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0U) == 0x80U) --cut;  // a whole character
        label = label.substr(0, cut) + "...";
      }
      labels.push_back(std::move(label));
      rows.push_back(&r);
    }
    return std::make_pair(labels, rows);
  };
  const auto in_interval = shown_rows(interval);
  const auto in_run = shown_rows(run);
  std::size_t width = 8;
  for (const auto* part : {&in_interval, &in_run}) {
    for (const std::string& l : part->first) width = std::max(width, l.size());
  }
  const auto padded = [width](std::string s) {
    s.resize(std::max(s.size(), width), ' ');
    return s;
  };
  std::string t = "code locations (seconds)\n  " + padded("location") + "  waiting comm.   comput. calls\n";
  char buf[64];
  const auto table = [&](const auto& part, const std::string& title) {
    t += title + '\n';
    for (std::size_t k = 0; k < part.second.size(); ++k) {
      const ProfileRow& r = *part.second[k];
      std::snprintf(buf, sizeof buf, "  %-7.3g %-7.3g %-7.3g %5llu", r.waiting_s, r.communicating_s, r.computing_s,
                    static_cast<unsigned long long>(r.calls));
      t += "  " + padded(part.first[k]) + buf + '\n';
    }
    if (part.second.empty()) t += "  none\n";
  };
  table(in_interval, "this interval (" + format_seconds(interval.from_s) + " .. " + format_seconds(interval.to_s) + ")");
  table(in_run, "whole run");
  return t;
}

}  // namespace kanoko::profile
