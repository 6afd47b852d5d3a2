// "No allocation per step after warm-up": the global operator new of this test program counts
// the allocations made while a test has switched counting on.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "integrators/body_distributions.hpp"
#include "integrators/forces.hpp"
#include "integrators/integrator.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t bytes) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
// The matching deletes (GCC cannot see that every pointer they get came from the new above).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace kanoko::integrators {
namespace {

/// Allocations made by `f`.
template <class F>
std::size_t allocations_in(F&& f) {
  g_allocations = 0;
  g_counting = true;
  f();
  g_counting = false;
  return g_allocations;
}

int* volatile g_sink = nullptr;  // keeps the compiler from eliding the allocation below

TEST(NoAllocation, CounterSeesAllocations) {
  EXPECT_EQ(allocations_in([] {
              g_sink = new int[100];
              delete[] g_sink;
            }),
            1U);
}

TEST(NoAllocation, RepulsionAfterWarmUp) {
  const Eigen::Matrix3Xd x = plummer_sphere(6'000, 3);
  for (Evaluator e : {Evaluator::Direct, Evaluator::BarnesHut}) {
    for (Multipole m : {Multipole::Monopole, Multipole::Quadrupole}) {
      RepulsionParams p;
      p.strength = 1;
      p.evaluator = e;
      p.multipole = m;
      ForceScratch scratch;
      Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
      add_repulsion(x, p, scratch, f);  // warm-up: the scratch takes its size
      Eigen::Matrix3Xd moved = x * 1.01;  // the next step's positions
      EXPECT_EQ(allocations_in([&] {
                  for (int k = 0; k < 3; ++k) add_repulsion(moved, p, scratch, f);
                }),
                0U)
          << to_string(e) << ", " << to_string(m);
    }
  }
}

TEST(NoAllocation, StepsAfterWarmUp) {
  const Eigen::Matrix3Xd x0 = plummer_sphere(3'000, 4);
  RepulsionParams p;
  p.strength = 1e-4;
  p.evaluator = Evaluator::BarnesHut;
  ForceScratch scratch;
  const auto n = x0.cols();
  auto f = [&](double, const Eigen::VectorXd& y, Eigen::VectorXd& d) {
    const Eigen::Map<const Eigen::Matrix3Xd> x(y.data(), 3, n);
    Eigen::Map<Eigen::Matrix3Xd> a(d.data() + 3 * n, 3, n);
    d.head(3 * n) = y.tail(3 * n);
    a.setZero();
    add_repulsion(x, p, scratch, a);
  };
  for (const auto& info : registry()) {
    Eigen::VectorXd y = Eigen::VectorXd::Zero(6 * n);
    y.head(3 * n) = Eigen::Map<const Eigen::VectorXd>(x0.data(), 3 * n);
    auto stepper = info.create(f, y.size(), StepperOptions{});
    stepper->step(0, 1e-3, y);
    EXPECT_EQ(allocations_in([&] {
                for (int k = 1; k < 4; ++k) stepper->step(k * 1e-3, 1e-3, y);
              }),
              0U)
        << info.name;
  }
}

}  // namespace
}  // namespace kanoko::integrators
