#include "src/trace/mpi_calls.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

namespace kanoko::trace {
namespace {

using C = StateCategory;
using K = CollectiveKind;

// Sorted by name (checked once by a test and by the lookup's assertion-free binary search, which
// needs it). Waiting (Idle) rows block until another process arrives: blocking receives, waits,
// barriers and collectives (they finish only when the last participant has arrived).
// Communicating rows cost time in the MPI library without waiting for a peer: sends (buffered
// or eager), posting non-blocking operations, tests, probes, packing, set-up.
constexpr std::array kCalls{
    MpiCall{"abort", C::Communicating},
    MpiCall{"accumulate", C::Communicating},
    MpiCall{"allgather", C::Idle, K::AllToAll},
    MpiCall{"allgatherv", C::Idle, K::AllToAll},
    MpiCall{"allreduce", C::Idle, K::AllToAll},
    MpiCall{"alltoall", C::Idle, K::AllToAll},
    MpiCall{"alltoallv", C::Idle, K::AllToAll},
    MpiCall{"alltoallw", C::Idle, K::AllToAll},
    MpiCall{"barrier", C::Idle, K::AllToAll},
    MpiCall{"bcast", C::Idle, K::FromRoot},
    MpiCall{"blocked", C::Idle},                 // Extrae
    MpiCall{"blocking send", C::Communicating},  // Extrae
    MpiCall{"bsend", C::Communicating},
    MpiCall{"compute", C::Computing},   // native, SimGrid TI
    MpiCall{"computing", C::Computing},  // SimGrid SMPI (tracing/smpi/computing)
    MpiCall{"exscan", C::Idle, K::AllToAll},
    MpiCall{"fetch_and_op", C::Communicating},
    MpiCall{"finalize", C::Communicating},
    MpiCall{"gather", C::Idle, K::ToRoot},
    MpiCall{"gatherv", C::Idle, K::ToRoot},
    MpiCall{"get", C::Communicating},
    MpiCall{"group communication", C::Idle},  // Extrae: a collective
    MpiCall{"iallgather", C::Communicating},
    MpiCall{"iallreduce", C::Communicating},
    MpiCall{"ialltoall", C::Communicating},
    MpiCall{"ibarrier", C::Communicating},
    MpiCall{"ibcast", C::Communicating},
    MpiCall{"ibsend", C::Communicating},
    MpiCall{"idle", C::Idle},
    MpiCall{"igather", C::Communicating},
    MpiCall{"immediate receive", C::Communicating},  // Extrae
    MpiCall{"immediate send", C::Communicating},     // Extrae
    MpiCall{"improbe", C::Communicating},
    MpiCall{"init", C::Communicating},
    MpiCall{"init_thread", C::Communicating},
    MpiCall{"iprobe", C::Communicating},
    MpiCall{"irecv", C::Communicating},
    MpiCall{"ireduce", C::Communicating},
    MpiCall{"irsend", C::Communicating},
    MpiCall{"iscatter", C::Communicating},
    MpiCall{"isend", C::Communicating},
    MpiCall{"issend", C::Communicating},
    MpiCall{"mprobe", C::Communicating},
    MpiCall{"mrecv", C::Communicating},
    MpiCall{"not created", C::Idle},  // Extrae
    MpiCall{"pack", C::Communicating},
    MpiCall{"probe", C::Communicating},
    MpiCall{"put", C::Communicating},
    MpiCall{"recv", C::Idle},
    MpiCall{"recv_init", C::Communicating},
    MpiCall{"reduce", C::Idle, K::ToRoot},
    MpiCall{"reduce_scatter", C::Idle, K::AllToAll},
    MpiCall{"reduce_scatter_block", C::Idle, K::AllToAll},
    MpiCall{"reducescatter", C::Idle, K::AllToAll},  // SimGrid TI
    MpiCall{"remote memory access", C::Communicating},  // Extrae
    MpiCall{"request_free", C::Communicating},
    MpiCall{"rsend", C::Communicating},
    MpiCall{"running", C::Computing},  // Extrae
    MpiCall{"scan", C::Idle, K::AllToAll},
    MpiCall{"scatter", C::Idle, K::FromRoot},
    MpiCall{"scatterv", C::Idle, K::FromRoot},
    MpiCall{"send", C::Communicating},
    MpiCall{"send receive", C::Idle},  // Extrae: MPI_Sendrecv, which waits for its receive
    MpiCall{"send_init", C::Communicating},
    MpiCall{"sendrecv", C::Idle},
    MpiCall{"sendrecv_replace", C::Idle},
    MpiCall{"sleep", C::Idle},  // SimGrid TI
    MpiCall{"ssend", C::Communicating},
    MpiCall{"start", C::Communicating},
    MpiCall{"startall", C::Communicating},
    MpiCall{"synchronization", C::Idle},  // Extrae
    MpiCall{"test", C::Communicating},
    MpiCall{"test/probe", C::Communicating},  // Extrae
    MpiCall{"testall", C::Communicating},
    MpiCall{"testany", C::Communicating},
    MpiCall{"testsome", C::Communicating},
    MpiCall{"unpack", C::Communicating},
    MpiCall{"wait", C::Idle},
    MpiCall{"wait/waitall", C::Idle},  // Extrae
    MpiCall{"waitall", C::Idle},
    MpiCall{"waitany", C::Idle},
    MpiCall{"waiting", C::Idle},
    MpiCall{"waiting a message", C::Idle},  // Extrae: a blocking receive
    MpiCall{"waitsome", C::Idle},
    MpiCall{"win_complete", C::Idle},
    MpiCall{"win_fence", C::Idle, K::AllToAll},
    MpiCall{"win_lock", C::Idle},
    MpiCall{"win_unlock", C::Communicating},
    MpiCall{"win_wait", C::Idle},
};

constexpr bool sorted_by_name() {
  for (std::size_t i = 1; i < kCalls.size(); ++i) {
    if (!(kCalls[i - 1].name < kCalls[i].name)) return false;
  }
  return true;
}
static_assert(sorted_by_name(), "kCalls must be sorted by name for the binary search");

constexpr char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (lower(text[i]) != prefix[i]) return false;
  }
  return true;
}

/// The length of the `MPI_`/`PMPI_` prefix of `name`, 0 when it has none.
std::size_t prefix_length(std::string_view name) {
  if (starts_with_nocase(name, "mpi_")) return 4;
  if (starts_with_nocase(name, "pmpi_")) return 5;
  return 0;
}

}  // namespace

std::span<const MpiCall> mpi_calls() { return kCalls; }

bool has_mpi_prefix(std::string_view name) { return prefix_length(name) > 0; }

const MpiCall* find_mpi_call(std::string_view name) {
  name.remove_prefix(prefix_length(name));
  // The longest row name is short: a longer name is in no row.
  constexpr std::size_t kLongest = 24;
  if (name.empty() || name.size() > kLongest) return nullptr;
  std::array<char, kLongest> buf{};
  for (std::size_t i = 0; i < name.size(); ++i) buf[i] = lower(name[i]);
  const std::string_view key(buf.data(), name.size());
  const auto it = std::lower_bound(kCalls.begin(), kCalls.end(), key,
                                   [](const MpiCall& c, std::string_view k) { return c.name < k; });
  return it != kCalls.end() && it->name == key ? &*it : nullptr;
}

StateCategory mpi_call_category(std::string_view name) {
  if (const MpiCall* c = find_mpi_call(name)) return c->category;
  return has_mpi_prefix(name) ? StateCategory::Communicating : StateCategory::None;
}

}  // namespace kanoko::trace
