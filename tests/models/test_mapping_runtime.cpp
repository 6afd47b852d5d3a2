// The mapping applied to traces: [trace] selection and grouping, formulas evaluated per interval
// (and their run-time errors), every shipped example on a trace of its size, and `suggest`.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <regex>

#include "models/layout.hpp"
#include "models/model.hpp"
#include "models/quantities.hpp"
#include "models/suggest.hpp"
#include "src/base/error.hpp"
#include "src/ingest/schema.hpp"
#include "tests/support/model_fixtures.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::models {
namespace KANOKO_UNITY_ID {

using test::node_lines;
using test::timeline_from_text;

mapping::Mapping parse(const std::string& text) { return mapping::parse_mapping_text(text, "r.toml"); }

/// Reads trace text through the mapping's [trace] section.
trace::Timeline read(const std::string& trace_text, const mapping::Mapping& m, ingest::SelectionReport* report = nullptr) {
  test::TempDir dir;
  test::write_text(dir / "t.kntr", trace_text);
  return ingest::read_body_timeline(dir / "t.kntr", m, report);
}

const std::string kRanks =
    "kntr 1\n"
    "node 0 0 name=rank0 host=a rank=0\nnode 0 1 name=rank1 host=a rank=1\n"
    "node 0 2 name=rank2 host=b rank=2\nnode 0 3 name=helper host=b rank=3\n"
    "link 0 0 0 2\nlink 0 1 1 3\n"
    "load 0 0 0.5\nload 0 1 1.0\nload 0 2 0.25\n"
    "state 0 0 0.05 compute\nstate 0 1 0.1 compute\nstate 0 3 0.1 wait\n"
    "msg 0.01 0 1 100\nmsg 0.02 0 2 40\nmsg 0.03 3 2 7\nend 0.1\n";

TEST(TraceSchema, DefaultIsOneBodyPerEntity) {
  ingest::SelectionReport r;
  const auto tl = read(kRanks, parse("[forces.friction]\nbeta = 1\n"), &r);
  ASSERT_EQ(tl.entity_count(), 4U);
  EXPECT_EQ(tl.entities[3].name, "helper");
  EXPECT_EQ(tl.entities[2].rank, 2);
  EXPECT_EQ(r.format, "native");
  EXPECT_EQ(r.states.at("compute"), 2U);
  EXPECT_EQ(tl.links.size(), 2U);
  EXPECT_DOUBLE_EQ(tl.busy_fraction(0, 0), 0.5);
}

TEST(TraceSchema, SelectExcludeAndGroupByHost) {
  ingest::SelectionReport r;
  const auto tl = read(kRanks, parse("[trace]\ngroup_by = \"host\"\nexclude = \"^helper\"\n[forces.friction]\nbeta = 1\n"), &r);
  ASSERT_EQ(tl.entity_count(), 2U);
  EXPECT_EQ(tl.entities[0].name, "a");
  EXPECT_EQ(tl.entities[1].name, "b");
  ASSERT_EQ(r.entities.size(), 4U);
  EXPECT_EQ(r.entities[1].body, "a");
  EXPECT_EQ(r.entities[3].body, "");
  EXPECT_NE(r.entities[3].reason.find("exclude"), std::string::npos);
  EXPECT_EQ(r.members, (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(r.internal_messages, 1U);  // rank0 → rank1, both on host a
  EXPECT_EQ(r.dropped_messages, 1U);   // from the helper
  EXPECT_EQ(r.dropped_links, 1U);      // rank1 – helper
  EXPECT_EQ(tl.links.size(), 1U);
  // Host a's load is the mean of its ranks' samples; its busy time adds up (1.5 of 0.1 s).
  EXPECT_DOUBLE_EQ(tl.load_at(0, 0), 0.75);
  EXPECT_DOUBLE_EQ(tl.busy_fraction(0, 0), 1.5);
  ASSERT_EQ(tl.pairs.size(), 2U);
  EXPECT_EQ(tl.pairs[1].src, 0U);
  EXPECT_EQ(tl.pairs[1].dst, 1U);
  EXPECT_DOUBLE_EQ(tl.pairs[1].bytes, 40.0);
}

TEST(TraceSchema, GroupsTableAndLevels) {
  const std::string groups =
      "[trace]\ngroup_by = \"table\"\ngroups = { rank0 = \"n0\", rank1 = \"n0\", rank2 = \"n1\", n0 = \"rack\", n1 = \"rack\" }\n";
  ingest::SelectionReport r;
  const auto tl = read(kRanks, parse(groups + "[forces.friction]\nbeta = 1\n"), &r);
  EXPECT_EQ(tl.entity_count(), 2U);
  EXPECT_NE(r.entities[3].reason.find("'helper' has no parent"), std::string::npos) << r.entities[3].reason;
  const auto top = read(kRanks, parse(groups + "level = 2\n[forces.friction]\nbeta = 1\n"));
  EXPECT_EQ(top.entity_count(), 1U);
  EXPECT_EQ(top.entities[0].name, "rack");
}

TEST(TraceSchema, NothingSelectedIsAnErrorInTheMapping) {
  try {
    read(kRanks, parse("[trace]\nselect = \"^gpu\"\n[forces.friction]\nbeta = 1\n"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("r.toml:2:10: error: no entity of the trace's 4 became a body"), std::string::npos)
        << e.what();
  }
  ingest::SelectionReport r;
  read(kRanks, parse("[trace]\ncomputing = [\"compute\", \"comptue\"]\n[forces.friction]\nbeta = 1\n"), &r);
  ASSERT_EQ(r.warnings.size(), 1U);
  EXPECT_NE(r.warnings[0].message.find("'comptue' never occurs in the trace (did you mean 'compute'?)"), std::string::npos);
  EXPECT_THROW(read(kRanks, parse("[trace]\nformat = \"nativ\"\n[forces.friction]\nbeta = 1\n")), InputError);
}

TEST(Formulas, MassWeightAndStiffnessPerInterval) {
  const auto m = parse(
      "[bodies]\nplacement = \"line\"\n[mass]\nexpression = \"1 + 10 * load + bytes_sent_total / 100\"\n"
      "[springs]\ntopology = \"explicit\"\nedges = [[0, 1]]\nk = \"2 + bytes\"\n"
      "[forces.communication]\nweight = \"bytes / peak_bytes + src_index\"\n");
  const auto tl = timeline_from_text(node_lines(3) + "load 0 0 0.5\nmsg 0.01 0 1 100\nmsg 0.15 1 2 50\nend 0.2\n");
  Model model(m, tl);
  model.set_interval(0);
  EXPECT_DOUBLE_EQ(model.masses()[0], 1 + 5 + 1);
  EXPECT_DOUBLE_EQ(model.masses()[1], 1.0);
  ASSERT_EQ(model.pulls().size(), 1U);
  EXPECT_DOUBLE_EQ(model.pulls()[0].weight, 1.0);
  model.set_interval(1);
  EXPECT_DOUBLE_EQ(model.masses()[0], 1 + 5 + 1);  // the total holds
  EXPECT_DOUBLE_EQ(model.masses()[1], 1 + 0.5);
  ASSERT_EQ(model.pulls().size(), 1U);
  EXPECT_DOUBLE_EQ(model.pulls()[0].weight, 0.5 + 1);
  // Springs feel their pair's traffic: 100 bytes in interval 0 on spring 0–1, none in 1.
  Eigen::VectorXd y = model.initial_state();
  y(0) -= 1.0;  // stretch the spring by 1
  Eigen::VectorXd d(y.size());
  model.set_interval(0);
  model.derivative(0, y, d);
  const double a0 = d(9);
  model.set_interval(1);
  model.derivative(0, y, d);
  // Mass 7 in both; interval 0 adds the pull of weight 1 on body 0 towards body 1.
  EXPECT_NEAR((a0 * 7 - 1) / 102, d(9) * 7 / 2, 1e-9);
}

TEST(Formulas, DivisionByZeroAtRunTimeNamesTheFormulaAndBody) {
  const auto m = parse("[mass]\nexpression = \"1 / bytes_sent\"\n[forces.friction]\nbeta = 1\n");
  const auto tl = timeline_from_text(node_lines(2) + "msg 0.01 0 1 10\nend 0.1\n");
  try {
    Model model(m, tl);
    FAIL() << "accepted";
  } catch (const RunError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("r.toml:2:15: expression 'mass.expression' = \"1 / bytes_sent\" gives inf for body 1 'b1' in interval 0"),
              std::string::npos) << w;
    EXPECT_NE(w.find("(bytes_sent = 0 here"), std::string::npos) << w;  // the reason: what it divided by
  }
  const auto negative = parse("[mass]\nexpression = \"load - 1\"\n[forces.friction]\nbeta = 1\n");
  EXPECT_THROW(Model(negative, tl), RunError);
  const auto weight = parse("[forces.communication]\nweight = \"-bytes\"\n");
  EXPECT_THROW(Model(weight, tl), RunError);
}

TEST(Formulas, BodyValuesForTheScene) {
  const auto m = parse("[visual]\ncolour = \"index * 2 + msgs_recv\"\n[forces.friction]\nbeta = 1\n");
  const auto tl = timeline_from_text(node_lines(3) + "msg 0.01 0 1 10\nend 0.1\n");
  const Layout layout = build_layout(m, 3, &tl);
  Quantities q(m, tl, layout.edges);
  Eigen::VectorXd v;
  q.body_values(*m.visual.colour, v);
  EXPECT_EQ(v, Eigen::Vector3d(0, 3, 4));
}

/// A native trace of n processes pe0..pe(n-1) on hosts of `per_host`, with ring and random
/// traffic, load samples, compute states and links along a ring.
std::string synthetic_trace(int n, int per_host = 1) {
  std::string s = "kntr 1\n";
  for (int i = 0; i < n; ++i) {
    s += "node 0 " + std::to_string(i) + " name=pe" + std::to_string(i) + " host=h" + std::to_string(i / per_host) +
         " rank=" + std::to_string(i) + "\n";
  }
  for (int i = 0; i < n; ++i) s += "link 0 " + std::to_string(i) + " " + std::to_string(i) + " " + std::to_string((i + 1) % n) + "\n";
  for (int bin = 0; bin < 5; ++bin) {
    const double t = 0.1 * bin;
    for (int i = 0; i < n; ++i) {
      s += "load " + std::to_string(t) + " " + std::to_string(i) + " " + std::to_string(((i * 7 + bin) % 10) / 10.0) + "\n";
    }
    for (int i = 0; i < n; ++i) {
      s += "msg " + std::to_string(t + 0.01) + " " + std::to_string(i) + " " + std::to_string((i + 1 + bin) % n) + " " +
           std::to_string(64 * (1 + i % 5)) + "\n";
    }
    for (int i = 0; i < n; ++i) s += "state " + std::to_string(t + 0.02) + " " + std::to_string(i) + " 0.05 compute\n";
  }
  return s + "end 0.5\n";
}

TEST(Examples, EveryShippedMappingRunsOnATraceOfItsSize) {
  struct Case {
    std::string file;
    int processes;
    int per_host;
    std::size_t bodies;
    std::size_t springs;  ///< expected number of springs (0 = not checked)
  };
  const std::vector<Case> cases = {
      {"paper-fibonacci.toml", 8, 1, 8, 0},    {"paper-mesh.toml", 27, 1, 27, 54},
      {"ring.toml", 16, 1, 16, 16},            {"torus-3d.toml", 64, 1, 64, 192},
      {"hypercube.toml", 16, 1, 16, 32},       {"fat-tree.toml", 32, 1, 32, 96},
      {"dragonfly.toml", 32, 1, 32, 16 + 48 + 6}, {"from-trace.toml", 20, 1, 20, 0},
      {"simgrid-platform.toml", 12, 1, 12, 12}, {"all-to-all-many.toml", 300, 1, 300, 0},
      {"hosts.toml", 24, 4, 6, 0},
  };
  std::size_t shipped = 0;
  for (const auto& f : test::list_dir(test::source_dir() / "mappings")) shipped += f.ends_with(".toml") ? 1U : 0U;
  EXPECT_GE(shipped, cases.size());  // (other helpers' examples are checked by their own tests)
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const auto m = mapping::parse_mapping_file(test::source_dir() / "mappings" / c.file);
    const auto tl = read(synthetic_trace(c.processes, c.per_host), m);
    ASSERT_EQ(tl.entity_count(), c.bodies);
    Model model(m, tl);
    if (c.springs > 0) {
      EXPECT_EQ(model.spring_edges().size(), c.springs);
    }
    Eigen::VectorXd y = model.initial_state();
    Eigen::VectorXd d(y.size());
    for (std::size_t bin = 0; bin <= tl.bin_count; ++bin) {
      model.set_interval(bin);
      model.derivative(0, y, d);
      ASSERT_TRUE(d.allFinite()) << "interval " << bin;
      ASSERT_TRUE((model.masses().array() > 0).all());
    }
    // The example's own comment shows how to run it.
    const std::string text = test::read_text(test::source_dir() / "mappings" / c.file);
    EXPECT_NE(text.find("kanoko "), std::string::npos);
  }
}

TEST(Examples, TopologySizeMismatchIsReportedAgainstTheExample) {
  const auto m = mapping::parse_mapping_file(test::source_dir() / "mappings" / "torus-3d.toml");
  const auto tl = read(synthetic_trace(60), m);
  try {
    Model model(m, tl);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("torus-3d.toml:"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("torus 4×4×4 has 64 nodes but the trace has 60 bodies"), std::string::npos);
  }
}

TEST(Examples, MutatedTopologiesNeverCrash) {
  // Random sizes, dimensions, levels and orders on small traces: a layout or an InputError.
  std::mt19937_64 rng(5);
  const std::vector<std::string> topologies{"ring", "mesh", "torus", "hypercube", "fat-tree", "dragonfly",
                                            "complete", "trace", "links", "none"};
  const std::vector<std::string> numbers{"0", "1", "2", "3", "4", "7", "8", "16", "24", "65536", "1048576"};
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  int built = 0, refused = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int n = 1 + static_cast<int>(rng() % 40);
    std::string text = "[springs]\ntopology = \"" + pick(topologies) + "\"\n";
    if (rng() % 2 != 0) text += "dims = [" + pick(numbers) + ", " + pick(numbers) + (rng() % 2 != 0 ? ", " + pick(numbers) : "") + "]\n";
    if (rng() % 2 != 0) text += "dimension = " + pick(numbers) + "\n";
    if (rng() % 2 != 0) {
      text += "levels = [" + pick(numbers);
      for (int k = 0; k < 7; ++k) text += rng() % 2 != 0 ? ", " + pick(numbers) : "";
      text += "]\n";
    }
    if (rng() % 2 != 0) text += "groups = " + pick(numbers) + "\nrouters = " + pick(numbers) + "\nnodes_per_router = " + pick(numbers) + "\n";
    text += "[bodies]\norder = \"" + pick({"declaration", "rank", "name", "pattern"}) + "\"\npattern = \"(\\\\d+)\"\n";
    if (rng() % 3 == 0) text += "placement = \"" + pick({"cube", "sphere", "topology", "ring", "line"}) + "\"\n";
    text += "[forces.friction]\nbeta = 1\n";
    try {
      const auto m = mapping::parse_mapping_text(text, "x.toml");
      const auto tl = timeline_from_text(synthetic_trace(n));
      const Layout l = build_layout(m, static_cast<std::size_t>(n), &tl);
      ASSERT_EQ(l.positions.cols(), n) << text;
      ASSERT_TRUE(l.positions.allFinite()) << text;
      for (const auto& e : l.edges) ASSERT_TRUE(e[0] < static_cast<std::uint32_t>(n) && e[1] < static_cast<std::uint32_t>(n)) << text;
      ++built;
    } catch (const InputError&) {
      ++refused;
    }
  }
  EXPECT_GT(built, 40);
  EXPECT_GT(refused, 40);
}

/// The all-pairs mean nearest-neighbour distance, as mean_spacing defines it (sampled every
/// n / 4000 bodies).
double all_pairs_spacing(const Eigen::Matrix3Xd& x) {
  const Eigen::Index n = x.cols(), step = std::max<Eigen::Index>(1, n / 4000);
  double sum = 0;
  Eigen::Index count = 0;
  for (Eigen::Index i = 0; i < n; i += step) {
    double best = std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < n; ++j) {
      if (j != i) best = std::min(best, (x.col(i) - x.col(j)).squaredNorm());
    }
    sum += std::sqrt(best);
    ++count;
  }
  return sum / static_cast<double>(count);
}

