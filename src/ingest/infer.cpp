#include "src/ingest/infer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "src/base/progress.hpp"
#include "src/base/suggest.hpp"
#include "src/ingest/schema.hpp"
#include "src/mapping/edit.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::ingest {

const std::vector<PurposeInfo>& purposes() {
  static const std::vector<PurposeInfo> kPurposes = {
      {Purpose::Balance, "balance", "is the work evenly spread over the ranks?",
       "Mass follows the time each rank computes, interval by interval, and the ranks that talk are pulled "
       "together. A balanced program moves as one body, evenly. An overloaded rank is heavy: it lags, moves "
       "least and drags its neighbours' springs; an idle rank is light and jittery. Colour: computing fraction."},
      {Purpose::Communication, "communication", "who talks to whom, and how much?",
       "All ranks weigh the same; communication pulls pairs together in proportion to what they exchange. "
       "The layout settles into the program's communication graph: clusters of ranks that talk among "
       "themselves, hubs that everyone talks to (a master, a root of collectives), isolated ranks."},
      {Purpose::Waiting, "waiting", "where is time lost blocked in MPI?",
       "Pulls act on the sender only (the paper's asymmetric force), mass follows computing time, and "
       "colour and size show the fraction of time spent waiting in MPI (receives, waits, barriers, "
       "collectives). Late senders leave their receivers large and bright; a rank that everybody waits for "
       "is heavy and dark at the centre of the pulls."},
      {Purpose::Placement, "placement", "does the rank-to-host placement fit the communication?",
       "Springs are the platform's interconnect; communication pulls against them. When heavily "
       "communicating ranks sit far apart on the platform, their pulls stretch the springs: strain and "
       "lopsided motion show a bad placement. Needs a trace that declares its platform (SimGrid: "
       "tracing/platform:yes); otherwise the observed communication graph stands in for it."},
  };
  return kPurposes;
}

const PurposeInfo& find_purpose(const std::string& name, const FileLoc& where) {
  std::vector<std::string> names;
  for (const PurposeInfo& p : purposes()) {
    if (name == p.name) return p;
    names.emplace_back(p.name);
  }
  std::string valid;
  for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
  throw InputError(where, "unknown purpose '" + name + "'" + did_you_mean(name, names) + "; valid: " + valid);
}

namespace {

/// Undirected whole-run totals per pair, in the force's quantity.
std::vector<double> pair_amounts(const TraceSurvey& s, bool bytes) {
  std::map<std::pair<trace::EntityIndex, trace::EntityIndex>, double> total;
  for (const PairTotal& p : s.pairs) {
    total[{std::min(p.src, p.dst), std::max(p.src, p.dst)}] += bytes ? p.bytes : static_cast<double>(p.messages);
  }
  std::vector<double> out;
  out.reserve(total.size());
  for (const auto& kv : total) out.push_back(kv.second);
  return out;
}

/// The threshold below which a pair is rare: a tenth of the 90th percentile of the pairs' totals.
/// Collectives implemented by point-to-point messages and the odd control message add many small
/// pairs; the program's own pattern carries the bulk.
double rare_threshold(std::vector<double> amounts) {
  if (amounts.empty()) return 0;
  std::sort(amounts.begin(), amounts.end());
  const auto at = static_cast<std::size_t>(0.9 * static_cast<double>(amounts.size() - 1));
  return 0.1 * amounts[at];
}

}  // namespace

