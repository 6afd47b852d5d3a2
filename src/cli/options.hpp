// Shared Boost.Program_options handling for subcommands: --help, unknown options rejected,
// positional arguments, and errors turned into one-line messages.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "src/cli/commands.hpp"

namespace kanoko::cli {

namespace po = boost::program_options;

/// Describes one subcommand for --help: usage line, one-paragraph summary, options, examples.
struct CommandSpec {
  std::string name;      ///< "simulate"
  std::string usage;     ///< "TRACE --mapping MAP -o RUN"
  std::string summary;   ///< what it does, one paragraph
  std::string examples;  ///< lines of examples, may be empty
};

/// Parses `args` into `vm`. Adds --help to `options`. Returns false if help was printed (the
/// caller returns 0). Throws InputError with a clear message for bad options.
bool parse_command_line(const CommandSpec& spec, po::options_description options,
                        const po::positional_options_description& positional, const Args& args,
                        po::variables_map& vm);

}  // namespace kanoko::cli