TEST(MeanSpacing, IsTheAllPairsMeanBitForBit) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> gauss;
  const auto cloud = [&](Eigen::Index n, double flat) {
    Eigen::Matrix3Xd x(3, n);
    for (Eigen::Index i = 0; i < n; ++i) x.col(i) << flat * gauss(rng), gauss(rng), gauss(rng);
    return x;
  };
  std::vector<std::pair<std::string, Eigen::Matrix3Xd>> cases;
  cases.emplace_back("a cloud of 600", cloud(600, 1.0));
  cases.emplace_back("a cloud of 9000, sampled", cloud(9000, 1.0));
  cases.emplace_back("a plane across x (every x the same)", cloud(500, 0.0));
  cases.emplace_back("a thin slab along x", cloud(700, 1e-3));
  Eigen::Matrix3Xd grid(3, 216);  // ties everywhere, and two bodies at one place
  for (Eigen::Index i = 0; i < 216; ++i) grid.col(i) << static_cast<double>(i % 6), static_cast<double>(i / 6 % 6), static_cast<double>(i / 36);
  grid.col(7) = grid.col(100);
  cases.emplace_back("a lattice with a doubled body", grid);
  Eigen::Matrix3Xd two(3, 2);
  two << 0, 3, 0, 4, 0, 0;
  cases.emplace_back("two bodies", two);
  for (const auto& [what, x] : cases) {
    const double expected = all_pairs_spacing(x);
    EXPECT_EQ(mean_spacing(x, -1.0), expected) << what;
  }
  EXPECT_EQ(mean_spacing(two, -1.0), 5.0);
  EXPECT_EQ(mean_spacing(Eigen::Matrix3Xd::Zero(3, 1), -1.0), -1.0) << "one body: the fallback";
}