InferredMapping infer_mapping(const TraceSurvey& s, const InferOptions& o) {
  InferredMapping out;
  const std::string format = s.read.format;
  const std::size_t n = s.entities.size();
  if (n == 0) {
    throw InputError(FileLoc{s.path}, trace::no_entities_message(format) + "; check that it is a complete " +
                                          (format.empty() ? std::string("trace") : format + " trace"));
  }
  const PurposeInfo& purpose = purposes()[static_cast<std::size_t>(o.purpose)];
  std::ostringstream t;
  auto warn = [&out](const std::string& w) { out.warnings.push_back(w); };

  // What the trace holds.
  const bool has_messages = !s.pairs.empty();
  const bool has_sizes = s.messages_with_bytes > 0;
  const bool bytes = has_sizes;
  std::size_t platform_links = 0;
  for (const trace::Link& l : s.links) platform_links += l.a != l.b ? 1 : 0;
  trace::StateClassifier classify;
  {
    StateDefaults d = default_states(format);
    classify = trace::StateClassifier(d.computing, d.communicating, d.idle);
  }
  double computing_s = 0, communicating_s = 0, waiting_s = 0;
  for (const auto& [name, total] : s.states) {
    switch (classify.classify(name)) {
      case trace::StateCategory::Computing: computing_s += total.seconds; break;
      case trace::StateCategory::Communicating: communicating_s += total.seconds; break;
      case trace::StateCategory::Idle: waiting_s += total.seconds; break;
      case trace::StateCategory::None: break;
    }
  }
  // Without computing states, time outside the states (the MPI calls) counts as computing.
  const bool gaps_compute = computing_s == 0 && (communicating_s > 0 || waiting_s > 0);
  const bool has_computing = computing_s > 0 || gaps_compute;
  const bool has_samples = s.load_samples > 0;

  t << "# Kanoko mapping inferred from " << s.path << " (" << (format.empty() ? "unknown" : format) << " trace)\n"
    << "# for the purpose \"" << purpose.name << "\": " << purpose.question << "\n#\n";
  {
    std::istringstream words(purpose.look_for);
    std::string word, line = "#";
    while (words >> word) {
      if (line.size() + word.size() + 1 > 96) {
        t << line << '\n';
        line = "#";
      }
      line += " " + word;
    }
    t << line << "\n#\n";
  }
  t << "# The trace: " << n << " entities, " << s.messages << " messages"
    << (has_sizes ? " with sizes" : s.messages > 0 ? " without sizes" : "") << ", " << s.state_count << " states, "
    << s.load_samples << " load samples, " << s.collectives << " collective operations, " << platform_links
    << " platform links, over " << format_seconds(s.end_s) << ".\n"
    << "# Time in states (all entities, format defaults of docs/trace-formats.md): computing "
    << format_seconds(computing_s) << ", communicating " << format_seconds(communicating_s) << ", waiting "
    << format_seconds(waiting_s) << ".\n"
    << "# Edit any value; `kanoko check THIS.toml --trace TRACE` reports problems with their location.\n\n";

  // [simulation]: time and forces calibrate themselves.
  t << "[simulation]\n"
    << "# A few hundred intervals whatever the run's duration (20 ms or 30 s): about two events per\n"
    << "# entity and interval, 200 to 1000. Write a number of trace seconds, or intervals = N, instead.\n"
    << "interval = \"auto\"\n"
    << "# Friction, the communication gain, the springs' stiffness, the repulsion and the step are set\n"
    << "# from the trace by the energy argument (kanoko suggest explains it), relative to the interval\n"
    << "# and the body spacing, so the motion stays readable whatever the message counts, sizes and\n"
    << "# durations. A value written here is kept as written.\n"
    << "calibrate = \"auto\"\n\n";

  if (o.write_window && !o.window.whole()) {
    t << "[trace]\n# Only this time window (trace seconds) is simulated; calibration follows it.\n";
    if (o.window.from_s != 0) t << "from = " << mapping::toml_float(o.window.from_s) << '\n';
    if (std::isfinite(o.window.to_s)) t << "to = " << mapping::toml_float(o.window.to_s) << '\n';
    t << '\n';
  }

  // Springs: the platform when it joins the bodies, else the observed communication graph.
  std::string springs_why;
  bool springs = false;
  t << "[springs]\n";
  if (platform_links > 0) {
    t << "# The platform graph the trace declares (" << platform_links << " links between entities).\n"
      << "topology = \"links\"\n";
    springs = true;
    springs_why = "platform springs";
  } else if (has_messages && o.purpose != Purpose::Communication) {
    const std::vector<double> amounts = pair_amounts(s, bytes);
    const double threshold = rare_threshold(amounts);
    const auto kept = static_cast<std::size_t>(
        std::count_if(amounts.begin(), amounts.end(), [&](double a) { return a >= threshold; }));
    t << "# No platform graph in the trace: a spring joins every pair that exchanged at least a tenth of\n"
      << "# what the busiest pairs exchanged (90th percentile), so rare pairs do not tie the layout:\n"
      << "# " << kept << " of " << amounts.size() << " communicating pairs.\n"
      << "topology = \"trace\"\n"
      << (bytes ? "min_bytes = " : "min_messages = ") << mapping::toml_float(threshold > 0 ? threshold * 0.999 : 0.0) << '\n';
    springs = true;
    springs_why = "springs on " + std::to_string(kept) + " communicating pairs";
    if (o.purpose == Purpose::Placement) {
      warn("purpose \"placement\" compares the platform with the communication, but " + s.path +
           " declares no platform graph; the observed communication graph stands in for it (SimGrid: trace with "
           "--cfg=tracing/platform:yes)");
    }
  } else if (has_messages) {
    t << "# Purpose \"communication\": no springs; the pulls alone arrange the ranks.\n"
      << "topology = \"none\"\n";
    springs_why = "no springs";
  } else {
    t << "# The trace has no messages between entities and declares no platform: no springs.\n"
      << "topology = \"none\"\n";
    springs_why = "no springs";
  }
  t << '\n';

  t << "[bodies]\n";
  if (springs) {
    t << "# Bodies start in the springs' own layout (a lattice when the graph is one, else a graph\n"
      << "# embedding): ranks that communicate start close.\n";
  } else if (has_messages) {
    t << "# Bodies start on a sphere, about 1 apart; the pulls gather those that communicate.\n"
      << "placement = \"sphere\"\n";
  } else {
    t << "placement = \"sphere\"\n";
  }
  t << "size = 1.0\n\n";

  // Mass: load.
  t << "[mass]\n";
  std::string mass_why;
  if (o.purpose == Purpose::Communication) {
    t << "# Purpose \"communication\": every rank weighs the same, so only traffic shapes the picture.\n"
      << "base = 1.0\nload_gain = 0.0\n";
    mass_why = "constant mass";
  } else if (has_computing) {
    t << "# Mass follows the fraction of each interval spent computing: m = 1 + 9 x busy, so a rank\n"
      << "# that computes all the time is ten times heavier than an idle one ("
      << (gaps_compute ? std::string("no computing states: the time outside MPI calls counts as computing")
                       : "computing states: " + format_seconds(computing_s) + " in all")
      << ").\n"
      << "# The load is averaged over the last 20 intervals, so mass follows the program's load rather\n"
      << "# than flickering between its compute and communication phases.\n"
      << "base = 1.0\nload_gain = 9.0\nload = \"busy\"\nsmoothing = 20\n";
    mass_why = "mass from computing time";
  } else if (has_samples) {
    t << "# The trace has no computing states; mass follows its " << s.load_samples << " load samples.\n"
      << "base = 1.0\nload_gain = 9.0\nload = \"samples\"\nsmoothing = 20\n";
    mass_why = "mass from load samples";
  } else {
    t << "# The trace has neither computing states nor load samples: every mass is 1.\n"
      << "base = 1.0\nload_gain = 0.0\n";
    mass_why = "constant mass (no load in the trace)";
    if (o.purpose == Purpose::Balance || o.purpose == Purpose::Waiting) {
      warn("mass cannot follow load: " + s.path + " has no computing states and no load samples, so every body "
           "weighs the same (SimGrid: trace with --cfg=tracing/smpi/computing:yes; or give [trace] load_variable)");
    }
  }
  t << '\n';

  if (springs || has_messages || n > 1) {
    t << "[forces.repulsion]\n# Weak: only keeps bodies apart (calibrated).\n\n";
  }
  if (has_messages || s.collectives > 0) {
    t << "[forces.communication]\n";
    if (o.purpose == Purpose::Waiting) {
      t << "# The sender is pulled towards its receiver (direction matters for waiting).\nmode = \"sender\"\n";
    } else {
      t << "# Both ends of every exchange are pulled together.\nmode = \"symmetric\"\n";
    }
    if (bytes) {
      t << "# The trace records message sizes (" << s.messages_with_bytes << " of " << s.messages
        << " messages): pulls follow the bytes of each interval.\nquantity = \"bytes\"\n";
    } else {
      t << "# The trace records no message sizes (SimGrid writes them only with\n"
        << "# --cfg=tracing/smpi/display-sizes:yes): pulls follow message counts.\nquantity = \"messages\"\n";
    }
    t << '\n';
  } else {
    warn("no communication force: " + s.path + " has no messages between entities" +
         (s.messages > 0 ? " (only " + std::to_string(s.self_messages) + " messages to self)" : std::string()) +
         "; the picture shows load only");
  }
  t << "[forces.friction]\n# Calibrated: bodies settle within a few intervals of a change of forcing.\n\n";

  t << "[visual]\n";
  if (o.purpose == Purpose::Waiting) {
    t << "# Colour and size: fraction of the interval spent waiting in MPI.\ncolour = \"idle\"\ncolour_range = [0.0, 1.0]\n"
      << "scale = \"1 + idle\"\n";
  } else if (o.purpose == Purpose::Communication) {
    t << "# Colour: the default (load).\n";
  } else {
    t << "# Colour: fraction of the interval spent computing.\ncolour = \"busy\"\ncolour_range = [0.0, 1.0]\n";
  }
  // Names stay readable up to a few dozen bodies; beyond that they cover the picture (the viewer's
  // inspect panel and --labels still show them).
  constexpr std::size_t kMostLabelledBodies = 64;
  if (n <= kMostLabelledBodies) {
    t << "labels = \"name\"\n";
  } else {
    t << "# No labels: " << n << " names would cover the picture (labels = \"name\" shows them).\nlabels = \"none\"\n";
  }

  if (n == 1) warn("the trace has one entity: a single body cannot show balance or communication between ranks");
  out.text = t.str();
  out.summary = std::string("inferred mapping (purpose ") + purpose.name + "): " + std::to_string(n) + " bodies, " +
                springs_why + ", " + mass_why + ", pulls by " +
                (has_messages || s.collectives > 0 ? (bytes ? std::string("bytes") : std::string("message counts"))
                                                   : std::string("nothing (no messages)")) +
                ", interval and forces calibrated";
  return out;
}

InferredMapping infer_mapping(const std::filesystem::path& trace, const InferOptions& o) {
  const TraceSurvey s = survey_trace(trace, o.format, trace::ReaderOptions{}, o.window, o.keep_events_bytes);
  return infer_mapping(s, o);
}

}  // namespace kanoko::ingest
