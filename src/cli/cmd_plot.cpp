// kanoko plot: one companion view (space-time diagram, communication matrix, Kiviat, utilisation,
// summary table) drawn headless to a PNG or SVG, for reports and CI.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <string>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/output_target.hpp"
#include "src/base/suggest.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/options.hpp"
#include "src/cli/run_setup.hpp"
#include "src/trajectory/trajectory.hpp"
#include "src/views/statistics.hpp"
#include "src/views/draw.hpp"
#include "src/views/run_source.hpp"
#include "src/views/trace_index.hpp"
#include "src/trace/readers.hpp"
#include "src/views/location_colours.hpp"
#include "src/views/view.hpp"

namespace kanoko::cli {

namespace {

std::string view_help() {
  std::string text = "Views:\n";
  for (const auto& v : views::view_registry()) {
    std::string name = v.name;
    name.resize(std::max<std::size_t>(name.size(), 13), ' ');
    text += "  " + name + v.description + '\n';
  }
  return text;
}

// "800x500" → width, height.
void read_size(const std::string& text, int& width, int& height) {
  const std::size_t x = text.find('x');
  const auto number = [&](std::size_t from, std::size_t to, int& out) {
    const char* first = text.data() + from;
    const char* last = text.data() + to;
    const auto [end, ec] = std::from_chars(first, last, out);
    return from < to && ec == std::errc{} && end == last;
  };
  if (x == std::string::npos || !number(0, x, width) || !number(x + 1, text.size(), height)) {
    throw InputError(FileLoc{"--size"}, "expected WIDTHxHEIGHT in pixels (e.g. 800x500), got '" + text + "'");
  }
}

double finite_option(const po::variables_map& vm, const char* name) {
  const double v = vm[name].as<double>();
  if (!std::isfinite(v)) throw InputError(FileLoc{std::string("--") + name}, "expected a finite number of seconds");
  return v;
}

std::vector<std::string> name_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// "A:B" → a < b, both finite; InputError naming `option` otherwise.
void read_range(const std::string& text, const char* option, const char* example, double& a, double& b) {
  const std::size_t colon = text.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    std::size_t used0 = 0;
    std::size_t used1 = 0;
    a = std::stod(text.substr(0, colon), &used0);
    b = std::stod(text.substr(colon + 1), &used1);
    if (used0 != colon || used1 != text.size() - colon - 1) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw InputError(FileLoc{option}, std::string("expected ") + example + ", got '" + text + "'");
  }
  if (!(b > a) || !std::isfinite(a) || !std::isfinite(b)) {
    throw InputError(FileLoc{option}, "the range must end after it starts, got '" + text + "'");
  }
}

}  // namespace

