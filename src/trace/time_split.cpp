#include "src/trace/time_split.hpp"

#include <algorithm>

namespace kanoko::trace {

TimeSplit split_time(double computing_s, double communicating_s, double waiting_s, double span_s,
                     bool gaps_computing) {
  const double span = std::max(0.0, span_s);
  const double slack = 1e-9 * span;
  const auto fit = [slack](double seconds, double room) { return fit_seconds(seconds, room, slack); };
  TimeSplit t;
  t.computing_s = fit(computing_s, span);  // computing_within(computing_s, span_s)
  t.communicating_s = fit(communicating_s, span - t.computing_s);
  t.waiting_s = fit(waiting_s, span - t.computing_s - t.communicating_s);
  const double rest = std::max(0.0, span - t.computing_s - t.communicating_s - t.waiting_s);
  if (gaps_computing) {
    t.computing_s += rest;
  } else {
    t.no_state_s = rest;
  }
  return t;
}

}  // namespace kanoko::trace
