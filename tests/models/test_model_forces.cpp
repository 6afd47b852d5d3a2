// The model's repulsion evaluator, energy account and allocation behaviour at scale.
#include <gtest/gtest.h>

#include "integrators/steppers/steppers.hpp"
#include "models/model.hpp"
#include "tests/support/allocation_counter.hpp"
#include "tests/support/model_fixtures.hpp"

namespace kanoko::models {
namespace KANOKO_UNITY_ID {

using test::node_lines;
using test::timeline_from_text;

mapping::Mapping parse(const std::string& text) { return mapping::parse_mapping_text(text, "test.toml"); }

/// A 3-D lattice of nx·ny·nz bodies with mesh springs, repulsion (evaluator chosen by `repulsion`),
/// symmetric communication between neighbours in interval 0, friction and a centre pull.
std::string lattice_mapping(int nx, int ny, int nz, const std::string& repulsion) {
  return "[bodies]\nplacement = \"lattice\"\nlattice = [" + std::to_string(nx) + ", " + std::to_string(ny) + ", " +
         std::to_string(nz) + "]\n[springs]\ntopology = \"mesh\"\nk = 2\n[forces.repulsion]\nstrength = 0.01\n" +
         repulsion + "\n[forces.communication]\nmode = \"symmetric\"\ngain = 0.5\n[forces.friction]\nbeta = 0.5\n" +
         "[forces.centre]\nstrength = 0.1\n";
}

std::string lattice_trace(int n) {
  std::string t = node_lines(n);
  for (int i = 0; i + 1 < n; i += 7) t += "msg 0.01 " + std::to_string(i) + " " + std::to_string(i + 1) + " 100\n";
  return t + "end 0.2\n";
}

TEST(ModelForces, MappingChoosesTheEvaluator) {
  const auto tl = timeline_from_text(lattice_trace(3000));
  for (const auto& [key, expected] : std::vector<std::pair<std::string, integrators::Evaluator>>{
           {"", integrators::Evaluator::BarnesHut},  // auto, above the direct limit
           {"evaluator = \"direct\"", integrators::Evaluator::Direct},
           {"evaluator = \"barnes-hut\"\ntheta = 0.3\nmultipole = \"quadrupole\"", integrators::Evaluator::BarnesHut}}) {
    const auto m = parse(lattice_mapping(15, 20, 10, key));
    Model model(m, tl);
    Eigen::VectorXd y = model.initial_state();
    Eigen::VectorXd d(y.size());
    model.derivative(0, y, d);
    EXPECT_EQ(model.force_stats().evaluator, expected) << key;
  }
  const auto m = parse(lattice_mapping(15, 20, 10, "evaluator = \"barnes-hut\"\ntheta = 0.3\nmultipole = \"quadrupole\""));
  const Model model(m, tl);
  EXPECT_DOUBLE_EQ(model.repulsion_params().theta, 0.3);
  EXPECT_EQ(model.repulsion_params().multipole, integrators::Multipole::Quadrupole);
}

TEST(ModelForces, BarnesHutAndDirectAgreeInTheModel) {
  const auto tl = timeline_from_text(lattice_trace(3000));
  const Eigen::VectorXd shake = 0.05 * Eigen::VectorXd::Random(3 * 3000);  // off the lattice, the same for all
  auto accelerations = [&](const std::string& key) {
    const auto m = parse(lattice_mapping(15, 20, 10, key));
    Model model(m, tl);
    Eigen::VectorXd y = model.initial_state();
    y.head(y.size() / 2) += shake;
    Eigen::VectorXd d(y.size());
    model.derivative(0, y, d);
    return Eigen::VectorXd(d.tail(d.size() / 2));
  };
  const Eigen::VectorXd direct = accelerations("evaluator = \"direct\"");
  const Eigen::VectorXd exact_tree = accelerations("evaluator = \"barnes-hut\"\ntheta = 0");
  const Eigen::VectorXd tree = accelerations("evaluator = \"barnes-hut\"");
  EXPECT_LT((exact_tree - direct).norm(), 1e-12 * direct.norm());
  EXPECT_LT((tree - direct).norm(), 1e-2 * direct.norm());
  EXPECT_GT((tree - direct).norm(), 0.0);
}

TEST(ModelForces, EnergyIncludesTheCentrePull) {
  // Springs, repulsion and the centre pull, no friction or forcing: RK4 conserves the energy the
  // model reports, which checks energy() (now with the centre term) against derivative().
  const auto m = parse(R"(
[bodies]
placement = "lattice"
lattice = [2, 2, 2]
[springs]
topology = "mesh"
k = 2
length = 1.2
[forces.repulsion]
strength = 0.1
[forces.centre]
strength = 0.7
)");
  const auto tl = timeline_from_text(node_lines(8) + "end 0.1\n");
  Model model(m, tl);
  Eigen::VectorXd y = model.initial_state();
  y.segment(24, 3) << 0.3, -0.1, 0.2;
  y.segment(27, 3) << 0.2, 0.2, 0.0;
  const double e0 = model.energy(y);
  auto stepper = integrators::make_rk4(
      [&](double t, const Eigen::VectorXd& s, Eigen::VectorXd& d) { model.derivative(t, s, d); }, y.size());
  for (int k = 0; k < 2000; ++k) stepper->step(k * 1e-3, 1e-3, y);
  EXPECT_NEAR(model.energy(y), e0, 1e-9 * std::abs(e0));
}

TEST(ModelForces, PowersOfForcingAndFriction) {
  const auto m = parse(
      "[bodies]\nplacement = \"line\"\nsize = 2.0\n[mass]\nbase = 3\n[forces.communication]\nmode = \"symmetric\"\n"
      "gain = 1.5\n[forces.friction]\nbeta = 0.5\n");
  const auto tl = timeline_from_text(node_lines(2) + "msg 0.01 0 1 100\nend 0.2\n");
  Model model(m, tl);
  Eigen::VectorXd y = model.initial_state();
  y.segment(6, 3) << 2.0, 1.0, 0.0;   // body 0 moves towards body 1 (and sideways)
  y.segment(9, 3) << 0.0, 0.0, -1.0;  // body 1 moves perpendicular to the pull
  // Pull of 1.5 along +x on body 0 (doing work 1.5 · 2) and along −x on body 1 (no work).
  EXPECT_DOUBLE_EQ(model.forcing_power(y), 3.0);
  EXPECT_DOUBLE_EQ(model.friction_power(y), 0.5 * 3 * (4 + 1 + 1));
  EXPECT_DOUBLE_EQ(model.kinetic_energy(y), 0.5 * 3 * (4 + 1 + 1));
  model.set_interval(1);  // no traffic in interval 1
  EXPECT_EQ(model.forcing_power(y), 0.0);
}

TEST(ModelForces, DerivativeDoesNotAllocateAfterWarmUp) {
  const auto tl = timeline_from_text(lattice_trace(3000));
  for (const std::string key : {"evaluator = \"direct\"", "evaluator = \"barnes-hut\""}) {
    const auto m = parse(lattice_mapping(15, 20, 10, key));
    Model model(m, tl);
    const Eigen::VectorXd y = model.initial_state();
    Eigen::VectorXd d(y.size());
    model.derivative(0, y, d);
    test::start_counting_allocations();
    for (int k = 0; k < 3; ++k) model.derivative(0, y, d);
    EXPECT_EQ(test::stop_counting_allocations(), 0U) << key;
  }
}

}  // namespace
}  // namespace kanoko::models