TEST(Suggest, FollowsTheEnergyArgument) {
  const auto m = mapping::parse_mapping_file(test::source_dir() / "mappings" / "paper-mesh.toml");
  const auto tl = read(test::read_text(test::source_dir() / "traces" / "mesh-skewed-light.kntr"), m);
  const Suggestion s = suggest_parameters(m, tl);
  EXPECT_DOUBLE_EQ(s.beta, 2.0);  // 1 / (5 × 0.1 s), the paper's value
  ASSERT_TRUE(s.gain && s.k && s.length && s.repulsion);
  EXPECT_DOUBLE_EQ(*s.length, 1.0);  // the lattice spacing
  EXPECT_GT(*s.gain, 0.0);
  EXPECT_GT(*s.k, 0.0);
  // dt divides the interval.
  const double steps = tl.interval_s / s.dt;
  EXPECT_NEAR(steps, std::round(steps), 1e-9);
  // The argument is printed with the trace's figures.
  std::string all;
  for (const auto& line : s.reasoning) all += line + "\n";
  EXPECT_NE(all.find("27 bodies"), std::string::npos) << all;
  EXPECT_NE(all.find("dissipation / input at the comfortable speed = 1.25"), std::string::npos) << all;
  // Check the energy balance on the suggested mapping: mean forcing F ≤ 0.8 β m v.
  mapping::Mapping tuned = m;
  tuned.communication->gain = *s.gain;
  Model model(tuned, tl);
  double force = 0, mass = 0;
  for (std::size_t bin = 0; bin < tl.bin_count; ++bin) {
    model.set_interval(bin);
    for (const auto& p : model.pulls()) force += 2 * p.weight;  // symmetric: both ends
    mass += model.masses().sum();
  }
  const double cells = static_cast<double>(tl.bin_count * model.body_count());
  const double speed = 0.1 * 1.0 * s.beta;
  EXPECT_LE(force / cells, 0.8 * s.beta * (mass / cells) * speed * (1 + 1e-9));
}

}  // namespace
}  // namespace kanoko::models
