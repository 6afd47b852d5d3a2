#include "src/ingest/survey.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace kanoko::ingest {

void EventHistogram::add(double t) {
  if (!(t >= 0) || !std::isfinite(t)) t = 0;
  // Coarsen by merging neighbours until t fits; events arrive in time order, so a coarsening
  // never has to split a bin.
  while (t >= width_s * static_cast<double>(kBins)) {
    for (std::size_t k = 0; k < kBins / 2; ++k) counts[k] = counts[2 * k] + counts[2 * k + 1];
    std::fill(counts.begin() + kBins / 2, counts.end(), 0);
    width_s *= 2;
  }
  ++counts[std::min(kBins - 1, static_cast<std::size_t>(t / width_s))];
}

double EventHistogram::busiest_share(double interval_s, std::size_t intervals) const {
  std::uint64_t total = 0;
  for (std::uint64_t c : counts) total += c;
  if (total == 0 || !(interval_s > 0)) return 0;
  // Events per interval, at the histogram's resolution (an interval narrower than a bin takes
  // the whole bin: the share is then an upper bound).
  std::map<std::uint64_t, std::uint64_t> per_interval;
  for (std::size_t k = 0; k < kBins; ++k) {
    if (counts[k] == 0) continue;
    const double mid = (static_cast<double>(k) + 0.5) * width_s;
    per_interval[static_cast<std::uint64_t>(mid / interval_s)] += counts[k];
  }
  std::vector<std::uint64_t> sizes;
  sizes.reserve(per_interval.size());
  for (const auto& kv : per_interval) sizes.push_back(kv.second);
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  std::uint64_t top = 0;
  for (std::size_t i = 0; i < std::min(intervals, sizes.size()); ++i) top += sizes[i];
  return static_cast<double>(top) / static_cast<double>(total);
}

void SurveySink::saw(double t, const char* kind, trace::EntityIndex e) {
  out_.histogram.add(t);
  if (t >= out_.last.time_s) {
    out_.last.time_s = t;
    last_kind_ = kind;
    last_entity_ = e;
  }
}

void SurveySink::on_entity(const trace::Entity& e) { out_.entities.push_back(e); }

void SurveySink::on_link(const trace::Link& l) { out_.links.push_back(l); }

void SurveySink::on_message(const trace::Message& m) {
  ++out_.messages;
  saw(m.send_s, "message", m.src);
  if (m.bytes > 0) ++out_.messages_with_bytes;
  out_.bytes += static_cast<double>(m.bytes);
  if (m.src == m.dst) {
    ++out_.self_messages;
    return;
  }
  PairTotal& p = pairs_[std::uint64_t{m.src} << 32U | m.dst];
  p.src = m.src;
  p.dst = m.dst;
  ++p.messages;
  p.bytes += static_cast<double>(m.bytes);
}

void SurveySink::on_load(const trace::LoadSample& s) {
  ++out_.load_samples;
  saw(s.time_s, "load sample", s.entity);
}

void SurveySink::on_state(const trace::StateInterval& s) {
  ++out_.state_count;
  saw(s.begin_s, "state", s.entity);
  auto it = out_.states.find(s.name);
  if (it == out_.states.end()) it = out_.states.emplace(std::string(s.name), StateTotal{}).first;
  ++it->second.count;
  if (s.end_s > s.begin_s) it->second.seconds += s.end_s - s.begin_s;
}

void SurveySink::on_collective(const trace::Collective& c) {
  ++out_.collectives;
  saw(c.begin_s, "collective", c.entity);
}

void SurveySink::on_end(double end_s) {
  out_.end_s = end_s;
  if (out_.last.time_s >= 0) {
    out_.last.kind = last_kind_;
    out_.last.entity =
        last_entity_ < out_.entities.size() ? out_.entities[last_entity_].name : std::to_string(last_entity_);
  }
  out_.pairs.clear();
  out_.pairs.reserve(pairs_.size());
  for (const auto& kv : pairs_) out_.pairs.push_back(kv.second);
  std::sort(out_.pairs.begin(), out_.pairs.end(),
            [](const PairTotal& a, const PairTotal& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; });
}

std::size_t auto_interval_count(std::uint64_t events, std::size_t entities) {
  constexpr std::uint64_t kMin = 200, kMax = 1000;
  const std::uint64_t per = 2 * std::max<std::uint64_t>(1, entities);
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(events / per, kMin, kMax));
}

TraceSurvey survey_trace(const std::filesystem::path& path, const std::string& format,
                         const trace::ReaderOptions& options, const TimeWindow& window) {
  TraceSurvey s;
  s.path = path.string();
  SurveySink sink(s);
  if (window.whole()) {
    s.read = trace::read_trace(path, sink, format, options);
  } else {
    WindowSink windowed(window, sink);
    s.read = trace::read_trace(path, windowed, format, options);
  }
  return s;
}

}  // namespace kanoko::ingest
