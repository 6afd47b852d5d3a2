#include "src/cli/options.hpp"

#include <iostream>

#include "src/base/error.hpp"

namespace kanoko::cli {

bool parse_command_line(const CommandSpec& spec, po::options_description options,
                        const po::positional_options_description& positional, const Args& args,
                        po::variables_map& vm) {
  options.add_options()("help,h", "show this help and exit");
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    if (vm.count("help") != 0U) {
      std::cout << "Usage: kanoko " << spec.name << ' ' << spec.usage << "\n\n"
                << spec.summary << "\n\n"
                << options;
      if (!spec.examples.empty()) std::cout << "\nExamples:\n" << spec.examples;
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(FileLoc{"kanoko " + spec.name},
                     std::string(e.what()) + " (see 'kanoko " + spec.name + " --help')");
  }
  return true;
}

}  // namespace kanoko::cli
