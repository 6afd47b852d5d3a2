// kanoko capture: runs an MPI program with libkanoko-capture preloaded and leaves one native trace;
// or merges per-rank capture files left by a run that did not finish.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "src/base/error.hpp"
#include "src/base/output_target.hpp"
#include "src/capture/merge.hpp"
#include "src/cli/options.hpp"

namespace kanoko::cli {
namespace {

namespace fs = std::filesystem;

void report(const capture::MergeSummary& s, const std::string& output) {
  std::cerr << "kanoko capture: wrote " << output << ": " << s.ranks << " of " << s.size << " ranks, " << s.messages
            << " messages (" << s.unmatched_sends << " without a recorded receive), " << s.collectives
            << " collective entries, " << s.end_s << " s; clock alignment bound " << s.max_clock_bound_s
            << " s; capture overhead at most " << 100.0 * s.max_overhead_fraction << " % of a rank's run time\n";
  for (const auto& line : capture::call_site_report(s)) std::cerr << "kanoko capture: " << line << '\n';
  if (s.partial) {
    std::cerr << "kanoko capture: the trace is PARTIAL:";
    for (const auto& n : s.notes) std::cerr << "\n  " << n;
    std::cerr << '\n';
  }
}

bool is_mpi_launcher(const std::string& program) {
  const std::string base = fs::path(program).filename().string();
  return base == "mpirun" || base == "mpiexec" || base == "orterun";
}

}  // namespace

int cmd_capture(const Args& all_args) {
  const CommandSpec spec{
      "capture", "-o RUN.kntr [OPTIONS] -- mpirun -np N PROGRAM ARGS...   |   --merge DIR -o RUN.kntr",
      "Runs an MPI program with libkanoko-capture preloaded (LD_PRELOAD, passed to the ranks with\n"
      "mpirun -x) and writes one native trace. The library wraps MPI through the profiling interface\n"
      "(PMPI): point-to-point sends and receives (blocking and non-blocking, each message matched to its\n"
      "receive), collectives (coll entries), each MPI call as a state named after it (MPI_Recv, ...),\n"
      "compute intervals between MPI calls (state ... compute) and sampled load. Each MPI call and\n"
      "message carries its call site: the return address(es) into the program, resolved at the merge\n"
      "to file:line and function with elfutils (programs built with -g; else symbol+offset), so that\n"
      "`kanoko profile` and `kanoko info` see them. Each rank buffers its records in memory and\n"
      "writes them in large blocks to DIR/rank-N.kcap; at MPI_Finalize rank 0 merges them,\n"
      "correcting each rank's clock by an offset measured by ping-pong at init and finalize (bound:\n"
      "half the best round trip, written in the trace).\n"
      "If the program dies or never calls MPI_Finalize, the files left are merged into a trace marked\n"
      "partial. A program linked with -lkanoko-capture is traced without this command.\n\n"
      "Environment variables read by the library (the options below set them):\n"
      "  KANOKO_CAPTURE=0                 turn capture off\n"
      "  KANOKO_CAPTURE_OUTPUT=FILE       merged trace (default kanoko-trace.kntr)\n"
      "  KANOKO_CAPTURE_DIR=DIR           per-rank files (default FILE.ranks)\n"
      "  KANOKO_CAPTURE_P2P=0|1           point-to-point messages (default 1)\n"
      "  KANOKO_CAPTURE_COLLECTIVES=0|1   collectives (default 1)\n"
      "  KANOKO_CAPTURE_COMPUTE=0|1       compute states between MPI calls (default 1)\n"
      "  KANOKO_CAPTURE_LOAD=cpu|compute|off   load: process CPU time / wall time, or the fraction\n"
      "                                   of time outside MPI, per period (default cpu)\n"
      "  KANOKO_CAPTURE_LOAD_PERIOD=S     load sampling period in seconds (default 0.1)\n"
      "  KANOKO_CAPTURE_BUFFER_MB=M       per-rank buffer size (default 4)\n"
      "  KANOKO_CAPTURE_FLUSH_PERIOD=S    also write the buffer when S seconds passed (default 1)\n"
      "  KANOKO_CAPTURE_MERGE=0|1         merge at MPI_Finalize (default 1)\n"
      "  KANOKO_CAPTURE_KEEP=0|1          keep the per-rank files after merging (default 0)\n"
      "  KANOKO_CAPTURE_CALL_PATH_DEPTH=N frames of each MPI call's call path, 0 to 32 (default 1:\n"
      "                                   the calling line; 0: no call sites)\n"
      "Details: docs/capture.md.",
      "  kanoko capture -o ring.kntr -- mpirun -np 8 ./kanoko_example_fibonacci --distribution ring\n"
      "  kanoko capture -o mesh.kntr --load-period 0.05 -- mpirun -np 27 ./kanoko_example_stencil\n"
      "  kanoko capture -o late.kntr --call-path-depth 3 -- mpirun -np 4 ./late && kanoko profile late.kntr\n"
      "  kanoko capture --merge mesh.kntr.ranks -o mesh.kntr\n"};
  Args args;
  std::vector<std::string> command;
  bool after_dashes = false;
  for (const auto& a : all_args) {
    if (after_dashes) {
      command.push_back(a);
    } else if (a == "--") {
      after_dashes = true;
    } else {
      args.push_back(a);
    }
  }
  po::options_description options("Options");
  std::string output, merge_dir, dir, load = "cpu", library;
  double load_period = 0.1;
  int call_path_depth = 1;
  options.add_options()("output,o", po::value(&output)->required(), "native trace to write (.kntr)")(
      "merge", po::value(&merge_dir), "only merge the per-rank files left in this folder")(
      "dir", po::value(&dir), "folder for the per-rank files (default OUTPUT.ranks)")(
      "load", po::value(&load)->default_value("cpu"), "load samples: cpu, compute or off")(
      "load-period", po::value(&load_period)->default_value(0.1), "load sampling period (seconds)")(
      "no-p2p", "do not record point-to-point messages")("no-collectives", "do not record collectives")(
      "no-compute", "do not record compute states")("keep", "keep the per-rank files after merging")(
      "call-path-depth", po::value(&call_path_depth)->default_value(1),
      "return addresses recorded per MPI call, 0 to 32: 1 the calling line, N > 1 the call path N frames "
      "deep, 0 no call sites")(
      "library", po::value(&library), "libkanoko-capture.so to preload (default: the one built with kanoko)");
  po::variables_map vm;
  if (!parse_command_line(spec, options, {}, args, vm)) return 0;
  const FileLoc where{"kanoko capture"};
  if (load != "cpu" && load != "compute" && load != "off") {
    throw InputError(where, "--load must be cpu, compute or off, not '" + load + "'");
  }
  if (!(load_period > 0 && load_period <= 3600)) throw InputError(where, "--load-period must be in (0, 3600] seconds");
  if (call_path_depth < 0 || call_path_depth > 32) {
    throw InputError(where, "--call-path-depth must be from 0 to 32, not " + std::to_string(call_path_depth));
  }

  // A symbolic link is written through; a FIFO, device or folder is refused (src/base/output_target.hpp).
  const fs::path destination = checked_output_target(output);
  if (vm.count("merge") != 0U) {
    if (!command.empty()) throw InputError(where, "--merge takes no command after --");
    try {
      report(capture::merge_capture_dir(merge_dir, destination), output);
    } catch (const std::runtime_error& e) {
      throw RunError(e.what());
    }
    return 0;
  }
  if (command.empty()) throw InputError(where, "no command: put the program after --, as in: kanoko capture -o run.kntr -- mpirun -np 8 ./app");
  if (library.empty()) {
    const char* env = std::getenv("KANOKO_CAPTURE_LIBRARY");
    library = env != nullptr && *env != '\0' ? env : KANOKO_CAPTURE_LIBRARY;
  }
  if (library.empty() || !fs::exists(library)) {
    throw RunError("libkanoko-capture is not available" + (library.empty() ? std::string(" (kanoko was built without MPI)") : ": " + library + " does not exist") +
                   "; pass --library PATH or set KANOKO_CAPTURE_LIBRARY");
  }
  const fs::path out_path = fs::absolute(destination);
  const fs::path dir_path = fs::absolute(dir.empty() ? output + ".ranks" : dir);
  std::error_code ec;
  // An earlier trace stays until a new one replaces it (outputs never destroy): rank 0 writes the
  // merged trace under a temporary name and renames it, so a new file is one with a new inode.
  const auto file_id = [](const fs::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? std::pair<dev_t, ino_t>{st.st_dev, st.st_ino} : std::pair<dev_t, ino_t>{0, 0};
  };
  const auto earlier = file_id(out_path);
  const auto written = [&] {
    const auto now = file_id(out_path);
    return now != std::pair<dev_t, ino_t>{0, 0} && now != earlier;
  };
  if (fs::is_directory(dir_path, ec)) {
    for (const auto& e : fs::directory_iterator(dir_path)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("rank-", 0) == 0 && e.path().extension() == ".kcap") fs::remove(e.path(), ec);
    }
  }

