// kanoko: turn a parallel program's trace into a physical system, simulate it, watch and hear it.
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <new>
#include <string>

#include <unistd.h>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/cli/commands.hpp"

namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  std::function<int(const kanoko::cli::Args&)> run;
};

const std::vector<Subcommand>& subcommands() {
  using namespace kanoko::cli;
  static const std::vector<Subcommand> table = {
      {"simulate", "integrate a trace + mapping into a trajectory file (cached)", cmd_simulate},
      {"check", "validate a mapping file and report every problem", cmd_check},
      {"export", "write a trajectory as CSV for other tools", cmd_export},
      {"share", "write one self-contained HTML page that plays a run in a browser", cmd_share},
      {"serve", "serve that page over HTTP for big or still-running runs (127.0.0.1)", cmd_serve},
      {"render", "draw a trajectory to a PNG, headless", cmd_render},
      {"view", "open the interactive 3-D viewer on a trajectory", cmd_view},
      {"generate", "write the paper's example programs as native traces", cmd_generate},
      {"capture", "run an MPI program with libkanoko-capture and write its trace", cmd_capture},
      {"info", "summarise a trace: format, entities, time span, counts, top talkers", cmd_info},
      {"profile", "where in the code the time goes: waiting, communicating, computing per call site", cmd_profile},
      {"plot", "draw a companion view (space-time, matrix, kiviat, ...) to PNG/SVG", cmd_plot},
      {"suggest", "propose friction, gain, springs, repulsion and dt for a trace", cmd_suggest},
      {"init", "write the mapping inferred from a trace (zero configuration), commented", cmd_init},
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "Usage: kanoko COMMAND [OPTIONS]\n\n"
         "Kanoko turns a trace of a parallel program into a physical system (nodes are bodies,\n"
         "load is mass, communication is force, the interconnect is springs), integrates it into\n"
         "a trajectory, and lets you watch it.\n\nCommands:\n";
  for (const auto& c : subcommands()) {
    out << "  " << c.name << std::string(10 - std::strlen(c.name), ' ') << c.summary << '\n';
  }
  out << "\nRun 'kanoko COMMAND --help' for the options of one command.\n"
         "Typical session:\n"
         "  kanoko simulate traces/fib22-ring.kntr --mapping mappings/paper-fibonacci.toml -o ring.kntj\n"
         "  kanoko view ring.kntj          # or: kanoko render ring.kntj -o ring.png\n";
}

/// The one line an error without a location of its own prints: the command, what went wrong and
/// what it was working on (CurrentInput), so that the input is always named.
std::string failure_line(const std::string& command, const std::string& what) {
  const std::string context = kanoko::CurrentInput::describe();
  return kanoko::message_line("kanoko " + command + ": error: " + what + (context.empty() ? "" : " (" + context + ")"));
}

/// Whether the kernel gives transparent huge pages only to memory that asks for them (mode
/// "madvise"; with "always" every large mapping gets them anyway, with "never" none does).
bool huge_pages_on_request() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  return std::getline(mode, line) && line.find("[madvise]") != std::string::npos;
}