int cmd_plot(const Args& args) {
  const CommandSpec spec{
      "plot",
      "VIEW RUN.kntj|TRACE [-o OUT.png|OUT.svg] [--json OUT.json] [--size WxH] [--time T] [--select ENTITY] "
      "[--window T0:T1] [--entities E0:E1] [--interval S] [--cumulative] [--bytes] [--trace PATH]",
      "Draws one companion view of a run without a display. RUN is a trajectory from 'kanoko\n"
      "simulate' (its trace is found from the path recorded in it, or next to the run) or a trace\n"
      "file itself. The trace is indexed in one streaming pass; the space-time diagram draws what\n"
      "the pixels can show (each pixel mixes the state colours by their time in it, entities\n"
      "beyond the pixel rows share rows, and more than 2000 messages become a density of message\n"
      "ends per pixel), so big runs stay fast; every view has a legend. The replay cursor is\n"
      "--time (default: end of the run); the matrix and the Kiviat\n"
      "show the current interval: for a run, its mapping's interval holding the cursor (as the\n"
      "viewer's inspect panel and 'kanoko export'); for a bare trace, or with --interval S, the S\n"
      "seconds ending at the cursor (default a twentieth of the run); with --cumulative,\n"
      "everything up to it. Each entity's time splits into computing (busy), communicating,\n"
      "waiting (idle) and no state, as the simulation counts it (docs/statistics.md): by the run's\n"
      "mapping's state lists, else the format's; --busy-states and --idle-states replace those\n"
      "lists. Time in no state is not waiting (it is computing when the trace has states but none\n"
      "computes). --json writes the numbers the views draw (the summary's split and traffic, the\n"
      "current interval's split and traffic; seconds, fractions 0..1, bytes). Outputs are\n"
      "written atomically.\n\n" +
          view_help(),
      "  kanoko plot spacetime ring.kntj -o ring-spacetime.png\n"
      "  kanoko plot matrix ring.kntj -o matrix.svg --cumulative --bytes\n"
      "  kanoko plot kiviat traces/fib22-ring.kntr -o kiviat.png --time 1.5 --interval 0.1\n"
      "  kanoko plot spacetime run.kntj -o zoom.png --window 1.0:1.2 --select pe3 --size 1600x600\n"
      "  kanoko plot spacetime traces/smpi/late4-locations.trace -o late.png --colour-by location\n"
      "  kanoko plot summary run.kntj --json summary.json --time 1.0\n"

      "  kanoko plot matrix big.kntj -o block.png --entities 128:256\n"};

  std::string view_name;
  std::string input;
  std::string output;
  std::string json_output;
  std::string size_text = "800x500";
  std::string select;
  std::string window;
  std::string entities;
  std::string trace_override;
  std::string format = "auto";
  std::string busy;
  std::string idle;
  bool cumulative = false;
  bool bytes = false;
  std::string colour_by = "class";
  po::options_description options("Options");
  options.add_options()("view", po::value<std::string>(&view_name)->required(), "the view to draw (first argument)")(
      "run", po::value<std::string>(&input)->required(), "trajectory or trace file (second argument)")(
      "output,o", po::value<std::string>(&output), "image to write: .png or .svg")(
      "json", po::value<std::string>(&json_output), "numbers the views draw, as JSON (seconds, fractions, bytes)")(
      "size", po::value<std::string>(&size_text), "size in pixels, WIDTHxHEIGHT (default 800x500)")(
      "time", po::value<double>(), "replay cursor, trace seconds (default: end of the run)")(
      "select", po::value<std::string>(&select), "entity to highlight, by name or index")(
      "window", po::value<std::string>(&window), "time span of the space-time and utilisation views, T0:T1")(
      "entities", po::value<std::string>(&entities),
      "entity range shown, E0:E1 (first included, last excluded; space-time rows, matrix, kiviat)")(
      "interval", po::value<double>(),
      "current interval in seconds, ending at --time (matrix, kiviat; default: the run's interval)")(
      "cumulative", po::bool_switch(&cumulative), "matrix and kiviat: from the start to --time")(
      "bytes", po::bool_switch(&bytes), "matrix: bytes instead of message counts")(
      "colour-by", po::value<std::string>(&colour_by)->default_value("class"),
      "spacetime: colour states by their class (busy, overhead, idle) or by code location (the 8 first of "
      "`kanoko profile`, a legend names them; docs/views.md)")(
      "trace", po::value<std::string>(&trace_override), "the trace to use instead of the one the run records")(
      "format", po::value<std::string>(&format), "trace format: auto (default), native, paje, ...")(
      "busy-states", po::value<std::string>(&busy), "comma-separated state names counted as busy")(
      "idle-states", po::value<std::string>(&idle), "comma-separated state names counted as idle");
  po::positional_options_description positional;
  positional.add("view", 1).add("run", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  const auto view = views::make_view(view_name, "kanoko plot");
  if (colour_by != "class" && colour_by != "location") {
    throw InputError(FileLoc{"--colour-by"}, "expected class or location, got '" + colour_by + "'");
  }
  if (colour_by == "location" && view_name != "spacetime") {
    throw InputError(FileLoc{"--colour-by"}, "colours by location apply to the spacetime view, not " + view_name);
  }
  if (output.empty() && json_output.empty()) {
    throw InputError(FileLoc{"kanoko plot"}, "nothing to write: give -o OUT.png|OUT.svg, --json OUT.json or both");
  }
  int width = 0;
  int height = 0;
  read_size(size_text, width, height);
  if (width < 16 || height < 16 || width > views::kMaxExportSide || height > views::kMaxExportSide) {
    throw InputError(FileLoc{"--size"}, "width and height must be 16 to " + std::to_string(views::kMaxExportSide) +
                                            " pixels, got " + size_text);
  }
  const std::filesystem::path trace = views::trace_for(input, trace_override);
  note_command_input(input);
  note_command_input(trace);
  if (!output.empty()) (void)checked_output_target(output);  // before the (slow) index
  if (!json_output.empty()) (void)checked_output_target(json_output);

  views::IndexOptions index_options = view_index_options(input, trace, format);
  if (vm.count("busy-states") != 0U) index_options.rules.busy = name_list(busy);
  if (vm.count("idle-states") != 0U) index_options.rules.idle = name_list(idle);
  const views::TraceIndex index = views::build_trace_index(trace, index_options, format);
  note_command_inputs(trace::trace_files(trace, format));  // a Paraver .pcf/.row, OTF2 archive files

  views::ViewState state = views::default_view_state(index);
  if (views::is_run_file(input)) {
    const trajectory::Reader run(input);
    state = views::default_view_state(index, run.meta().interval_s, run.meta().trace_begin_s);
  }
  if (colour_by == "location") {
    state.location_colours = std::make_shared<const views::LocationColouring>(views::read_location_colouring(trace, format));
  }
  state.cumulative = cumulative;
  state.bytes = bytes;
  if (vm.count("time") != 0U) {
    state.time_s = finite_option(vm, "time");
    const double slack = 1e-9 * std::max(1.0, index.span_s());
    if (state.time_s < index.begin_s - slack || state.time_s > index.end_s + slack) {
      throw InputError(FileLoc{"--time"}, "time " + std::to_string(state.time_s) + " s is outside the run, which goes from " +
                                              std::to_string(index.begin_s) + " s to " + std::to_string(index.end_s) + " s");
    }
  }
  if (vm.count("interval") != 0U) {
    state.interval_s = finite_option(vm, "interval");
    if (state.interval_s <= 0) throw InputError(FileLoc{"--interval"}, "the interval must be positive");
    state.run_intervals = false;
  }
  if (!window.empty()) read_range(window, "--window", "T0:T1 in seconds (e.g. 1.0:1.5)", state.window_t0_s, state.window_t1_s);
  if (!entities.empty()) {
    read_range(entities, "--entities", "E0:E1 entity indices (e.g. 0:64)", state.entity0, state.entity1);
    if (state.entity0 < 0 || state.entity1 > static_cast<double>(index.entity_count())) {
      throw InputError(FileLoc{"--entities"}, "the range " + entities + " is outside the entities, 0:" +
                                                  std::to_string(index.entity_count()));
    }
  }
  if (!select.empty()) {
    state.selection.entity = index.find_entity(select);
    if (state.selection.entity < 0) {
      std::vector<std::string> names;
      for (const auto& e : index.entities) names.push_back(e.name);
      throw InputError(FileLoc{"--select"}, "no entity '" + select + "' in " + trace.string() +
                                                did_you_mean(select, names) + " (give a name or an index from 0 to " +
                                                std::to_string(index.entity_count()) + " - 1)");
    }
  }
  if (!json_output.empty()) {
    AtomicOutputFile out(json_output);
    out.write(views::statistics_json(index, state));
    out.commit();
    std::cout << "wrote " << json_output << " (statistics at t = " << state.time_s << " s)\n";
  }
  if (output.empty()) return 0;
  views::export_view(*view, index, state, output, width, height);
  std::cout << "wrote " << output << " (" << view_name << ", " << width << 'x' << height << ", t = " << state.time_s
            << " s, " << index.entity_count() << " entities, " << index.message_count << " messages from "
            << trace.string() << ")\n";
  return 0;
}

}  // namespace kanoko::cli
