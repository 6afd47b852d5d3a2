// kanoko generate: writes the paper's two example programs (section 4) as native traces.

#include <iostream>
#include <sstream>
#include <string>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/suggest.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/options.hpp"
#include "src/trace/paper_programs.hpp"

namespace kanoko::cli {
namespace {

const char* const kGenerateSummary =
    "Writes a native trace (.kntr) of one of the two programs in section 4 of the Kanoko paper,\n"
    "modelled by a deterministic discrete-event simulation (docs/paper-programs.md):\n"
    "  fibonacci  parallel recursive fib(n) on the paper's 8-processor Cenju-3: a call spawns\n"
    "             fib(n-1) and fib(n-2) on nodes chosen by a load distribution method (random,\n"
    "             ring, torus), by call messages; the children reply with their values.\n"
    "  mesh       iterative 3-D stencil on a 3x3x3 mesh: every iteration each node exchanges\n"
    "             halos with its mesh neighbours and computes; uniform or skewed halos, light\n"
    "             or heavy computing load (the same messages for both loads).";

/// Writes the generated text to FILE atomically, or to stdout for "-".
void emit(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
    std::cout.flush();
    if (!std::cout) throw RunError("writing the trace to standard output failed");
  } else {
    write_file_atomically(path, text);
  }
}

/// Where the one-line summary goes: stderr when the trace itself went to stdout.
std::ostream& report_stream(const std::string& path) { return path == "-" ? std::cerr : std::cout; }

int generate_fibonacci(const Args& args) {
  const CommandSpec spec{
      "generate fibonacci",
      "--distribution random|ring|torus [--n 22] [--nodes 8] [--seed 1] -o FILE.kntr",
      "Models the paper's parallel recursive Fibonacci (section 4.1) on a machine with uniform\n"
      "latency (an NEC Cenju-3). A call fib(k >= 2) runs on one node and sends fib(k-1) and\n"
      "fib(k-2) to nodes chosen by the distribution method; each child returns its value to the\n"
      "parent's node. Every node has one CPU serving a FIFO of ready calls and replies; each call\n"
      "and message costs CPU time, and messages take latency + size/bandwidth.\n"
      "  random  each child goes to a uniformly random other node (seeded, deterministic)\n"
      "  ring    every node sends all its children to its successor (i+1) mod P\n"
      "  torus   nodes form a 2-D torus R x C (8 nodes: 2 x 4); fib(k-1) goes to the right,\n"
      "          fib(k-2) to the down neighbour\n"
      "The trace holds node declarations pe0..pe(P-1), one msg per call (tag 1) and reply (tag 2)\n"
      "with its receive time, CPU states, and each node's busy fraction every --interval seconds.",
      "  kanoko generate fibonacci --distribution ring -o traces/fib22-ring.kntr\n"
      "  kanoko generate fibonacci --distribution random --seed 7 --n 18 -o small.kntr\n"};
  po::options_description options("Options");
  std::string distribution;
  std::string output;
  trace::FibonacciOptions o;
  // clang-format off
  options.add_options()
      ("distribution,d", po::value(&distribution)->required(),
       "load distribution method: random, ring or torus")
      ("n", po::value(&o.n)->default_value(o.n), "argument of the root call fib(n), 0..27")
      ("nodes,p", po::value(&o.nodes)->default_value(o.nodes),
       "number of processors (torus: R x C with R, C >= 2)")
      ("seed", po::value(&o.seed)->default_value(o.seed), "seed of the random distribution")
      ("interval", po::value(&o.sample_interval_s)->default_value(o.sample_interval_s, "0.1"),
       "load sampling period in seconds")
      ("detailed-states", po::bool_switch(&o.detailed_states),
       "write separate recv/compute/send states (about 3x larger) instead of one compute state "
       "per run of CPU activity")
      ("output,o", po::value(&output)->required(), "trace file to write ('-' for stdout)");
  // clang-format on
  po::variables_map vm;
  if (!parse_command_line(spec, options, {}, args, vm)) return 0;

  o.distribution = trace::parse_fibonacci_distribution(distribution);
  std::ostringstream text;
  const trace::FibonacciResult r = trace::write_fibonacci_trace(o, text);
  emit(output, text.str());
  auto& report = report_stream(output);
  report << "wrote " << (output == "-" ? "<stdout>" : output) << ": fib(" << o.n
         << ") = " << r.value << " on " << o.nodes << " nodes ("
         << trace::to_string(o.distribution);
  if (r.torus_rows > 0) report << ' ' << r.torus_rows << 'x' << r.torus_cols;
  report << "), " << r.calls << " calls, " << r.messages << " messages, " << r.states << " states, "
         << r.end_s << " s traced\n";
  return 0;
}

int generate_mesh(const Args& args) {
  const CommandSpec spec{
      "generate mesh",
      "--communication uniform|skewed --load light|heavy [--iterations 160] -o FILE.kntr",
      "Models the paper's 3x3x3 mesh machine (section 4.2; the paper used pseudo trace data) as\n"
      "an iterative 3-D stencil. Iteration i starts at i x 50 ms: every node sends a halo to each\n"
      "of its 6-neighbours (no wrap-around), takes in the halos it receives, then computes. The\n"
      "exchange alternates in 2 s cycles between an active phase (1.2 s, 4-layer halos of 32 KiB)\n"
      "and a quiet phase (0.8 s, 1-layer halos of 8 KiB).\n"
      "  uniform  every halo has the same size: the mesh should shrink keeping its shape\n"
      "  skewed   halos between the 8 nodes of the 2x2x2 corner octant holding n(0,0,0) are 4x\n"
      "           larger (a refined region): the mesh should deform\n"
      "  light    computing takes 9.4 ms of each 50 ms iteration (busy fraction about 0.2)\n"
      "  heavy    computing takes 44.4 ms (busy fraction about 0.9)\n"
      "Light and heavy traces hold exactly the same msg entries; only states and load differ.\n"
      "The trace declares nodes n(x,y,z) and the 54 mesh links.",
      "  kanoko generate mesh --communication skewed --load heavy -o "
      "traces/mesh-skewed-heavy.kntr\n"};
  po::options_description options("Options");
  std::string communication;
  std::string load;
  std::string output;
  trace::MeshOptions o;
  // clang-format off
  options.add_options()
      ("communication,c", po::value(&communication)->required(),
       "halo sizes: uniform or skewed")
      ("load,l", po::value(&load)->required(), "computing load: light or heavy")
      ("iterations", po::value(&o.iterations)->default_value(o.iterations),
       "iterations of 50 ms to trace")
      ("interval", po::value(&o.sample_interval_s)->default_value(o.sample_interval_s, "0.1"),
       "load sampling period in seconds")
      ("output,o", po::value(&output)->required(), "trace file to write ('-' for stdout)");
  // clang-format on
  po::variables_map vm;
  if (!parse_command_line(spec, options, {}, args, vm)) return 0;

  o.communication = trace::parse_mesh_communication(communication);
  o.load = trace::parse_mesh_load(load);
  std::ostringstream text;
  const trace::MeshResult r = trace::write_mesh_trace(o, text);
  emit(output, text.str());
  report_stream(output) << "wrote " << (output == "-" ? "<stdout>" : output) << ": " << o.dims[0]
                        << 'x' << o.dims[1] << 'x' << o.dims[2] << " mesh, "
                        << trace::to_string(o.communication) << ' ' << trace::to_string(o.load)
                        << ", " << r.messages << " messages, " << r.links << " links, mean load "
                        << r.mean_load << ", " << r.end_s << " s traced\n";
  return 0;
}

void print_generate_usage(std::ostream& out) {
  out << "Usage: kanoko generate PROGRAM [OPTIONS] -o FILE.kntr\n\n"
      << kGenerateSummary << "\n\n"
      << "Run 'kanoko generate PROGRAM --help' for the options of one program.\n"
         "Examples:\n"
         "  kanoko generate fibonacci --distribution ring -o traces/fib22-ring.kntr\n"
         "  kanoko generate mesh --communication skewed --load light -o mesh.kntr\n";
}

}  // namespace

int cmd_generate(const Args& args) {
  if (args.empty()) {
    print_generate_usage(std::cerr);
    return 2;
  }
  const std::string& program = args.front();
  if (program == "--help" || program == "-h" || program == "help") {
    print_generate_usage(std::cout);
    return 0;
  }
  const Args rest(args.begin() + 1, args.end());
  if (program == "fibonacci") return generate_fibonacci(rest);
  if (program == "mesh") return generate_mesh(rest);
  const std::vector<std::string> programs{"fibonacci", "mesh"};
  throw InputError(FileLoc{"kanoko generate"}, "unknown program '" + program + "'" +
                                                   did_you_mean(program, programs) +
                                                   "; valid: fibonacci, mesh");
}

}  // namespace kanoko::cli
