// kanoko suggest: proposes R, k, L, β, the forcing gain and dt for a trace from the paper's
// energy argument, prints the reasoning, and can write them into a copy of the mapping.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "models/suggest.hpp"
#include "src/base/atomic_file.hpp"
#include "src/base/output_target.hpp"
#include "src/cli/commands.hpp"
#include "src/base/progress.hpp"
#include "src/cli/options.hpp"
#include "src/cli/run_setup.hpp"
#include "src/ingest/checks.hpp"
#include "src/mapping/edit.hpp"
#include "src/mapping/mapping.hpp"
#include "src/ingest/schema.hpp"

namespace kanoko::cli {

namespace {

std::string number_text(double x) { return mapping::toml_float(x, 4); }

}  // namespace

int cmd_suggest(const Args& args) {
  const CommandSpec spec{
      "suggest", "TRACE [--mapping MAP | --purpose P] [-o NEW.toml]",
      "Proposes the friction beta, the communication gain, the spring stiffness k and length L, the\n"
      "repulsion R and the step dt for this trace, from the paper's energy argument: on average the\n"
      "friction must dissipate more energy than the communication forcing puts in, at a comfortable\n"
      "mean speed (a tenth of the body spacing per relaxation time 1/beta). It measures the trace under\n"
      "the mapping (masses, pulls per body and interval, spacing, spring degrees), prints each step of\n"
      "the reasoning with the figures, and with -o writes the values into a copy of the mapping,\n"
      "keeping its comments and every other setting (values given as formulas are left alone). It also\n"
      "proposes the interval: a few hundred intervals over the run, from its event count. Without\n"
      "--mapping it works on the mapping inferred for --purpose (docs/zero-configuration.md).",
      "  kanoko suggest traces/fib22-ring.kntr --mapping mappings/paper-fibonacci.toml\n"
      "  kanoko suggest traces/mesh-skewed-light.kntr --mapping mappings/paper-mesh.toml -o tuned.toml\n"};
  po::options_description options("Options");
  std::string trace, output;
  add_mapping_options(options, false);
  options.add_options()("trace", po::value(&trace)->required(), "trace file")(
      "output,o", po::value(&output), "write a copy of the mapping with the suggested values here");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  sim::SimulateOptions so;
  choose_mapping(vm, trace, "suggest", false, so);
  mapping::Mapping m = so.mapping_text ? mapping::parse_mapping_text(*so.mapping_text, so.mapping_label)
                                       : mapping::parse_mapping_file(so.mapping);
  if (so.from_s) m.trace.from_s = so.from_s;
  if (so.to_s) m.trace.to_s = so.to_s;
  if (!output.empty()) (void)checked_output_target(output);  // before the (slow) read
  ingest::SelectionReport report;
  const trace::Timeline tl = ingest::read_body_timeline(trace, m, &report);
  for (const auto& note : report.notes) std::cerr << "kanoko suggest: " << note << '\n';
  for (const auto& w : ingest::prepare_run(m, tl, report)) std::cerr << "kanoko suggest: warning: " << w << '\n';
  const models::Suggestion s = models::suggest_parameters(m, tl);
  const std::size_t intervals = ingest::auto_interval_count(report.survey.events(), report.survey.entities.size());
  const double duration = tl.end_s - tl.begin_s;
  std::cout << "Reasoning:\n";
  for (const auto& line : s.reasoning) std::cout << "  " << line << '\n';
  const std::vector<models::SuggestedValue> values = models::suggested_values(s);
  if (!m.simulation.interval_auto && m.simulation.intervals == 0 && duration > 0) {
    // A fixed interval: propose the one "auto" would choose (a few hundred over the run).
    std::cout << "  interval: " << tl.bin_count << " intervals of " << format_seconds(tl.interval_s) << " now; "
              << intervals << " intervals (" << report.survey.events() << " events over " << tl.entity_count()
              << " bodies) make interval = " << format_seconds(duration / static_cast<double>(intervals))
              << " (or write interval = \"auto\")\n";
  }
  std::cout << "Suggested:\n";
  for (const auto& v : values) std::cout << "  [" << v.section << "] " << v.key << " = " << number_text(v.value) << '\n';
  if (output.empty()) return 0;
  const std::string text = models::write_values(m, values, 4);
  write_file_atomically(output, text);
  std::cout << "wrote " << output << '\n';
  return 0;
}

}  // namespace kanoko::cli
