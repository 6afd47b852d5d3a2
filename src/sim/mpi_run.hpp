// `mpirun -np P kanoko simulate ...`: the ranks of MPI_COMM_WORLD as the RunGroup of one run
// (simulate.hpp). Every rank reads the inputs, builds the same model and steps the same states;
// each force evaluation is split by bodies, and one MPI_Allgatherv per evaluation gives every
// rank every body's sums (docs/engine-performance.md, "MPI"). Rank 0 alone writes the trajectory.
//
// `kanoko simulate` enters MPI only when Open MPI's mpirun started it (OMPI_COMM_WORLD_SIZE is
// set), so the same binary runs without it. Collectives are non-blocking and polled, so that a signal (the
// SIGTERM mpirun sends when another rank dies) unwinds the process, removing its temporary output,
// instead of leaving it blocked inside MPI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/sim/simulate.hpp"

namespace kanoko::sim {

/// Processes of this host in the run (OMPI_COMM_WORLD_LOCAL_SIZE; 1 if unknown): the CPU cores
/// are shared among them.
int mpi_local_processes();

class MpiRun final : public RunGroup {
 public:
  /// Enters MPI (MPI_Init_thread). `version`: what identifies this build (RunGroup::version).
  /// Throws RunError if MPI cannot start.
  explicit MpiRun(std::string version);
  /// Leaves MPI (MPI_Finalize).
  ~MpiRun() override;
  MpiRun(const MpiRun&) = delete;
  MpiRun& operator=(const MpiRun&) = delete;

  [[nodiscard]] int parts() const override { return size_; }
  [[nodiscard]] int part() const override { return rank_; }
  void share(double* values, const std::vector<std::size_t>& bounds, std::size_t stride) override;
  std::vector<std::uint64_t> gather(const std::vector<std::uint64_t>& values) override;
  std::vector<std::string> gather_text(const std::string& text) override;
  [[nodiscard]] std::string version() const override { return version_; }

  /// Ends every process of the run with `code` (MPI_Abort): for a failure once the processes share
  /// the work, which the others cannot learn of at a checkpoint.
  [[noreturn]] void abort(int code);

 private:
  int rank_ = 0;
  int size_ = 1;
  std::string version_;
  std::vector<int> counts_, displacements_;  ///< Allgatherv's, in doubles
};

}  // namespace kanoko::sim
