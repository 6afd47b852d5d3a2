#include "src/views/statistics.hpp"

#include <charconv>

#include "src/base/json.hpp"
#include "src/views/models.hpp"

namespace kanoko::views {

namespace {

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

// The split's seconds and fractions of the span, as JSON members.
std::string split_members(const trace::TimeSplit& s) {
  return "\"computing_s\":" + number(s.computing_s) + ",\"communicating_s\":" + number(s.communicating_s) +
         ",\"waiting_s\":" + number(s.waiting_s) + ",\"no_state_s\":" + number(s.no_state_s) +
         ",\"computing\":" + number(s.fraction(s.computing_s)) + ",\"communicating\":" +
         number(s.fraction(s.communicating_s)) + ",\"waiting\":" + number(s.fraction(s.waiting_s)) +
         ",\"no_state\":" + number(s.fraction(s.no_state_s));
}

}  // namespace

std::string statistics_json(const TraceIndex& index, const ViewState& state) {
  const SummaryModel summary = compute_summary(index, state.time_s);
  std::string o = "{\"units\":{\"time\":\"s\",\"fractions\":\"of the span, 0..1\",\"bytes\":\"B\"}";
  o += ",\"time_s\":" + number(state.time_s) + ",\"gaps_computing\":" + (index.gaps_computing ? "true" : "false");
  o += ",\n\"summary\":{\"t0_s\":" + number(summary.t0_s) + ",\"t1_s\":" + number(summary.t1_s) + ",\"entities\":[";
  for (std::size_t i = 0; i < summary.rows.size(); ++i) {
    const SummaryRow& r = summary.rows[i];
    o += std::string(i == 0 ? "\n" : ",\n") + "{\"name\":" + json_string(index.entities[r.entity].name) + "," +
         split_members(r.time) + ",\"messages_sent\":" + std::to_string(r.messages_sent) +
         ",\"messages_received\":" + std::to_string(r.messages_received) + ",\"bytes_sent\":" +
         std::to_string(r.bytes_sent) + ",\"bytes_received\":" + std::to_string(r.bytes_received) + "}";
  }
  double t0 = 0;
  double t1 = 0;
  current_interval(index, state, t0, t1);
  const KiviatModel kiviat = compute_kiviat(index, t0, t1);
  const MatrixModel matrix = compute_matrix(index, t0, t1);
  o += "]},\n\"interval\":{\"t0_s\":" + number(t0) + ",\"t1_s\":" + number(t1) + ",\"interval_s\":" +
       number(state.interval_s) + ",\"source\":\"" +
       (state.cumulative ? "cumulative" : state.run_intervals ? "run" : "view") + "\",\"entities\":[";
  for (std::size_t e = 0; e < kiviat.split.size(); ++e) {
    o += std::string(e == 0 ? "\n" : ",\n") + "{\"name\":" + json_string(index.entities[e].name) + "," +
         split_members(kiviat.split[e]) + "}";
  }
  o += "],\n\"traffic\":[";
  bool first = true;
  for (std::size_t s = 0; s < matrix.n; ++s) {
    for (std::size_t d = 0; d < matrix.n; ++d) {
      const std::uint64_t m = matrix.messages[s * matrix.n + d];
      if (m == 0) continue;
      o += std::string(first ? "\n" : ",\n") + "{\"from\":" + json_string(index.entities[s].name) +
           ",\"to\":" + json_string(index.entities[d].name) + ",\"messages\":" + std::to_string(m) +
           ",\"bytes\":" + std::to_string(matrix.bytes[s * matrix.n + d]) + "}";
      first = false;
    }
  }
  o += "]}}\n";
  return o;
}

}  // namespace kanoko::views
