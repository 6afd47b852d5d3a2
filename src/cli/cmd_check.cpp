// kanoko check: validates a mapping file; with --trace, also applies it to a trace and reports
// which entities became which bodies, what was left out, and every problem at once.
#include <iostream>
#include <sstream>

#include "models/layout.hpp"
#include "models/model.hpp"
#include "models/quantities.hpp"
#include "src/cli/options.hpp"
#include "src/cli/run_setup.hpp"
#include "src/mapping/mapping.hpp"
#include "src/ingest/checks.hpp"
#include "src/ingest/schema.hpp"
#include "src/trace/readers.hpp"

namespace kanoko::cli {

namespace {

/// At most `limit` lines of a long list, then "… and N more".
template <typename F>
void print_some(std::size_t count, std::size_t limit, const F& line) {
  const std::size_t shown = count <= limit + 2 ? count : limit;
  for (std::size_t i = 0; i < shown; ++i) line(i);
  if (shown < count) std::cout << "    … and " << count - shown << " more\n";
}

/// Applies the mapping to the trace and prints the report; collects problems into `problems`.
void check_with_trace(const mapping::Mapping& m, const std::string& trace_path, bool verbose, const sim::Budget& budget,
                      std::vector<Diagnostic>& problems) {
  ingest::SelectionReport report;
  const trace::Timeline tl = ingest::read_body_timeline(trace_path, m, &report);
  std::size_t left_out = 0;
  for (const auto& e : report.entities) left_out += e.body.empty() ? 1U : 0U;
  std::cout << "trace " << trace_path << " (" << report.format << "): " << report.entities.size() << " entities → "
            << report.bodies.size() << " bodies, " << left_out << " left out\n";
  const std::size_t limit = verbose ? 1'000'000 : 16;
  std::cout << "  matched:\n";
  std::vector<const ingest::EntityMatch*> matched, unmatched;
  for (const auto& e : report.entities) (e.body.empty() ? unmatched : matched).push_back(&e);
  print_some(matched.size(), limit, [&](std::size_t i) {
    const auto& e = *matched[i];
    std::cout << "    " << e.entity << (e.entity == e.body ? std::string() : " → " + e.body) << '\n';
  });
  if (!unmatched.empty()) {
    std::cout << "  left out:\n";
    print_some(unmatched.size(), limit, [&](std::size_t i) {
      std::cout << "    " << unmatched[i]->entity << ": " << unmatched[i]->reason << '\n';
    });
  }
  if (report.bodies.size() < report.entities.size() - left_out) {
    std::cout << "  groups:\n";
    print_some(report.bodies.size(), limit, [&](std::size_t i) {
      std::cout << "    " << report.bodies[i] << ": " << report.members[i] << " entities\n";
    });
  }
  std::cout << "  states:";
  if (report.states.empty()) std::cout << " none";
  std::cout << '\n';
  for (const auto& [name, count] : report.states) {
    const auto category = report.categories.at(name);
    std::cout << "    " << name << ": " << count << " intervals, " << ingest::category_name(category)
              << (category == trace::StateCategory::Computing ? " (busy)" : "") << '\n';
  }
  if (report.dropped_messages + report.internal_messages + report.dropped_links > 0) {
    std::cout << "  messages: " << report.dropped_messages << " dropped (an end was left out), "
              << report.internal_messages << " within one body; links dropped: " << report.dropped_links << '\n';
  }
  for (const auto& w : report.warnings) std::cout << w.loc.str() << ": warning: " << w.message << '\n';
  for (const auto& note : report.notes) std::cout << "  " << note << '\n';
  {
    // What simulate would warn about (the same checks), except the motion, which needs a run.
    mapping::Mapping adapted = m;
    try {
      for (const auto& w : ingest::prepare_run(adapted, tl, report)) std::cout << "warning: " << w << '\n';
      // The run's cost, bounded as simulate bounds it (the same function).
      std::cout << "  estimate: " << sim::bound_run(adapted, tl, report, budget).str() << '\n';
    } catch (const InputError& e) {
      for (const auto& d : e.diagnostics()) problems.push_back(d);
    }
  }

  const std::size_t n = tl.entity_count();
  if (n == 0) {
    problems.push_back({FileLoc{trace_path}, report.entities.empty() ? trace::no_entities_message(report.format)
                                                                     : "the mapping's [bodies] leave out every entity, so "
                                                                       "there are no bodies"});
    return;
  }
  try {
    const models::Layout layout = models::build_layout(m, n, &tl);
    std::cout << "  springs: " << layout.topology << ", " << layout.edges.size() << " springs; placement: "
              << layout.placement << "; order: " << to_string(m.bodies.order) << '\n';
    if (m.bodies.order != mapping::BodyOrder::Declaration) {
      print_some(n, limit, [&](std::size_t i) {
        std::cout << "    " << tl.entities[i].name << " at position " << layout.slot_of_body[i] << '\n';
      });
    }
  } catch (const InputError& e) {
    for (const auto& d : e.diagnostics()) problems.push_back(d);
    return;
  }
  // Every expression over every interval: a division by zero in interval 812 is found now.
  try {
    models::Model model(m, tl);
    models::Quantities q(m, tl, model.spring_edges());
    Eigen::VectorXd values;
    for (std::size_t bin = 0; bin < tl.bin_count; ++bin) {
      model.set_interval(bin);
      q.set_interval(bin);
      if (m.visual.colour) q.body_values(*m.visual.colour, values);
      if (m.visual.scale) q.body_values(*m.visual.scale, values);
    }
    std::cout << "  " << tl.bin_count << " intervals of " << tl.interval_s << " s, " << tl.message_count
              << " messages; every expression is finite in every interval\n";
  } catch (const InputError& e) {
    for (const auto& d : e.diagnostics()) problems.push_back(d);
  } catch (const RunError& e) {
    problems.push_back({FileLoc{}, e.what()});
  }
}

}  // namespace

int cmd_check(const Args& args) {
  const CommandSpec spec{
      "check", "MAPPING [--trace TRACE] [--verbose]",
      "Validates a mapping file and reports every problem at once as file:line:column, with a\n"
      "suggestion for misspelt keys and names. With --trace, also applies the mapping to that trace:\n"
      "which entities became which bodies (and why the others were left out), which states count\n"
      "as computing, whether the topology, placement and order fit the bodies, and whether every\n"
      "expression stays finite in every interval.\n"
      "Like simulate, it estimates the run's steps, output size and memory and reports a run beyond\n"
      "the budget (--max-output, --max-memory, --max-steps; the free space is that of the current\n"
      "folder) or a dt, settle or interval whose counts overflow, located at its key.",
      "  kanoko check mappings/paper-mesh.toml\n"
      "  kanoko check mappings/paper-mesh.toml --trace traces/mesh-uniform-light.kntr\n"};
  po::options_description options("Options");
  std::string mapping, trace;
  bool verbose = false;
  options.add_options()("mapping", po::value(&mapping)->required(), "mapping file (.toml)")(
      "trace,t", po::value(&trace), "also check the mapping against this trace")(
      "verbose,v", po::bool_switch(&verbose), "list every entity, not only the first ones");
  add_budget_options(options);
  po::positional_options_description positional;
  positional.add("mapping", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  const mapping::Mapping m = mapping::parse_mapping_file(mapping);
  const sim::Budget budget = budget_from(vm, ".");
  if (trace.empty()) {
    sim::bound_mapping(m, budget);
    std::cout << mapping << ": ok\n";
    return 0;
  }
  std::vector<Diagnostic> problems;
  check_with_trace(m, trace, verbose, budget, problems);
  if (!problems.empty()) {
    for (const auto& d : problems) {
      std::cerr << (d.loc.file.empty() ? d.message : d.str()) << '\n';
    }
    std::cerr << "kanoko check: " << problems.size() << (problems.size() == 1 ? " problem" : " problems") << '\n';
    return 1;
  }
  std::cout << mapping << ": ok with " << trace << '\n';
  return 0;
}

}  // namespace kanoko::cli
