// An evaluation shared among processes (RepulsionParams::partition) gives the bits of one process.
// The processes are threads here, exchanging through memory with the Partition contract that the
// MPI run implements (tests/sim/test_mpi.cpp runs the real thing under mpirun).
#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "integrators/forces/body_distributions.hpp"
#include "integrators/forces/forces.hpp"

namespace kanoko::integrators {
namespace KANOKO_UNITY_ID {

/// The parts' shared memory: share() copies this part's items in, waits for all, copies all out.
struct Board {
  explicit Board(int parts) : sync(parts) {}
  std::vector<double> items;
  std::barrier<> sync;
  std::vector<std::vector<std::size_t>> bounds_seen;  ///< the bounds each part passed, per call
  std::mutex seen_mutex;
};

class ThreadPartition final : public Partition {
 public:
  ThreadPartition(Board& board, int parts, int part) : board_(board), parts_(parts), part_(part) {}
  [[nodiscard]] int parts() const override { return parts_; }
  [[nodiscard]] int part() const override { return part_; }
  void share(double* values, const std::vector<std::size_t>& bounds, std::size_t stride) override {
    if (part_ == 0) board_.items.assign(stride * bounds.back(), 0.0);
    {
      const std::lock_guard lock(board_.seen_mutex);
      board_.bounds_seen.push_back(bounds);
    }
    board_.sync.arrive_and_wait();
    const auto p = static_cast<std::size_t>(part_);
    std::memcpy(board_.items.data() + stride * bounds[p], values + stride * bounds[p],
                sizeof(double) * stride * (bounds[p + 1] - bounds[p]));
    board_.sync.arrive_and_wait();
    std::memcpy(values, board_.items.data(), sizeof(double) * board_.items.size());
    board_.sync.arrive_and_wait();  // nobody refills the board before everyone has read it
  }

 private:
  Board& board_;
  int parts_;
  int part_;
};

bool bit_identical(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

ForceTerms terms_for(std::size_t n, Evaluator evaluator, Multipole multipole) {
  ForceTerms t;
  t.mass = Eigen::VectorXd::LinSpaced(static_cast<Eigen::Index>(n), 1.0, 2.0);
  t.repulsion.strength = 1e-4;
  t.repulsion.softening = 1e-3;
  t.repulsion.evaluator = evaluator;
  t.repulsion.multipole = multipole;
  t.repulsion.threads = 1;
  t.friction = 0.5;
  for (std::uint32_t i = 0; i + 3 < n; i += 2) t.pulls.push_back({i, i + 3, 0.1});
  return t;
}

/// Derivatives and energies along a few "steps" (a build, then refits), as `parts` threads or one.
struct Run {
  std::vector<Eigen::VectorXd> derivatives;
  std::vector<double> energies;
};

Run run(const ForceTerms& base, const Eigen::Matrix3Xd& x0, int parts, int part, Board* board) {
  ForceTerms t = base;
  std::optional<ThreadPartition> partition;
  if (board != nullptr) {
    partition.emplace(*board, parts, part);
    t.repulsion.partition = &*partition;
  }
  const Eigen::Index n = x0.cols();
  Eigen::VectorXd y = Eigen::VectorXd::Zero(6 * n);
  y.head(3 * n) = Eigen::Map<const Eigen::VectorXd>(x0.data(), 3 * n);
  // Moving from the start: an evaluation at the last one's positions would take its repulsion
  // and exchange nothing.
  y.tail(3 * n) = Eigen::VectorXd::LinSpaced(3 * n, -0.5, 0.5);
  DerivativeScratch scratch;
  Run r;
  Eigen::VectorXd d(y.size());
  for (int step = 0; step < 3; ++step) {
    for (int stage = 0; stage < 3; ++stage) {
      derivative(t, y, stage > 0, scratch, d);
      r.derivatives.push_back(d);
      y += 1e-3 * d;  // move a little, as the stages of a step do
    }
  }
  r.energies.push_back(mechanical_energy(t, y));
  return r;
}

void expect_parts_match_one_process(std::size_t n, Evaluator evaluator, Multipole multipole, int parts) {
  const ForceTerms t = terms_for(n, evaluator, multipole);
  const Eigen::Matrix3Xd x0 = plummer_sphere(n, 21);
  const Run one = run(t, x0, 1, 0, nullptr);
  Board board(parts);
  std::vector<Run> runs(static_cast<std::size_t>(parts));
  std::vector<std::thread> threads;
  for (int p = 0; p < parts; ++p) {
    threads.emplace_back([&, p] { runs[static_cast<std::size_t>(p)] = run(t, x0, parts, p, &board); });
  }
  for (auto& th : threads) th.join();
  const std::string what = std::string(to_string(evaluator)) + " " + to_string(multipole) + " N=" +
                           std::to_string(n) + " parts=" + std::to_string(parts);
  for (const Run& r : runs) {
    ASSERT_EQ(r.derivatives.size(), one.derivatives.size());
    for (std::size_t k = 0; k < one.derivatives.size(); ++k) {
      EXPECT_TRUE(bit_identical(r.derivatives[k], one.derivatives[k])) << what << ", evaluation " << k;
    }
    EXPECT_EQ(r.energies, one.energies) << what;
  }
  // Every part drew the same bounds for each exchange (the entries of one exchange are
  // consecutive: nobody enters the next before all have left this one), and every part got work.
  const auto p_count = static_cast<std::size_t>(parts);
  ASSERT_EQ(board.bounds_seen.size(), p_count * (one.derivatives.size() + 1)) << what;  // + the energy
  for (std::size_t k = 0; k < board.bounds_seen.size(); ++k) {
    const auto& b = board.bounds_seen[k];
    EXPECT_EQ(b, board.bounds_seen[k / p_count * p_count]) << what << ", exchange " << k / p_count;
    EXPECT_EQ(b.size(), p_count + 1) << what;
    EXPECT_EQ(b.back(), n) << what;
    for (std::size_t p = 0; p + 1 < b.size(); ++p) EXPECT_LT(b[p], b[p + 1]) << what;
  }
}

TEST(Partition, DirectSumsMatchOneProcess) {
  for (int parts : {2, 3, 4}) expect_parts_match_one_process(1000, Evaluator::Direct, Multipole::Monopole, parts);
}

TEST(Partition, BarnesHutMatchesOneProcess) {
  for (int parts : {2, 3, 5}) {
    expect_parts_match_one_process(6000, Evaluator::BarnesHut, Multipole::Monopole, parts);
  }
  expect_parts_match_one_process(6000, Evaluator::BarnesHut, Multipole::Quadrupole, 2);
}

}  // namespace
}  // namespace kanoko::integrators
