// The one vocabulary of MPI calls: every call name as the trace formats spell it (SMPI's
// `PMPI_Send`, Score-P's `MPI_Send`, Extrae's "Waiting a message", SimGrid TI's `send`, ...) and
// what time spent in it means: computing, communicating (the cost of doing communication) or
// waiting (idle: blocked until another process arrives). docs/trace-formats.md shows the table.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace kanoko::trace {

/// What a state means for the program: the three classes of the mapping's [trace] section.
/// Idle is "waiting": blocking receives, waits, barriers and collectives.
enum class StateCategory : std::uint8_t { None, Computing, Communicating, Idle };

/// How a collective operation moves data, for turning its instances into pair traffic.
enum class CollectiveKind : std::uint8_t {
  None,      ///< not a collective
  FromRoot,  ///< the root sends to every participant (bcast, scatter)
  ToRoot,    ///< every participant sends to the root (reduce, gather)
  AllToAll   ///< every participant exchanges with the others (allreduce, alltoall, barrier, scan)
};

/// One row of the table: a call under its canonical name (lower case, without `MPI_`/`PMPI_`)
/// or a state name a format uses for MPI time ("waiting a message").
struct MpiCall {
  std::string_view name;
  StateCategory category;
  CollectiveKind collective = CollectiveKind::None;
};

/// Every row, sorted by name.
std::span<const MpiCall> mpi_calls();

/// The row of a call or state name: case-insensitive, with or without an `MPI_` or `PMPI_`
/// prefix (`PMPI_Waitall`, `MPI_WAITALL`, `waitall` are one row). nullptr when not in the table.
const MpiCall* find_mpi_call(std::string_view name);

/// The category of a state name by the table. A name with an `MPI_`/`PMPI_` prefix that the
/// table does not list (`MPI_Comm_rank`, `MPI_Type_commit`) is communicating: time spent in MPI
/// doing neither computation nor waiting. Any other unlisted name is None.
StateCategory mpi_call_category(std::string_view name);

/// True when `name` starts with `MPI_` or `PMPI_`, in any case.
bool has_mpi_prefix(std::string_view name);

}  // namespace kanoko::trace