  const std::vector<std::pair<std::string, std::string>> env = {
      {"KANOKO_CAPTURE", "1"},
      {"KANOKO_CAPTURE_OUTPUT", out_path.string()},
      {"KANOKO_CAPTURE_DIR", dir_path.string()},
      {"KANOKO_CAPTURE_LOAD", load},
      {"KANOKO_CAPTURE_LOAD_PERIOD", std::to_string(load_period)},
      {"KANOKO_CAPTURE_P2P", vm.count("no-p2p") != 0U ? "0" : "1"},
      {"KANOKO_CAPTURE_COLLECTIVES", vm.count("no-collectives") != 0U ? "0" : "1"},
      {"KANOKO_CAPTURE_COMPUTE", vm.count("no-compute") != 0U ? "0" : "1"},
      {"KANOKO_CAPTURE_KEEP", vm.count("keep") != 0U ? "1" : "0"},
      {"KANOKO_CAPTURE_CALL_PATH_DEPTH", std::to_string(call_path_depth)},
  };
  for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
  // Variables the user set for the library (KANOKO_CAPTURE_BUFFER_MB, ...) travel too.
  std::vector<std::string> forwarded;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("KANOKO_CAPTURE", 0) == 0) forwarded.push_back(kv.substr(0, kv.find('=')));
  }
  const char* old_preload = std::getenv("LD_PRELOAD");
  const std::string preload = fs::absolute(library).string() + (old_preload != nullptr && *old_preload != '\0' ? ":" + std::string(old_preload) : "");
  std::vector<std::string> argv = command;
  const bool launcher = is_mpi_launcher(command[0]);
  if (launcher) {
    std::vector<std::string> extra = {"-x", "LD_PRELOAD=" + preload};
    for (const auto& k : forwarded) {
      extra.push_back("-x");
      extra.push_back(k);
    }
    argv.insert(argv.begin() + 1, extra.begin(), extra.end());
  }

  const pid_t pid = ::fork();
  if (pid < 0) throw RunError(std::string("cannot start the program: ") + std::strerror(errno));
  if (pid == 0) {
    if (!launcher) ::setenv("LD_PRELOAD", preload.c_str(), 1);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execvp(cargv[0], cargv.data());
    std::fprintf(stderr, "kanoko capture: cannot run %s: %s\n", cargv[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code == 127) return code;
  if (written()) {
    if (code != 0) std::cerr << "kanoko capture: the program exited with code " << code << "; the trace " << output << " was written at MPI_Finalize\n";
    else std::cerr << "kanoko capture: wrote " << output << '\n';
    return code;
  }
  // The program died or never reached MPI_Finalize: merge what the ranks flushed.
  std::cerr << "kanoko capture: the program exited with code " << code
            << " without a merged trace; merging the per-rank files left in " << dir_path.string() << '\n';
  try {
    report(capture::merge_capture_dir(dir_path, out_path), output);
  } catch (const std::runtime_error& e) {
    throw RunError(std::string("no trace: ") + e.what());
  }
  return code == 0 ? 0 : code;
}

}  // namespace kanoko::cli
