#include <iostream>

#include "src/base/error.hpp"
#include "src/cli/options.hpp"
#include "src/share/serve.hpp"

namespace kanoko::cli {

int cmd_serve(const Args& args) {
  const CommandSpec spec{
      "serve", "RUN.kntj [--port N] [--bind ADDR]",
      "Serves the page of `kanoko share` over HTTP for runs too big for one file or still being\n"
      "simulated: the browser reads the run's frames in blocks (HTTP range requests) as it plays,\n"
      "and follows a run that `kanoko simulate` is still writing. Listens on 127.0.0.1 unless\n"
      "--bind says otherwise, read-only, and serves nothing but the page (/), the run\n"
      "(/run.kntj), the sound cues of the frames served so far (/cues.json) and the run's traffic\n"
      "(/traffic.json, /partners.json). From a cluster: ssh -L 8080:127.0.0.1:8080 HOST, then\n"
      "open http://127.0.0.1:8080/ on the laptop. Ctrl-C stops it. Details: docs/share.md.",
      "  kanoko serve ring.kntj\n"
      "  kanoko serve big.kntj --port 9000\n"};
  po::options_description options("Options");
  std::string run;
  share::ServeOptions serve;
  options.add_options()("run", po::value(&run)->required(), "trajectory file (.kntj), complete or being simulated")(
      "port", po::value<int>(&serve.port)->default_value(serve.port), "TCP port (0: any free port)")(
      "bind", po::value(&serve.bind)->default_value(serve.bind),
      "address to listen on (127.0.0.1: this machine only; 0.0.0.0: every network)")(
      "labels", po::value<std::size_t>(&serve.page.max_labels)->default_value(serve.page.max_labels),
      "draw name labels when the run has at most this many bodies");
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;
  if (serve.port < 0 || serve.port > 65535) {
    throw InputError(FileLoc{"--port"}, "expected a port from 0 to 65535, got " + std::to_string(serve.port));
  }
  serve.page.title = std::filesystem::path(run).filename().string();
  share::RunServer server(run, serve);
  std::cout << "kanoko serve: serving " << run << " at http://" << serve.bind << ':' << server.port()
            << "/ (Ctrl-C stops; from another machine: ssh -L " << server.port() << ':' << serve.bind << ':'
            << server.port() << " HOST)" << std::endl;
  server.serve();
  return 0;
}

}  // namespace kanoko::cli
