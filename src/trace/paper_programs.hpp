// Models of the two programs in section 4 of Osawa & Yuba's Kanoko paper, written as native
// traces (.kntr): a parallel recursive Fibonacci on an 8-processor Cenju-3 under three load
// distribution methods, and an iterative stencil on a 3×3×3 mesh machine with uniform or skewed
// communication and light or heavy computing load. Each is a deterministic discrete-event
// simulation with explicit costs; docs/paper-programs.md explains every constant.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string_view>

namespace kanoko::trace {

// ---------------------------------------------------------------------------------------------
// Fibonacci (paper §4.1)
// ---------------------------------------------------------------------------------------------

/// A parallel recursive fib(n): a call fib(k ≥ 2) on some node spawns fib(k−1) and fib(k−2) on
/// nodes chosen by the distribution method, by a call message each; every child returns its value
/// to the parent's node by a reply message. Each node has one CPU serving a FIFO of ready work.
/// The default costs model a 1990s message-passing machine (the paper's NEC Cenju-3).
struct FibonacciOptions {
  /// Where a parent sends its two children (paper Fig. 4).
  enum class Distribution {
    Random,  ///< each child to a uniformly random node other than the parent's
    Ring,    ///< both children to the successor node (i+1) mod P
    Torus,   ///< fib(k−1) to the right, fib(k−2) to the down neighbour on a 2-D torus
  };

  int n = 22;     ///< argument of the root call, 0..max_fibonacci_n
  int nodes = 8;  ///< processors P, 2..max_fibonacci_nodes (torus: P = R×C with R, C ≥ 2)
  Distribution distribution = Distribution::Random;
  std::uint64_t seed = 1;          ///< seed of the random distribution (unused by ring, torus)
  double sample_interval_s = 0.1;  ///< period of the `load` samples
  /// false: one `compute` state per maximal run of CPU activity (message handling included),
  /// which keeps fib(22) traces under 5 MB. true: separate `recv`, `compute` and `send` states.
  bool detailed_states = false;

  double spawn_compute_s = 30e-6;  ///< CPU time of a call fib(k ≥ 2) before it sends its children
  double add_compute_s = 20e-6;    ///< CPU time to add the two child values
  double leaf_compute_s = 20e-6;   ///< CPU time of a call fib(0) or fib(1)
  double send_overhead_s = 80e-6;  ///< sender CPU time per message
  double recv_overhead_s = 80e-6;  ///< receiver CPU time per message
  double latency_s = 30e-6;        ///< network latency, the same between every pair of nodes
  double bandwidth_bytes_per_s = 40e6;  ///< link bandwidth (Cenju-3: 40 MB/s)
  std::uint32_t call_bytes = 40;   ///< call message (tag 1): header, k, continuation
  std::uint32_t reply_bytes = 40;  ///< reply message (tag 2): header, value, continuation
};

/// Largest n accepted: the trace grows as 2·fib(n+1) calls (fib(27): 1.27 M messages, ~60 MB).
inline constexpr int max_fibonacci_n = 27;
/// Largest node count accepted.
inline constexpr int max_fibonacci_nodes = 4096;

/// What one Fibonacci run computed and wrote.
struct FibonacciResult {
  std::uint64_t value = 0;     ///< fib(n) as the simulated program computed it
  std::uint64_t calls = 0;     ///< calls executed, 2·fib(n+1) − 1
  std::uint64_t messages = 0;  ///< call + reply messages, 2·(calls − 1)
  std::uint64_t bytes = 0;     ///< bytes of all messages
  std::uint64_t states = 0;    ///< `state` entries written
  double end_s = 0;            ///< when the root call finished (the `end` entry)
  int torus_rows = 0;          ///< torus shape R×C used (0 unless distribution is Torus)
  int torus_cols = 0;
};

/// The torus R×C (R ≤ C, R as large as possible, both ≥ 2) that `nodes` processors form.
/// Throws InputError when `nodes` is prime or smaller than 4.
std::array<int, 2> fibonacci_torus_shape(int nodes);

/// Checks every option; throws InputError naming the first bad one.
void validate(const FibonacciOptions& options);

/// Simulates the program and writes it as a native trace to `out`. Throws InputError for bad
/// options and RunError if `out` fails.
FibonacciResult write_fibonacci_trace(const FibonacciOptions& options, std::ostream& out);

/// "random", "ring" or "torus".
std::string_view to_string(FibonacciOptions::Distribution d);
/// Parses a distribution name; throws InputError listing the valid names.
FibonacciOptions::Distribution parse_fibonacci_distribution(std::string_view name);

// ---------------------------------------------------------------------------------------------
// 3-D mesh stencil (paper §4.2)
// ---------------------------------------------------------------------------------------------

/// An iterative 3-D stencil on a mesh machine (6-neighbour, no wrap-around). Iteration i starts
/// at i·iteration_s: every node sends one halo message to each mesh neighbour, handles the halos
/// it receives, then computes. Only the compute time differs between the light and heavy loads,
/// and it ends before the next iteration starts, so both loads have exactly the same messages.
/// The exchange alternates between an active phase (deep halos) and a quiet phase (thin halos).
struct MeshOptions {
  /// How halo sizes are distributed over the mesh.
  enum class Communication {
    Uniform,  ///< every halo has the same size
    Skewed,  ///< halos between nodes of the hot octant at the origin corner are hot_factor× larger
  };
  /// How much of each iteration the nodes compute.
  enum class Load {
    Light,  ///< light_compute_s per iteration (busy fraction ≈ 0.2)
    Heavy,  ///< heavy_compute_s per iteration (busy fraction ≈ 0.9)
  };