/// Settings the runtime reads once, at a process's start, before main() can change them:
///
/// - How the force evaluation's OpenMP threads wait between parallel loops. GNU libgomp lets a
///   thread that reaches a barrier spin for up to 300 000 rounds before it sleeps; on a machine
///   whose cores are busy with other work (a shared node, a build beside the run, the viewer
///   drawing while it simulates) the spinning thread takes the core from the one it waits for. A
///   Barnes-Hut evaluation of 10 000 bodies on 2 threads took 117-130 ms spinning and 45-50 ms with
///   a short spin, and a 10 000-rank simulation 11 min 20 s against 2 min 16 s, side by side at a
///   load average of 12 on 2 cores (docs/engine-performance.md, "Threads on a busy machine").
///   libgomp reads its settings in its constructor, before main() (and libc resets the
///   environment after an executable's pre-initialisers). The commands that evaluate forces
///   (`forces`) take a short spin, GOMP_SPINCOUNT, when the user chose neither OMP_WAIT_POLICY
///   nor GOMP_SPINCOUNT.
/// - Transparent huge pages for the heap. A big trace fills gigabytes of fresh memory (the
///   recorded stream, the timeline's pairs, the run's traffic), and every 4 KiB page of it costs a
///   page fault at its first touch; on a virtual machine each is a trap to the hypervisor, and
///   `kanoko info` of a 1 GB trace spent a quarter of its time there. Where the kernel gives huge
///   pages only to memory that asks for them, glibc's malloc asks for them with the tunable
///   glibc.malloc.hugetlb=1, which the dynamic loader reads (docs/engine-performance.md, "Huge
///   pages"). It is added to GLIBC_TUNABLES unless the user's GLIBC_TUNABLES sets
///   glibc.malloc.hugetlb already (theirs wins).
///
/// So a command starts itself again, once, with what it chose. The second start puts the
/// environment back as the user gave it, so that programs it starts inherit it unchanged. If the
/// program cannot be started again, it goes on with the runtime's defaults. Nothing a command
/// computes depends on these settings, only how fast it does.
void choose_runtime_settings(char** argv, bool forces) {
  constexpr const char* kMarker = "KANOKO_RUNTIME_CHOSEN";  // what the first start set: 's' spin, 't' tunables
  constexpr const char* kUserTunables = "KANOKO_USER_GLIBC_TUNABLES";  // the user's own GLIBC_TUNABLES
  constexpr const char* kSpinCount = "10000";  // rounds (a few microseconds), then sleep in the kernel
  const auto restore = [&](const std::string& chosen) {
    if (chosen.find('s') != std::string::npos) ::unsetenv("GOMP_SPINCOUNT");
    if (chosen.find('t') != std::string::npos) {
      if (const char* user = std::getenv(kUserTunables); user != nullptr) {
        ::setenv("GLIBC_TUNABLES", user, 1);
      } else {
        ::unsetenv("GLIBC_TUNABLES");
      }
    }
    ::unsetenv(kUserTunables);
    ::unsetenv(kMarker);
  };
  if (const char* chosen = std::getenv(kMarker); chosen != nullptr) {
    restore(chosen);
    return;
  }
  std::string chosen;
  if (forces && std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr &&
      ::setenv("GOMP_SPINCOUNT", kSpinCount, 1) == 0) {
    chosen += 's';
  }
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if ((tunables == nullptr || std::strstr(tunables, "glibc.malloc.hugetlb=") == nullptr) && huge_pages_on_request()) {
    const std::string user = tunables != nullptr ? tunables : "";
    const std::string ours = (user.empty() ? "" : user + ":") + "glibc.malloc.hugetlb=1";
    if ((tunables == nullptr || ::setenv(kUserTunables, user.c_str(), 1) == 0) &&
        ::setenv("GLIBC_TUNABLES", ours.c_str(), 1) == 0) {
      chosen += 't';
    }
  }
  if (chosen.empty() || ::setenv(kMarker, chosen.c_str(), 1) != 0) {
    restore(chosen);
    return;
  }
  ::execv("/proc/self/exe", argv);
  restore(chosen);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    print_usage(std::cout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::cout << "kanoko " << KANOKO_VERSION << '\n';
    return 0;
  }
  const std::string name = argv[1];
  // capture starts the user's program; every other command may read a big trace or run.
  if (name != "capture") choose_runtime_settings(argv, name == "simulate" || name == "view" || name == "render");
  kanoko::cli::Args args(argv + 2, argv + argc);
  for (const auto& c : subcommands()) {
    if (name != c.name) continue;
    // capture stops its MPI processes itself; every other command's work can just be dropped.
    kanoko::install_interrupt_handlers(c.name, name != "capture");
    // Past `ulimit -f` a write fails with EFBIG instead of killing the process, so the error path
    // reports it and removes the temporary files (docs/outputs.md).
    std::signal(SIGXFSZ, SIG_IGN);
    try {
      return c.run(args);
    } catch (const kanoko::InputError& e) {
      std::cerr << e.what() << '\n';
      return 1;
    } catch (const kanoko::RunError& e) {
      std::cerr << failure_line(name, e.what()) << '\n';
      return 1;
    } catch (const kanoko::Interrupted& e) {
      kanoko::interrupt_reported();
      // Exit as a shell reports death by the signal (130 SIGINT, 143 SIGTERM, ...); the message
      // may go nowhere when stderr is the closed pipe that raised SIGPIPE.
      const char* abbrev = ::sigabbrev_np(e.signal());
      std::cerr << "kanoko " << name << ": interrupted (SIG" << (abbrev != nullptr ? abbrev : "?")
                << "); no output was written\n";
      return e.exit_code();
    } catch (const std::bad_alloc&) {
      std::cerr << failure_line(name, "out of memory") << '\n';
      return 1;
    } catch (const std::exception& e) {
      std::cerr << failure_line(name, e.what()) << '\n';
      return 1;
    }
  }
  std::cerr << "kanoko: unknown command '" << name << "'\n\n";
  print_usage(std::cerr);
  return 2;
}
