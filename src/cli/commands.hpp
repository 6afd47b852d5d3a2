// Subcommands of the `kanoko` executable. Each takes the arguments after its name and returns the
// process exit code. main() only dispatches; the work happens in the libraries.
#pragma once

#include <string>
#include <vector>

namespace kanoko::cli {

using Args = std::vector<std::string>;

int cmd_simulate(const Args& args);
int cmd_check(const Args& args);
int cmd_export(const Args& args);
int cmd_generate(const Args& args);
int cmd_render(const Args& args);
int cmd_view(const Args& args);
int cmd_capture(const Args& args);
int cmd_info(const Args& args);
int cmd_plot(const Args& args);
int cmd_suggest(const Args& args);
int cmd_init(const Args& args);
int cmd_share(const Args& args);
int cmd_serve(const Args& args);
int cmd_profile(const Args& args);

}  // namespace kanoko::cli
