// The model's force terms, one at a time, against hand-computed accelerations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "integrators/steppers/steppers.hpp"
#include "models/layout.hpp"
#include "models/model.hpp"
#include "tests/support/model_fixtures.hpp"

namespace kanoko::models {
namespace KANOKO_UNITY_ID {

using test::node_lines;
using test::timeline_from_text;

mapping::Mapping parse(const std::string& text) { return mapping::parse_mapping_text(text, "test.toml"); }

/// Accelerations (3×N) at the initial state in interval `bin`.
Eigen::Matrix3Xd accelerations(Model& model, std::size_t bin = 0, const Eigen::VectorXd* state = nullptr) {
  model.set_interval(bin);
  const Eigen::VectorXd y = state != nullptr ? *state : model.initial_state();
  Eigen::VectorXd dydt(y.size());
  model.derivative(0, y, dydt);
  const auto n = static_cast<Eigen::Index>(model.body_count());
  return Eigen::Map<const Eigen::Matrix3Xd>(dydt.data() + 3 * n, 3, n);
}

/// Bodies on a side³ lattice with mesh springs (k 2, length 1.2), then `more`; the second, with
/// repulsion 0.1 and `repulsion` added to [forces.repulsion].
mapping::Mapping lattice_mesh(int side, const std::string& more) {
  const std::string n = std::to_string(side);
  return parse("[bodies]\nplacement = \"lattice\"\nlattice = [" + n + ", " + n + ", " + n +
               "]\n[springs]\ntopology = \"mesh\"\nk = 2\nlength = 1.2\n" + more);
}
mapping::Mapping lattice_mesh_with_repulsion(int side, const std::string& repulsion) {
  return lattice_mesh(side, "[forces.repulsion]\nstrength = 0.1\n" + repulsion);
}

const char* kTwoOnALine = R"(
[bodies]
placement = "line"
size = 2.0
)";

TEST(Model, SenderOnlyCommunicationPullsOnlyTheSender) {
  const auto m = parse(std::string(kTwoOnALine) + "[forces.communication]\nmode = \"sender\"\ngain = 1.5\n");
  const auto tl = timeline_from_text(node_lines(2) + "msg 0.01 0 1 100\nmsg 0.15 1 0 50\nend 0.2\n");
  Model model(m, tl);
  // Bin 0: 0 sent 100 bytes to 1, the peak of the trace, so the pull on 0 is exactly the gain.
  Eigen::Matrix3Xd a = accelerations(model, 0);
  EXPECT_DOUBLE_EQ(a(0, 0), 1.5);  // body 0 at x = -1 pulled towards body 1 at x = +1
  EXPECT_EQ(a.col(1).norm(), 0.0);
  // Bin 1: 1 sent half the peak to 0.
  a = accelerations(model, 1);
  EXPECT_EQ(a.col(0).norm(), 0.0);
  EXPECT_DOUBLE_EQ(a(0, 1), -0.75);
}

TEST(Model, TheMeanOfIntervalsPullsWithTheMeanOfTheirForcing) {
  // The calibration probe's step across several intervals: their pulls, each at 1/count.
  const auto m = parse(std::string(kTwoOnALine) + "[forces.communication]\nmode = \"sender\"\ngain = 1.5\n");
  const auto tl = timeline_from_text(node_lines(2) + "msg 0.01 0 1 100\nmsg 0.15 1 0 50\nend 0.2\n");
  Model model(m, tl);
  model.set_interval_mean(0, 2);
  const Eigen::VectorXd y = model.initial_state();
  Eigen::VectorXd dydt(y.size());
  model.derivative(0, y, dydt);
  EXPECT_DOUBLE_EQ(dydt(6), 0.75);    // body 0: half of bin 0's pull of 1.5
  EXPECT_DOUBLE_EQ(dydt(9), -0.375);  // body 1: half of bin 1's pull of -0.75
  model.set_interval_mean(1, 1);      // one interval: that interval's own terms
  model.derivative(0, y, dydt);
  EXPECT_EQ(dydt(6), 0.0);
  EXPECT_DOUBLE_EQ(dydt(9), -0.75);
}

TEST(Model, SymmetricCommunicationPullsBothEnds) {
  const auto m = parse(std::string(kTwoOnALine) + "[forces.communication]\nmode = \"symmetric\"\ngain = 2\n");
  const auto tl = timeline_from_text(node_lines(2) + "msg 0.01 0 1 100\nend 0.1\n");
  Model model(m, tl);
  const Eigen::Matrix3Xd a = accelerations(model);
  EXPECT_DOUBLE_EQ(a(0, 0), 2.0);
  EXPECT_DOUBLE_EQ(a(0, 1), -2.0);
}

TEST(Model, UnnormalisedCommunicationIsPerByteRate) {
  const auto m = parse(std::string(kTwoOnALine) +
                       "[forces.communication]\nnormalize = \"none\"\ngain = 0.001\nquantity = \"messages\"\n");
  const auto tl = timeline_from_text(node_lines(2) + "msg 0.01 0 1 100\nmsg 0.02 0 1 100\nend 0.1\n");
  Model model(m, tl);
  // 2 messages in 0.1 s = 20 messages/s, times 0.001.
  EXPECT_NEAR(accelerations(model)(0, 0), 0.02, 1e-15);
}

TEST(Model, RepulsionIsInverseSquareOverMass) {
  const auto m = parse(std::string(kTwoOnALine) + "[mass]\nbase = 2.0\n[forces.repulsion]\nstrength = 8\n");
  const auto tl = timeline_from_text(node_lines(2) + "end 0.1\n");
  Model model(m, tl);
  const Eigen::Matrix3Xd a = accelerations(model);
  EXPECT_DOUBLE_EQ(a(0, 0), -8.0 / 4.0 / 2.0);  // R / r² / m, pushed outwards
  EXPECT_DOUBLE_EQ(a(0, 1), 1.0);
}

TEST(Model, HookeSpringPullsTowardsNaturalLength) {
  const auto m = parse(std::string(kTwoOnALine) + "[springs]\ntopology = \"explicit\"\nedges = [[0, 1]]\nk = 3\nlength = 1\n");
  const auto tl = timeline_from_text(node_lines(2) + "end 0.1\n");
  Model model(m, tl);
  const Eigen::Matrix3Xd a = accelerations(model);
  EXPECT_DOUBLE_EQ(a(0, 0), 3.0);  // stretched by 1: pulled together with force k·1
  EXPECT_DOUBLE_EQ(a(0, 1), -3.0);
  // "initial" length: no force at the start.
  const auto m2 = parse(std::string(kTwoOnALine) + "[springs]\ntopology = \"explicit\"\nedges = [[0, 1]]\nk = 3\n");
  Model model2(m2, tl);
  EXPECT_EQ(accelerations(model2).norm(), 0.0);
}

TEST(Model, MassFollowsLoadAndScalesForcesButNotFriction) {
  const auto m = parse(std::string(kTwoOnALine) +
                       "[mass]\nbase = 1\nload_gain = 9\n[forces.repulsion]\nstrength = 4\n[forces.friction]\nbeta = 0.5\n");
  const auto tl = timeline_from_text(node_lines(2) + "load 0 0 1.0\nload 0 1 0.0\nload 0.1 0 0.5\nend 0.2\n");
  Model model(m, tl);
  model.set_interval(0);
  EXPECT_DOUBLE_EQ(model.masses()[0], 10.0);
  EXPECT_DOUBLE_EQ(model.masses()[1], 1.0);
  Eigen::VectorXd y = model.initial_state();
  y.segment(6, 3) << 2.0, 0, 0;  // body 0 moving at vx = 2
  const Eigen::Matrix3Xd a = accelerations(model, 0, &y);
  EXPECT_DOUBLE_EQ(a(0, 0), -1.0 / 10.0 - 0.5 * 2.0);  // repulsion R/r² = 1 over m = 10, friction −βv
  EXPECT_DOUBLE_EQ(a(0, 1), 1.0);
  model.set_interval(1);
  EXPECT_DOUBLE_EQ(model.masses()[0], 5.5);
}

TEST(Model, MassFromBusyStates) {
  const auto m = parse(std::string(kTwoOnALine) +
                       "[mass]\nload_gain = 2\nload = \"busy\"\nbusy_states = [\"work\"]\n[forces.friction]\nbeta = 1\n");
  const auto tl = timeline_from_text(node_lines(2) + "state 0 0 0.05 work\nstate 0 1 0.1 idle\nend 0.1\n", 0.1, m.mass.busy_states);
  Model model(m, tl);
  EXPECT_NEAR(model.masses()[0], 2.0, 1e-12);  // 1 + 2 × 0.5
  EXPECT_DOUBLE_EQ(model.masses()[1], 1.0);
}

TEST(Model, CentrePullRestoresTheInitialCentroid) {
  const auto m = parse(std::string(kTwoOnALine) + "[forces.centre]\nstrength = 0.5\n");
  const auto tl = timeline_from_text(node_lines(2) + "end 0.1\n");
  Model model(m, tl);
  EXPECT_DOUBLE_EQ(accelerations(model)(0, 0), 0.5);  // body at x = -1
}

TEST(Model, SettlingPhaseHasNoCommunicationButKeepsTotals) {
  const auto m = parse(std::string(kTwoOnALine) + "[forces.communication]\ngain = 1\n");
  const auto tl = timeline_from_text(node_lines(2) + "msg 0.01 0 1 100\nmsg 0.12 0 1 300\nend 0.2\n");
  Model model(m, tl);
  Eigen::MatrixXd stats;
  model.set_interval(1);
  model.current_stats(stats);
  const auto names = Model::stat_names(m);
  auto row = [&](const char* name) {
    return static_cast<Eigen::Index>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  EXPECT_EQ(stats(row("bytes_sent"), 0), 300);
  EXPECT_EQ(stats(row("bytes_recv"), 1), 300);
  EXPECT_EQ(stats(row("bytes_sent_total"), 0), 400);
  EXPECT_EQ(stats(row("msgs_recv_total"), 1), 2);
  model.set_interval(5);  // past the trace
  EXPECT_TRUE(model.pulls().empty());
  model.current_stats(stats);
  EXPECT_EQ(stats(row("bytes_sent"), 0), 0);
  EXPECT_EQ(stats(row("bytes_sent_total"), 0), 400);
  model.set_interval(0);  // going back recomputes the totals
  model.current_stats(stats);
  EXPECT_EQ(stats(row("bytes_sent_total"), 0), 100);
}

TEST(Model, EnergyIsConservedWithoutFrictionOrForcing) {
  // Springs + repulsion on a 2×2×2 lattice, perturbed: the energy the model reports must be
  // conserved by RK4 to high accuracy, which checks energy() against derivative().
  const auto m = lattice_mesh_with_repulsion(2, "");
  const auto tl = timeline_from_text(node_lines(8) + "end 0.1\n");
  Model model(m, tl);
  Eigen::VectorXd y = model.initial_state();
  y.segment(24, 3) << 0.3, -0.1, 0.2;
  const double e0 = model.energy(y);
  auto stepper = integrators::make_rk4([&](double t, const Eigen::VectorXd& s, Eigen::VectorXd& d) { model.derivative(t, s, d); }, y.size());
  for (int k = 0; k < 2000; ++k) stepper->step(k * 1e-3, 1e-3, y);
  EXPECT_NEAR(model.energy(y), e0, 1e-9 * std::abs(e0));
}

TEST(Model, AVerletStepRestartedWhereTheLastEndedTakesItsRepulsion) {
  // At an interval boundary the stepper restarts and evaluates again where its last stage ended:
  // the repulsion is taken from that evaluation (the costly part) and the step's next evaluation
  // builds its own tree, so that a run restarted before every step is the run that never
  // restarts, bit for bit, at one repulsion sum per step.
  const auto m = lattice_mesh_with_repulsion(7, "evaluator = \"barnes-hut\"\n");
  // No friction: the stepper's kept acceleration was taken at a predicted velocity.
  const auto tl = timeline_from_text(node_lines(343) + "end 0.1\n");
  auto run = [&](bool restart_every_step) {
    Model model(m, tl);
    Eigen::VectorXd y = model.initial_state();
    for (Eigen::Index i = 0; i < y.size() / 2; ++i) y[i] += 0.05 * std::sin(static_cast<double>(i));
    auto stepper = integrators::make_velocity_verlet(
        [&](double t, const Eigen::VectorXd& s, Eigen::VectorXd& d) { model.derivative(t, s, d); }, y.size());
    for (int k = 0; k < 30; ++k) {
      if (restart_every_step) stepper->restart();
      model.begin_step();
      stepper->step(k * 1e-2, 1e-2, y);
    }
    return std::make_pair(y, stepper->evaluations());
  };
  const auto [kept, kept_evaluations] = run(false);
  const auto [restarted, restarted_evaluations] = run(true);
  EXPECT_EQ(restarted_evaluations, kept_evaluations + 29);  // the stepper did evaluate again
  ASSERT_EQ(restarted.size(), kept.size());
  EXPECT_EQ(std::memcmp(restarted.data(), kept.data(), static_cast<std::size_t>(kept.size()) * sizeof(double)), 0);
}

TEST(Model, AHeldRepulsionIsTheRestingOneAtEveryPosition) {
  // Model::hold_repulsion (the calibration probe): at rest the derivative is the full one, bit
  // for bit; elsewhere it is the springs' and the other terms' plus the repulsion summed at rest.
  const auto m = lattice_mesh_with_repulsion(3, "evaluator = \"direct\"\n");
  const auto tl = timeline_from_text(node_lines(27) + "end 0.1\n");
  Model full(m, tl), held(m, tl);
  held.hold_repulsion();
  EXPECT_EQ(held.terms().repulsion.strength, 0.0);
  const Eigen::VectorXd rest = full.initial_state();
  Eigen::VectorXd d_full(rest.size()), d_held(rest.size());
  full.derivative(0, rest, d_full);
  held.derivative(0, rest, d_held);
  EXPECT_EQ(std::memcmp(d_full.data(), d_held.data(), static_cast<std::size_t>(rest.size()) * sizeof(double)), 0);

  Eigen::VectorXd moved = rest;
  for (Eigen::Index i = 0; i < 81; ++i) moved[i] += 0.2 * std::sin(1.7 * static_cast<double>(i));
  const Eigen::Matrix3Xd a_held = accelerations(held, 0, &moved);
  const Eigen::Matrix3Xd a_full = accelerations(full, 0, &moved);
  Model springs_only(lattice_mesh(3, ""), tl);
  Eigen::Matrix3Xd at_rest = Eigen::Matrix3Xd::Zero(3, 27);
  integrators::ForceScratch scratch;
  integrators::add_repulsion(full.initial_positions(), full.repulsion_params(), scratch, at_rest);
  const Eigen::Matrix3Xd expected = accelerations(springs_only, 0, &moved) + at_rest;  // masses 1
  EXPECT_LT((a_held - expected).cwiseAbs().maxCoeff(), 1e-12 * expected.cwiseAbs().maxCoeff());
  EXPECT_GT((a_held - a_full).cwiseAbs().maxCoeff(), 1e-3 * a_full.cwiseAbs().maxCoeff())
      << "the held repulsion should not follow the bodies";
}

TEST(Layout, CubeVerticesAndCentring) {
  const auto m = parse("[bodies]\nplacement = \"cube\"\nsize = 2\n[forces.friction]\nbeta = 1\n");
  const Eigen::Matrix3Xd x = initial_positions(m, 8);
  EXPECT_LT(x.rowwise().mean().norm(), 1e-15);
  for (Eigen::Index i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(x.col(i).cwiseAbs().maxCoeff(), 1.0);
}

TEST(Layout, MeshEdgesOfA3x3x3) {
  const auto edges = mesh_edges({3, 3, 3});
  EXPECT_EQ(edges.size(), 54U);
  std::vector<int> degree(27, 0);
  for (const auto& e : edges) {
    ++degree[e[0]];
    ++degree[e[1]];
  }
  EXPECT_EQ(degree[13], 6);  // centre
  EXPECT_EQ(degree[0], 3);   // corner
}

TEST(Layout, ErrorsPointIntoTheMapping) {
  const auto cube = parse("[bodies]\nplacement = \"cube\"\n[forces.friction]\nbeta = 1\n");
  try {
    initial_positions(cube, 5);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("test.toml:2:13"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("5 bodies"), std::string::npos);
  }
  const auto lattice = parse("[bodies]\nplacement = \"lattice\"\nlattice = [3, 3, 3]\n[forces.friction]\nbeta = 1\n");
  EXPECT_THROW(initial_positions(lattice, 26), InputError);
  const auto mesh = parse("[springs]\ntopology = \"mesh\"\nmesh = [2, 2, 2]\n");
  EXPECT_THROW(spring_edges(mesh, 9), InputError);
  const auto edges = parse("[springs]\ntopology = \"explicit\"\nedges = [[0, 1], [1, 7]]\n");
  try {
    spring_edges(edges, 4);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("test.toml:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("body 7"), std::string::npos) << e.what();
  }
  const auto dup = parse("[springs]\ntopology = \"explicit\"\nedges = [[0, 1], [1, 0]]\n");
  EXPECT_THROW(spring_edges(dup, 4), InputError);
}

}  // namespace
}  // namespace kanoko::models
