#include "src/ingest/checks.hpp"

#include <algorithm>
#include <cmath>

#include "src/base/progress.hpp"
#include "src/mapping/edit.hpp"

namespace kanoko::ingest {

std::vector<std::string> adapt_to_trace(mapping::Mapping& m, const SelectionReport& r) {
  std::vector<std::string> out;
  const TraceSurvey& s = r.survey;
  if (m.communication && !m.communication->weight && m.communication->quantity == mapping::CommunicationQuantity::Bytes &&
      s.messages > 0 && s.messages_with_bytes == 0) {
    const std::string why = "the trace's " + std::to_string(s.messages) +
                            " messages carry no sizes (SimGrid writes them only with "
                            "--cfg=tracing/smpi/display-sizes:yes)";
    if (m.locations.count("forces.communication.quantity") != 0) {
      throw InputError(m.where("forces.communication.quantity"),
                       "quantity = \"bytes\" gives no force: " + why + "; use quantity = \"messages\"");
    }
    // In the text too, so that the run's stored mapping (and a re-simulation) says what was done.
    const std::string path = m.path;
    m = mapping::parse_mapping_text(mapping::set_value(m.text, m, "forces.communication", "quantity", "\"messages\""), path);
    out.push_back("the communication force counts messages, not bytes: " + why +
                  " (write [forces.communication] quantity = \"messages\" to say so)");
  }
  return out;
}

namespace {

/// True when every entity's value is the same in every bin.
bool constant(const std::vector<double>& values) {
  if (values.empty()) return true;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return *hi - *lo <= 1e-12 * std::max(1.0, std::fabs(*hi));
}

}  // namespace

std::vector<std::string> input_warnings(const mapping::Mapping& m, const trace::Timeline& tl, const SelectionReport& r) {
  std::vector<std::string> out;
  // Mass meant to follow load.
  if (m.mass.load_gain > 0 && !m.mass.expression) {
    const bool samples = m.mass.load == mapping::LoadSource::Samples;
    if (constant(samples ? tl.load : tl.busy_s)) {
      out.push_back(m.where("mass.load_gain").str() + ": mass is meant to follow load but stays constant: " +
                    (samples ? (tl.load_sample_count == 0 ? std::string("the trace has no load samples")
                                                          : std::string("every load sample has the same value")) +
                                   "; use load = \"busy\" (time in computing states) or name [trace] load_variable"
                             : std::string("no state counts as computing") +
                                   "; list the computing states in [trace] computing (kanoko check --trace lists them)"));
    }
  }
  // Too few intervals to animate.
  if (tl.bin_count < kFewestIntervals) {
    out.push_back(m.where("simulation.interval").str() + ": the run has only " + std::to_string(tl.bin_count) +
                  " intervals of " + format_seconds(tl.interval_s) + ", too few to animate; write interval = \"auto\" "
                  "(or intervals = 400) in [simulation]");
  }
  // Events crowded into a few intervals: usually one outlying time stamp stretches the run.
  const std::size_t few = std::max<std::size_t>(1, tl.bin_count / 100);
  const double share = r.survey.histogram.busiest_share(tl.interval_s, few);
  if (tl.bin_count >= 20 && r.survey.events() >= 100 && share >= 0.9) {
    const LastEvent& last = r.survey.last;
    // Where the trace's end was read (the outlier is normally the latest time), unless a window cuts it.
    const FileLoc& end_at = r.survey.read.end_at;
    const std::string where =
        !end_at.file.empty() && std::isinf(trace_window(m).to_s) ? ", the trace's end read at " + end_at.str() : std::string();
    out.push_back(std::to_string(static_cast<int>(std::lround(100 * share))) + " % of the events fall in " +
                  std::to_string(few) + " of the " + std::to_string(tl.bin_count) +
                  " intervals: the run is stretched by a few late events (the last, a " + last.kind + " of '" +
                  last.entity + "' at t = " + format_seconds(last.time_s) + where +
                  "); restrict the run with --to (or [trace] to) to the busy part, or fix that record");
  }
  // A platform graph asked for that the trace does not have (MPI-only SimGrid traces).
  if (m.springs.topology == mapping::SpringTopology::Links &&
      std::none_of(tl.links.begin(), tl.links.end(), [](const trace::Link& l) { return l.a != l.b; })) {
    out.push_back(m.where("springs.topology").str() + ": topology \"links\": the trace declares no platform links "
                  "between the bodies, so the springs follow the observed communication graph instead (SimGrid: "
                  "trace with --cfg=tracing/platform:yes, and make the bodies the hosts, [trace] entity_type = "
                  "\"HOST\")");
  }
  // No forcing over the whole run.
  if (m.communication && !m.communication->weight) {
    const bool bytes = m.communication->quantity == mapping::CommunicationQuantity::Bytes;
    const bool any = std::any_of(tl.pairs.begin(), tl.pairs.end(), [&](const trace::PairTraffic& p) {
      return p.src != p.dst && (bytes ? p.bytes > 0 : p.messages > 0);
    });
    if (!any) {
      out.push_back(m.where("forces.communication").str() + ": the communication force is zero over the whole run: " +
                    (tl.message_count == 0 ? std::string("the bodies exchange no messages")
                                           : std::string("no message between two bodies carries ") +
                                                 (bytes ? "bytes" : "a count")) +
                    (tl.message_count == 0 && r.survey.states.size() > 0
                         ? "; collectives recorded only as states need a trace with their messages (SimGrid: "
                           "--cfg=tracing/smpi/internals:yes)"
                         : std::string()));
    }
  }
  return out;
}

std::vector<std::string> prepare_run(mapping::Mapping& m, const trace::Timeline& tl, const SelectionReport& r) {
  std::vector<std::string> out = adapt_to_trace(m, r);
  m.simulation.interval_s = tl.interval_s;
  for (std::string& w : input_warnings(m, tl, r)) out.push_back(std::move(w));
  return out;
}

}  // namespace kanoko::ingest
