#include <cstdio>
#include <iostream>

#include "integrators/integrator.hpp"
#include "src/base/progress.hpp"
#include "src/cli/options.hpp"
#include "src/sim/simulate.hpp"

namespace kanoko::cli {

int cmd_simulate(const Args& args) {
  std::string integrators_text;
  for (const auto& e : integrators::registry()) {
    integrators_text += "  " + e.name + " (order " + std::to_string(e.order) + ", " +
                        std::to_string(e.evaluations_per_step) + " force evaluations per step): " + e.description + "\n";
  }
  const CommandSpec spec{
      "simulate", "TRACE --mapping MAP -o RUN.kntj [--force]",
      "Reads TRACE (Kanoko native .kntr), bins it into the mapping's intervals, builds the physical\n"
      "system the mapping describes, integrates its equations of motion with a fixed step and writes\n"
      "the trajectory file RUN (docs/trajectory-format.md). If RUN already exists and was made from the\n"
      "same trace, mapping and integrator, it is reused (use --force to recompute). On any error, or\n"
      "Ctrl-C, no output file is left behind and a previous RUN is untouched.\n\n"
      "Integrators (choose with 'integrator' in [simulation] of the mapping):\n" + integrators_text,
      "  kanoko simulate traces/fib22-ring.kntr --mapping mappings/paper-fibonacci.toml -o ring.kntj\n"
      "  kanoko simulate traces/mesh-skewed-light.kntr --mapping mappings/paper-mesh.toml -o mesh.kntj\n"};
  po::options_description options("Options");
  std::string trace, mapping, output;
  options.add_options()("trace", po::value(&trace)->required(), "trace file (.kntr)")(
      "mapping,m", po::value(&mapping)->required(), "mapping file (.toml)")(
      "output,o", po::value(&output)->required(), "trajectory file to write (.kntj)")(
      "force,f", po::bool_switch(), "recompute even when the cached trajectory matches")(
      "quiet,q", po::bool_switch(), "no progress bar or summary");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  sim::SimulateOptions so;
  so.trace = trace;
  so.mapping = mapping;
  so.output = output;
  so.force = vm["force"].as<bool>();
  const bool quiet = vm["quiet"].as<bool>();
  so.progress = !quiet;
  const sim::SimulateSummary s = sim::simulate(so);
  if (quiet) return 0;
  if (s.reused) {
    std::cerr << "kanoko simulate: " << output
              << " is up to date (same trace, mapping and integrator); reusing it. Use --force to recompute.\n";
    return 0;
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "kanoko simulate: wrote %s: %zu bodies, %zu springs, %llu frames over %.3g s of trace time\n"
                "  %llu steps of dt = %.4g s, %llu force evaluations, %s wall (%.3g body-steps/s), "
                "largest speed %.3g, final energy %.4g\n",
                output.c_str(), s.bodies, s.springs, static_cast<unsigned long long>(s.frames), s.simulated_s,
                static_cast<unsigned long long>(s.steps), s.dt_s, static_cast<unsigned long long>(s.evaluations),
                format_duration(s.wall_s).c_str(),
                s.wall_s > 0 ? static_cast<double>(s.steps) * static_cast<double>(s.bodies) / s.wall_s : 0.0,
                s.max_speed, s.final_energy);
  std::cerr << line;
  return 0;
}

}  // namespace kanoko::cli
