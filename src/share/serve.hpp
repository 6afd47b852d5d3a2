// `kanoko serve`: the shared page over HTTP for runs too big for one file, or still being
// simulated. Serves exactly two things: the page at / and the run's bytes at /run.kntj (range
// requests: the page reads the trajectory layout block by block). Only blocks that verify are
// served; a run still being written is followed as it grows and when it is renamed into place.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "src/share/share.hpp"

namespace kanoko::share {

struct ServeOptions {
  std::string bind = "127.0.0.1";  ///< address to listen on
  int port = 8080;                 ///< 0: any free port
  PageOptions page;                ///< labels, sound options, title
};

/// The path the server reads for `run`: `run` itself, or while it is being simulated the newest
/// `run.tmp-<pid>` beside it (trajectory::Writer's temporary file). Throws InputError naming
/// `run` when there is neither.
[[nodiscard]] std::filesystem::path run_being_served(const std::filesystem::path& run);

class RunServer {
 public:
  /// Opens the run (partial runs accepted), builds the page and binds the port. Throws InputError
  /// for a bad run and for a port that cannot be bound ("in use").
  RunServer(std::filesystem::path run, const ServeOptions& options);
  ~RunServer();
  RunServer(const RunServer&) = delete;
  RunServer& operator=(const RunServer&) = delete;

  /// The bound port (the one chosen when options.port was 0).
  [[nodiscard]] int port() const;
  /// Serves until stop() or a signal (src/base/interrupt.hpp); then check_interrupt() throws.
  void serve();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kanoko::share
