// kanoko init: writes the mapping Kanoko infers from a trace, commented, for the user to edit.
#include <filesystem>
#include <iostream>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/output_target.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/options.hpp"
#include "src/cli/run_setup.hpp"
#include "src/ingest/infer.hpp"
#include "src/mapping/mapping.hpp"

namespace kanoko::cli {

int cmd_init(const Args& args) {
  std::string purposes_text;
  for (const auto& p : ingest::purposes()) purposes_text += std::string("  ") + p.name + ": " + p.question + "\n";
  const CommandSpec spec{
      "init", "TRACE [--purpose P] [--from T] [--to T] [-o MAP.toml]",
      "Surveys TRACE (entities, messages and their sizes, states, load samples, the platform graph)\n"
      "and writes the mapping that 'kanoko simulate' and 'kanoko view' infer when given no --mapping:\n"
      "a TOML file with a comment on every choice saying why it was made, to edit and pass back with\n"
      "--mapping. Without -o it prints the mapping. Warnings say what the trace lacks for the purpose\n"
      "and how to record it. Purposes (docs/zero-configuration.md):\n" +
          purposes_text,
      "  kanoko init traces/smpi/halo2d-16-torus.trace -o halo.toml\n"
      "  kanoko init run.trace --purpose waiting --from 1.5 --to 3 -o waiting.toml\n"};
  po::options_description options("Options");
  std::string trace, output;
  options.add_options()("trace", po::value(&trace)->required(), "trace file (any format of kanoko info)")(
      "purpose", po::value<std::string>()->default_value("balance"), "balance, communication, waiting or placement")(
      "from", po::value<std::string>(),
      "start of the time window, written into [trace]: trace seconds, or iter:K (the start of iteration K)")(
      "to", po::value<std::string>(), "end of the time window: trace seconds, or iter:K (the end of iteration K)")(
      "marker", po::value<std::string>(), "the marker or state name whose occurrences iter:K counts (default: detected)")(
      "format", po::value<std::string>()->default_value("auto"), "trace format: auto or a reader name")(
      "output,o", po::value(&output), "mapping file to write (default: standard output)");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  ingest::InferOptions io;
  io.purpose = ingest::find_purpose(vm["purpose"].as<std::string>(), FileLoc{"--purpose"}).purpose;
  io.format = vm["format"].as<std::string>();
  io.window = window_from(vm, trace);
  note_command_input(trace);
  if (!output.empty()) (void)checked_output_target(output);  // before the (slow) inference
  const ingest::InferredMapping inferred = ingest::infer_mapping(trace, io);
  // The text must read back as a mapping: a failure here is ours, reported with the text's line.
  (void)mapping::parse_mapping_text(inferred.text, output.empty() ? std::string("(inferred mapping)") : output);
  for (const auto& w : inferred.warnings) std::cerr << "kanoko init: warning: " << w << '\n';
  if (output.empty()) {
    std::cout << inferred.text;
    return 0;
  }
  write_file_atomically(output, inferred.text);
  std::cerr << "kanoko init: wrote " << output << ": " << inferred.summary << '\n';
  return 0;
}

}  // namespace kanoko::cli
