// BinFinder (src/trace/bins.hpp) answers a time inside the last bin found without dividing: its
// answers must be floor() and ceil() of bin_position, bit for bit, for every time, above all
// the ones a few ulps and a few snapping zones around each boundary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "src/trace/bins.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

/// Times around boundary k·w: the boundary, neighbours ulp by ulp, and relative offsets across
/// the snapping zone (kBoundarySnap) and the finder's own margins.
std::vector<double> around_boundary(double w, double k) {
  std::vector<double> out;
  const double b = k * w;
  double up = b;
  double down = b;
  out.push_back(b);
  for (int i = 0; i < 6; ++i) {
    up = std::nextafter(up, std::numeric_limits<double>::infinity());
    down = std::nextafter(down, -std::numeric_limits<double>::infinity());
    out.push_back(up);
    out.push_back(down);
  }
  const double scale = std::max(1.0, k);
  for (const double rel : {1e-13, 1e-12, 2e-12, 5e-10, 9.99e-10, 1e-9, 1.001e-9, 1.5e-9, 1.999e-9, 2e-9, 2.001e-9, 3e-9, 1e-6}) {
    out.push_back((k + rel * scale) * w);
    out.push_back((k - rel * scale) * w);
    out.push_back(b * (1 + rel));
    out.push_back(b * (1 - rel));
  }
  return out;
}

void expect_same(BinFinder& finder, double t, double w) {
  const double floor_pos = std::floor(bin_position(t, w));
  const double ceil_pos = std::ceil(bin_position(t, w));
  // The same value, not a close one (a zero's sign aside: both are bin 0).
  const double f = finder.floor_position(t);
  const double c = finder.ceil_position(t);
  ASSERT_TRUE(f == floor_pos) << "floor at t = " << t << " (" << t / w << " bins), interval " << w << ": " << f
                              << " instead of " << floor_pos;
  ASSERT_TRUE(c == ceil_pos) << "ceil at t = " << t << " (" << t / w << " bins), interval " << w << ": " << c
                             << " instead of " << ceil_pos;
}

TEST(BinFinder, AgreesWithBinPositionAroundEveryBoundary) {
  for (const double w : {0.1, 1e-3, 3.3e-3, 0.581 / 1000, 1.0, 7.25, 1e-7, 123456.789}) {
    BinFinder finder(w);
    std::vector<double> times;
    for (double k = 0; k <= 1200; ++k) {
      for (const double t : around_boundary(w, k)) times.push_back(t);
    }
    // In order (as a trace comes), then in an order that jumps about (another entity's state,
    // a message's arrival).
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    for (const double t : sorted) expect_same(finder, t, w);
    std::mt19937_64 rng(42);
    std::shuffle(times.begin(), times.end(), rng);
    for (const double t : times) expect_same(finder, t, w);
  }
}

TEST(BinFinder, AgreesWithBinPositionOnDecimalTimesAndFarBins) {
  std::mt19937_64 rng(7);
  for (const double w : {0.1, 0.3, 1e-4, 2.5e-6}) {
    BinFinder finder(w);
    // Decimal times as traces write them (multiples of a microsecond or of the interval's own
    // decimal), in order, with repeats.
    std::uniform_int_distribution<int> step(0, 40);
    double t_us = 0;
    for (int i = 0; i < 200000; ++i) {
      t_us += step(rng);
      expect_same(finder, t_us * 1e-6, w);
      expect_same(finder, std::round(t_us / 7) * (w / 10), w);
    }
    // Far bins (up to the integer limit of bin_position's fast path and past it), zero, negative.
    for (const double k : {1e6, 1e9, 3.999e15, 4e15, 5e15}) {
      for (const double t : around_boundary(w, k)) expect_same(finder, t, w);
    }
    for (const double t : {0.0, -0.0, -1e-300, -w, -w * 1e-10, std::numeric_limits<double>::denorm_min()}) {
      expect_same(finder, t, w);
    }
  }
}

}  // namespace KANOKO_UNITY_ID
}  // namespace kanoko::trace
