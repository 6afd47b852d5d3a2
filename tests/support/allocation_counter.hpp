// "No allocation after warm-up" checks: a test program that links this counts every operator new
// made while counting is switched on (the replacement lives in allocation_counter.cpp, which the
// linker pulls in with these functions).
#pragma once

#include <cstddef>

namespace kanoko::test {

/// Starts counting allocations from zero.
void start_counting_allocations();
/// Stops counting; returns the allocations counted since the start.
std::size_t stop_counting_allocations();

/// Allocations made by `f`.
template <class F>
std::size_t allocations_in(F&& f) {
  start_counting_allocations();
  f();
  return stop_counting_allocations();
}

}  // namespace kanoko::test