  std::array<int, 3> dims{3, 3, 3};  ///< nodes along x, y, z (each 1..16, at least 2 nodes)
  Communication communication = Communication::Uniform;
  Load load = Load::Light;
  int iterations = 160;            ///< iterations traced (160 × 50 ms = 8 s)
  double iteration_s = 0.05;       ///< period of the iterations
  double sample_interval_s = 0.1;  ///< period of the `load` samples

  int cycle_iterations = 40;              ///< length of one active + quiet cycle (2 s)
  int active_iterations = 24;             ///< the first iterations of each cycle are active (1.2 s)
  int active_halo_depth = 4;              ///< halo layers exchanged in the active phase
  int quiet_halo_depth = 1;               ///< halo layers exchanged in the quiet phase
  std::uint32_t halo_layer_bytes = 8192;  ///< one layer of a 32×32 face of doubles
  int hot_factor = 4;  ///< skewed: size multiplier of halos inside the hot octant

  double light_compute_s = 0.0094;       ///< compute per iteration, light load
  double heavy_compute_s = 0.0444;       ///< compute per iteration, heavy load
  double send_overhead_s = 50e-6;        ///< sender CPU time per message
  double recv_overhead_s = 50e-6;        ///< receiver CPU time per message
  double latency_s = 20e-6;              ///< latency of one mesh link
  double bandwidth_bytes_per_s = 100e6;  ///< bandwidth of one mesh link
};

/// What one mesh run wrote.
struct MeshResult {
  std::uint64_t nodes = 0;     ///< dims[0]·dims[1]·dims[2]
  std::uint64_t links = 0;     ///< mesh edges declared
  std::uint64_t messages = 0;  ///< halo messages
  std::uint64_t bytes = 0;     ///< bytes of all halo messages
  std::uint64_t states = 0;    ///< `state` entries written
  double end_s = 0;            ///< iterations · iteration_s
  double mean_load = 0;        ///< busy fraction averaged over nodes and the whole run
  double max_exchange_s = 0;   ///< longest time from an iteration's start to a node's last halo
};

/// Checks every option; throws InputError naming the first bad one.
void validate(const MeshOptions& options);

/// Simulates the stencil and writes it as a native trace to `out`. Throws InputError for bad
/// options (including a compute time that does not fit in the iteration) and RunError if `out`
/// fails.
MeshResult write_mesh_trace(const MeshOptions& options, std::ostream& out);

/// "uniform" or "skewed".
std::string_view to_string(MeshOptions::Communication c);
/// "light" or "heavy".
std::string_view to_string(MeshOptions::Load l);
/// Parses a communication name; throws InputError listing the valid names.
MeshOptions::Communication parse_mesh_communication(std::string_view name);
/// Parses a load name; throws InputError listing the valid names.
MeshOptions::Load parse_mesh_load(std::string_view name);

/// Halo bytes node `a` sends to its mesh neighbour `b` in iteration `iteration` (node index
/// x + X·(y + Y·z)); the schedule is the same for both loads. Throws InputError for bad options.
std::uint64_t mesh_halo_bytes(const MeshOptions& options, int iteration, int a, int b);

}  // namespace kanoko::trace
