#include <iostream>

#include "models/model.hpp"
#include "src/cli/options.hpp"
#include "src/mapping/mapping.hpp"
#include "src/sim/simulate.hpp"

namespace kanoko::cli {

int cmd_check(const Args& args) {
  const CommandSpec spec{
      "check", "MAPPING [--trace TRACE]",
      "Validates a mapping file and reports every problem at once as file:line:column, with a\n"
      "suggestion for misspelt keys. With --trace, also builds the model for that trace, which checks\n"
      "that the placement and spring topology fit the trace's number of bodies.",
      "  kanoko check mappings/paper-mesh.toml\n"
      "  kanoko check mappings/paper-mesh.toml --trace traces/mesh-uniform-light.kntr\n"};
  po::options_description options("Options");
  std::string mapping, trace;
  options.add_options()("mapping", po::value(&mapping)->required(), "mapping file (.toml)")(
      "trace,t", po::value(&trace), "also check the mapping against this trace");
  po::positional_options_description positional;
  positional.add("mapping", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  const mapping::Mapping m = mapping::parse_mapping_file(mapping);
  if (trace.empty()) {
    std::cout << mapping << ": ok\n";
    return 0;
  }
  const trace::Timeline tl = sim::read_timeline(trace, m);
  const models::Model model(m, tl);
  std::cout << mapping << ": ok with " << trace << ": " << model.body_count() << " bodies, "
            << model.spring_edges().size() << " springs, " << tl.bin_count << " intervals of " << tl.interval_s
            << " s, " << tl.message_count << " messages\n";
  return 0;
}

}  // namespace kanoko::cli
