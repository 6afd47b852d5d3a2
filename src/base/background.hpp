// Work that runs beside an interactive loop (the viewer's indexes, pictures, activity strip,
// profiles and re-simulation) must not take the loop's share of a busy machine: on two cores with
// a build running, equal-priority background threads made the viewer's frames ten times slower
// while an index built. Each such job lowers its own thread's priority when it starts.
#pragma once

#include <future>
#include <utility>

namespace kanoko {

/// How much lower than the interactive threads background work runs (a nice increment: about a
/// tenth of the CPU share when both want the same core; idle cores still run it at full speed).
inline constexpr int kBackgroundNice = 10;

/// Lowers the calling thread's scheduling priority by kBackgroundNice (Linux: per-thread nice;
/// threads it starts later inherit it). Only ever lowers it; a failure changes nothing (it is a
/// hint, never an error). Returns the thread's nice value afterwards.
int lower_thread_priority();

/// std::async(std::launch::async, f) on a thread of lowered priority (lower_thread_priority()):
/// how the viewer starts its background jobs.
template <class F>
[[nodiscard]] auto background_async(F&& f) {
  return std::async(std::launch::async, [f = std::forward<F>(f)]() mutable {
    (void)lower_thread_priority();
    return f();
  });
}

}  // namespace kanoko
