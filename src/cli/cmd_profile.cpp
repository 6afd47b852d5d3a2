// kanoko profile: where in the code a trace's time goes (docs/profile.md).
#include <charconv>
#include <cmath>
#include <iostream>

#include "src/base/error.hpp"
#include "src/cli/options.hpp"
#include "src/cli/run_setup.hpp"
#include "src/profile/location_view.hpp"
#include "src/profile/profile.hpp"
#include "src/trace/readers.hpp"

namespace kanoko::cli {
namespace {

/// "0-3,7" → 0 1 2 3 7.
std::vector<std::int64_t> parse_ranks(const std::string& text) {
  std::vector<std::int64_t> ranks;
  const auto bad = [&](const std::string& why) {
    throw InputError(FileLoc{"--ranks"}, "expected a list of ranks such as 0-3,7 (" + why + "), got '" + message_line(text) + "'");
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item(text.data() + pos, comma - pos);
    const std::size_t dash = item.find('-', 1);
    std::int64_t lo = 0, hi = 0;
    const auto parse = [&](std::string_view s, std::int64_t& v) {
      const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0) bad("'" + std::string(s) + "' is not a rank");
    };
    parse(item.substr(0, dash), lo);
    hi = lo;
    if (dash != std::string_view::npos) parse(item.substr(dash + 1), hi);
    if (hi < lo) bad("a range goes up");
    if (hi - lo > (1 << 24) || ranks.size() > (1U << 24U)) bad("more than 16 M ranks");
    for (std::int64_t r = lo; r <= hi; ++r) ranks.push_back(r);
    pos = comma + 1;
  }
  return ranks;
}

}  // namespace

int cmd_profile(const Args& args) {
  const CommandSpec spec{
      "profile", "TRACE [--by line|function|path] [--from T|iter:K] [--to T|iter:K] [--ranks LIST] [--json|--csv] [--top N]",
      "Prints where in the code the trace's time goes: per call site (or function, or call path) the\n"
      "calls (states there), the seconds computing, communicating and waiting (the format's state\n"
      "classes, as in `kanoko info`), the bytes sent from there, and the spread of its time over the\n"
      "ranks that spend any there (min, mean, max, imbalance = max / mean). Sorted by waiting time.\n"
      "States without a location form the row '(no location)'. A trace that records no code locations\n"
      "gets one line saying how to record them. Locations come from SimGrid SMPI's Pajé traces\n"
      "(Fname/Lnumber), Extrae's Paraver traces (callers), Score-P's OTF2 archives (instrumented\n"
      "functions) and Chrome JSON stack frames (\"sf\" or an inline \"stack\"); docs/profile.md. A mapping's\n"
      "[locations] gives its formulas and sound cues these numbers per interval (docs/mapping-language.md).",
      "  kanoko profile smpi.trace\n"
      "  kanoko profile lulesh.prv --by path --top 5\n"
      "  kanoko profile smpi.trace --from 0.5 --to 1.5 --ranks 0-3,7 --csv > profile.csv\n"
      "  kanoko profile run.prv --from iter:3 --to iter:3          # the third iteration only\n"};
  std::string formats;
  for (const std::string& f : trace::reader_names()) formats += (formats.empty() ? "" : ", ") + f;
  po::options_description options("Options");
  std::string path, format = "auto", by = "line", ranks, entity_type;
  std::size_t top = 20;
  options.add_options()("trace", po::value(&path)->required(), "trace file")(
      "by", po::value(&by)->default_value("line"),
      "one row per: line (a call site: file, line, function), function (locations without a function: their "
      "file), or path (the call site with the call path leading to it)")(
      "from", po::value<std::string>(),
      "count only time from T on (the parts of states inside the range): trace seconds, or iter:K (the start of "
      "iteration K by the trace's markers, as for simulate)")(
      "to", po::value<std::string>(), "count only time before T: trace seconds, or iter:K (the end of iteration K)")(
      "marker", po::value<std::string>(), "the marker or state name whose occurrences iter:K counts (default: detected)")(
      "ranks", po::value(&ranks), "count only these ranks, e.g. 0-3,7 (entity index when a rank is unknown)")(
      "top", po::value(&top)->default_value(20), "rows shown, the most waiting first (0: all)")(
      "json", "print one JSON object")("csv", "print CSV with a header row")(
      "format,f", po::value(&format)->default_value("auto"),
      ("trace format: auto (detected from the content) or one of " + formats).c_str())(
      "entity-type", po::value(&entity_type),
      "Pajé: container type whose containers are the ranks; Paraver: task (default) or thread")(
      "application", po::value<std::int64_t>(), "Paraver: application whose tasks are the ranks (default 1, 0 = all)");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;
  if (vm.count("json") != 0U && vm.count("csv") != 0U) throw InputError(FileLoc{"--json"}, "choose --json or --csv, not both");
  profile::ProfileOptions popts;
  if (!profile::parse_group_by(by, popts.by)) {
    throw InputError(FileLoc{"--by"}, "expected line, function or path, got '" + message_line(by) + "'");
  }
  // The same bounds as simulate's window (seconds or iter:K), by the same parser.
  const ingest::TimeWindow window = window_from(vm, path);
  if (vm.count("from") != 0U) popts.from_s = window.from_s;
  if (vm.count("to") != 0U) popts.to_s = window.to_s;
  if (!ranks.empty()) popts.ranks = parse_ranks(ranks);

  trace::ReaderOptions reader_options;
  reader_options.paje.entity_type = entity_type;
  if (!entity_type.empty()) reader_options.paraver.entity_level = entity_type;
  if (vm.count("application") != 0U) reader_options.paraver.application = vm["application"].as<std::int64_t>();
  const std::string detected = format == "auto" ? trace::detect_format(path) : format;
  const profile::ProfileOptions classes = profile::profile_defaults(detected);
  popts.computing = classes.computing;
  popts.communicating = classes.communicating;
  popts.idle = classes.idle;
  profile::ProfileBuilder builder(popts);
  const trace::ReadReport report = trace::read_trace(path, builder, detected, reader_options);
  const profile::Profile p = builder.take();
  for (const std::string& w : report.warning_lines()) std::cerr << w << '\n';
  if (report.locations == 0) {
    std::cout << profile::no_locations_message(path, report.format) << '\n';
    return 0;
  }
  if (p.rows.empty()) {
    std::cout << path << ": no states or messages of the chosen ranks in the chosen range (" << p.ranks << " ranks"
              << (vm.count("from") + vm.count("to") != 0U ? ", --from/--to" : "") << ")\n";
    return 0;
  }
  if (vm.count("json") != 0U) {
    std::cout << profile::profile_json(p, top);
  } else if (vm.count("csv") != 0U) {
    std::cout << profile::profile_csv(p, top);
  } else {
    std::cout << path << ": " << report.format << ", " << p.locations << " code locations; " << p.states_with_location
              << " of " << p.states << " states counted carry one; " << p.ranks << " ranks, " << p.from_s << " .. "
              << p.to_s << " s\n"
              << profile::profile_text(p, top);
  }
  return 0;
}

}  // namespace kanoko::cli
