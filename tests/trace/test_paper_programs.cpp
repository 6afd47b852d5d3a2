// The paper's two programs as generated traces: the Fibonacci model computes the right value with
// the right number of calls and the message pattern of each distribution method; the mesh model
// gives light and heavy loads identical messages; every trace is in time order, deterministic,
// consistent (load = busy time of the states) and accepted by the native reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/paper_programs.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

using Distribution = FibonacciOptions::Distribution;

// ---------------------------------------------------------------------------------------------
// A small independent parser of the generated text, so the tests check what is written.
// ---------------------------------------------------------------------------------------------

struct ParsedMsg {
  double send = 0;
  int src = 0;
  int dst = 0;
  std::uint64_t bytes = 0;
  int tag = -1;
  double recv = -1;
};
struct ParsedState {
  double begin = 0;
  int node = 0;
  double duration = 0;
  std::string name;
};
struct ParsedLoad {
  double time = 0;
  int node = 0;
  double value = 0;
};
struct ParsedTrace {
  std::vector<std::string> node_names;
  std::vector<std::pair<int, int>> links;
  std::vector<ParsedMsg> msgs;
  std::vector<ParsedState> states;
  std::vector<ParsedLoad> loads;
  std::vector<double> entry_times;  ///< time field of every timed entry, in file order
  double end = -1;
};

ParsedTrace parse(const std::string& text) {
  ParsedTrace t;
  std::istringstream in(text);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (first) {
      EXPECT_EQ(line, "kntr 1");
      first = false;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string type;
    double time = 0;
    f >> type >> time;
    t.entry_times.push_back(time);
    if (type == "node") {
      int id = 0;
      std::string name;
      f >> id >> name;
      EXPECT_EQ(id, static_cast<int>(t.node_names.size()));
      t.node_names.push_back(name.substr(name.find('=') + 1));
    } else if (type == "link") {
      int id = 0;
      int a = 0;
      int b = 0;
      f >> id >> a >> b;
      t.links.emplace_back(a, b);
    } else if (type == "msg") {
      ParsedMsg m;
      m.send = time;
      std::string tag;
      std::string recv;
      f >> m.src >> m.dst >> m.bytes >> tag >> recv;
      EXPECT_EQ(tag.rfind("tag=", 0), 0U) << line;
      EXPECT_EQ(recv.rfind("recv=", 0), 0U) << line;
      m.tag = std::stoi(tag.substr(4));
      m.recv = std::stod(recv.substr(5));
      t.msgs.push_back(m);
    } else if (type == "state") {
      ParsedState s;
      s.begin = time;
      f >> s.node >> s.duration >> s.name;
      t.states.push_back(s);
    } else if (type == "load") {
      ParsedLoad l;
      l.time = time;
      f >> l.node >> l.value;
      t.loads.push_back(l);
    } else if (type == "end") {
      t.end = time;
    } else {
      ADD_FAILURE() << "unexpected entry: " << line;
    }
    EXPECT_FALSE(f.fail()) << line;
  }
  return t;
}

std::string fibonacci_text(const FibonacciOptions& o, FibonacciResult* result = nullptr) {
  std::ostringstream out;
  const FibonacciResult r = write_fibonacci_trace(o, out);
  if (result != nullptr) *result = r;
  return out.str();
}

std::string mesh_text(const MeshOptions& o, MeshResult* result = nullptr) {
  std::ostringstream out;
  const MeshResult r = write_mesh_trace(o, out);
  if (result != nullptr) *result = r;
  return out.str();
}

FibonacciOptions fib_options(Distribution d, int n = 22, int nodes = 8) {
  FibonacciOptions o;
  o.distribution = d;
  o.n = n;
  o.nodes = nodes;
  return o;
}

MeshOptions mesh_options(MeshOptions::Communication c, MeshOptions::Load l) {
  MeshOptions o;
  o.communication = c;
  o.load = l;
  return o;
}

std::uint64_t fib(int n) {
  std::uint64_t a = 0;
  std::uint64_t b = 1;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t c = a + b;
    a = b;
    b = c;
  }
  return a;
}

/// Checks the properties every generated trace must have.
void expect_well_formed(const ParsedTrace& t, std::size_t nodes) {
  ASSERT_EQ(t.node_names.size(), nodes);
  EXPECT_TRUE(std::is_sorted(t.entry_times.begin(), t.entry_times.end())) << "times go backwards";
  ASSERT_GE(t.end, 0);
  EXPECT_GE(t.end, t.entry_times.back());
  for (const auto& m : t.msgs) {
    EXPECT_GE(m.recv, m.send);
    EXPECT_LE(m.recv, t.end + 1e-9);
    EXPECT_NE(m.src, m.dst);
  }
  // States of one node never overlap, end by the end, and the load sample of each period is the
  // busy time of the states inside it.
  std::vector<std::vector<const ParsedState*>> per_node(nodes);
  for (const auto& s : t.states) {
    ASSERT_LT(static_cast<std::size_t>(s.node), nodes);
    per_node[static_cast<std::size_t>(s.node)].push_back(&s);
    EXPECT_GT(s.duration, 0);
    EXPECT_LE(s.begin + s.duration, t.end + 1e-9);
  }
  for (const auto& list : per_node) {
    for (std::size_t i = 1; i < list.size(); ++i) {
      EXPECT_GE(list[i]->begin + 1e-12, list[i - 1]->begin + list[i - 1]->duration);
    }
  }
  const double period = 0.1;
  const auto periods = static_cast<std::size_t>(std::ceil(t.end / period - 1e-9));
  ASSERT_EQ(t.loads.size(), periods * nodes);
  std::vector<double> busy(periods * nodes, 0.0);
  for (const auto& s : t.states) {
    double b = s.begin;
    const double e = s.begin + s.duration;
    while (b < e - 1e-12) {
      const auto p = std::min(periods - 1, static_cast<std::size_t>(std::floor(b / period + 1e-9)));
      const double piece_end = std::min(e, static_cast<double>(p + 1) * period);
      busy[p * nodes + static_cast<std::size_t>(s.node)] += piece_end - b;
      b = piece_end;
    }
  }
  for (const auto& l : t.loads) {
    EXPECT_GE(l.value, 0.0);
    EXPECT_LE(l.value, 1.0);
    const auto p = static_cast<std::size_t>(std::llround(l.time / period));
    EXPECT_NEAR(l.time, static_cast<double>(p) * period, 1e-9);
    const double length = std::min(period, t.end - static_cast<double>(p) * period);
    EXPECT_NEAR(l.value, busy[p * nodes + static_cast<std::size_t>(l.node)] / length, 2e-5)
        << "node " << l.node << " period " << p;
  }
}

/// Call messages (tag 1) per ordered pair.
std::map<std::pair<int, int>, int> call_counts(const ParsedTrace& t) {
  std::map<std::pair<int, int>, int> counts;
  for (const auto& m : t.msgs) {
    if (m.tag == 1) ++counts[{m.src, m.dst}];
  }
  return counts;
}

// ---------------------------------------------------------------------------------------------
// Fibonacci
// ---------------------------------------------------------------------------------------------

TEST(PaperFibonacci, ComputesFibAndMakesTwoFibNPlusOneMinusOneCalls) {
  for (const Distribution d : {Distribution::Random, Distribution::Ring, Distribution::Torus}) {
    for (const int n : {0, 1, 2, 3, 7, 12, 22}) {
      FibonacciResult r;
      const ParsedTrace t = parse(fibonacci_text(fib_options(d, n), &r));
      SCOPED_TRACE(std::string(to_string(d)) + " n=" + std::to_string(n));
      EXPECT_EQ(r.value, fib(n));
      EXPECT_EQ(r.calls, 2 * fib(n + 1) - 1);
      EXPECT_EQ(r.messages, 2 * (r.calls - 1));
      EXPECT_EQ(r.bytes, r.messages * 40);
      ASSERT_EQ(t.msgs.size(), r.messages);
      EXPECT_EQ(std::count_if(t.msgs.begin(), t.msgs.end(),
                              [](const ParsedMsg& m) { return m.tag == 1; }),
                static_cast<std::ptrdiff_t>(r.calls - 1));
      EXPECT_EQ(r.states, t.states.size());
      EXPECT_DOUBLE_EQ(r.end_s, t.end);
    }
  }
}

TEST(PaperFibonacci, Fib22RunsForSecondsOfTraceTime) {
  for (const Distribution d : {Distribution::Random, Distribution::Ring, Distribution::Torus}) {
    FibonacciResult r;
    const ParsedTrace t = parse(fibonacci_text(fib_options(d), &r));
    SCOPED_TRACE(std::string(to_string(d)));
    EXPECT_EQ(r.value, 17711U);
    EXPECT_EQ(r.calls, 57313U);
    // A few seconds, so that 0.1 s sampling gives tens of intervals.
    EXPECT_GE(r.end_s, 2.0);
    EXPECT_LE(r.end_s, 10.0);
    expect_well_formed(t, 8);
    EXPECT_EQ(t.node_names.front(), "pe0");
    EXPECT_EQ(t.node_names.back(), "pe7");
  }
}

TEST(PaperFibonacci, RingSendsCallsToTheSuccessorAndRepliesToThePredecessor) {
  const ParsedTrace t = parse(fibonacci_text(fib_options(Distribution::Ring)));
  for (const auto& m : t.msgs) {
    if (m.tag == 1) {
      EXPECT_EQ(m.dst, (m.src + 1) % 8);
    } else {
      ASSERT_EQ(m.tag, 2);
      EXPECT_EQ(m.dst, (m.src + 7) % 8);
    }
  }
  EXPECT_EQ(call_counts(t).size(), 8U);  // every node calls, each exactly one other node
}

TEST(PaperFibonacci, TorusSendsOneChildRightAndOneDown) {
  struct Case {
    int nodes, rows, cols;
  };
  for (const Case c : {Case{8, 2, 4}, Case{12, 3, 4}, Case{9, 3, 3}}) {
    SCOPED_TRACE("nodes=" + std::to_string(c.nodes));
    FibonacciResult r;
    const ParsedTrace t = parse(fibonacci_text(fib_options(Distribution::Torus, 18, c.nodes), &r));
    EXPECT_EQ(r.torus_rows, c.rows);
    EXPECT_EQ(r.torus_cols, c.cols);
    const auto counts = call_counts(t);
    for (int node = 0; node < c.nodes; ++node) {
      const int row = node / c.cols;
      const int col = node % c.cols;
      const int right = row * c.cols + (col + 1) % c.cols;
      const int down = ((row + 1) % c.rows) * c.cols + col;
      std::set<int> targets;
      for (const auto& [pair, n] : counts) {
        if (pair.first == node) targets.insert(pair.second);
      }
      EXPECT_EQ(targets, (std::set<int>{right, down})) << "node " << node;
      // Every spawn sends one child each way, so both directions carry the same number of calls.
      const auto to_right = counts.find({node, right});
      const auto to_down = counts.find({node, down});
      ASSERT_NE(to_right, counts.end());
      ASSERT_NE(to_down, counts.end());
      EXPECT_EQ(to_right->second, to_down->second);
    }
    for (const auto& m : t.msgs) {
      if (m.tag == 2) {
        EXPECT_EQ(counts.count({m.dst, m.src}), 1U) << "a reply goes back along a call";
      }
    }
  }
}

TEST(PaperFibonacci, RandomSpreadsCallsUniformlyOverPairs) {
  const ParsedTrace t = parse(fibonacci_text(fib_options(Distribution::Random)));
  const auto counts = call_counts(t);
  ASSERT_EQ(counts.size(), 56U);  // all ordered pairs of 8 nodes, none to itself
  std::map<int, int> row_total;
  for (const auto& [pair, n] : counts) row_total[pair.first] += n;
  // Pearson chi-square of each source's destinations against uniform over the other 7 nodes:
  // 8 x 6 = 48 degrees of freedom; 84.0 is the 0.1 % critical value.
  double chi2 = 0;
  int lo = 1 << 30;
  int hi = 0;
  for (const auto& [pair, n] : counts) {
    const double expected = row_total[pair.first] / 7.0;
    chi2 += (n - expected) * (n - expected) / expected;
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  EXPECT_LT(chi2, 84.0);
  EXPECT_LT(static_cast<double>(hi) / lo, 1.25);
}

TEST(PaperFibonacci, RandomDependsOnTheSeedAndOnlyOnTheSeed) {
  FibonacciOptions o = fib_options(Distribution::Random, 16);
  const std::string a = fibonacci_text(o);
  EXPECT_EQ(a, fibonacci_text(o));
  o.seed = 2;
  const std::string b = fibonacci_text(o);
  EXPECT_NE(a, b);
  EXPECT_EQ(b, fibonacci_text(o));
}

TEST(PaperFibonacci, OutputIsDeterministic) {
  for (const Distribution d : {Distribution::Random, Distribution::Ring, Distribution::Torus}) {
    EXPECT_EQ(fibonacci_text(fib_options(d)), fibonacci_text(fib_options(d))) << to_string(d);
  }
}

TEST(PaperFibonacci, DetailedStatesSplitCpuTimeIntoRecvComputeAndSend) {
  for (const Distribution d : {Distribution::Random, Distribution::Ring, Distribution::Torus}) {
    FibonacciOptions o = fib_options(d, 14);
    o.detailed_states = true;
    FibonacciResult r;
    const ParsedTrace detailed = parse(fibonacci_text(o, &r));
    expect_well_formed(detailed, 8);
    std::map<std::string, double> seconds;
    for (const auto& s : detailed.states) seconds[s.name] += s.duration;
    ASSERT_EQ(seconds.size(), 3U);
    const double internal = static_cast<double>(fib(15) - 1);  // calls with k >= 2
    const double leaves = static_cast<double>(fib(15));
    EXPECT_NEAR(seconds["compute"],
                internal * (o.spawn_compute_s + o.add_compute_s) + leaves * o.leaf_compute_s, 1e-6);
    EXPECT_NEAR(seconds["send"], static_cast<double>(r.messages) * o.send_overhead_s, 1e-6);
    EXPECT_NEAR(seconds["recv"], static_cast<double>(r.messages) * o.recv_overhead_s, 1e-6);

    // The default coarse states cover exactly the same CPU time as compute runs.
    o.detailed_states = false;
    const ParsedTrace coarse = parse(fibonacci_text(o));
    double coarse_total = 0;
    for (const auto& s : coarse.states) {
      EXPECT_EQ(s.name, "compute");
      coarse_total += s.duration;
    }
    EXPECT_NEAR(coarse_total, seconds["compute"] + seconds["send"] + seconds["recv"], 1e-6);
    EXPECT_LT(coarse.states.size(), detailed.states.size());
    // Messages do not depend on how states are written.
    ASSERT_EQ(coarse.msgs.size(), detailed.msgs.size());
    for (std::size_t i = 0; i < coarse.msgs.size(); ++i) {
      EXPECT_EQ(coarse.msgs[i].send, detailed.msgs[i].send);
      EXPECT_EQ(coarse.msgs[i].recv, detailed.msgs[i].recv);
    }
  }
}

TEST(PaperFibonacci, MessagesRespectLatencyAndOverheads) {
  const FibonacciOptions o = fib_options(Distribution::Ring, 12);
  const ParsedTrace t = parse(fibonacci_text(o));
  // send -> receive completes no sooner than send overhead + latency + transfer + recv overhead.
  const double minimum =
      o.send_overhead_s + o.latency_s + 40 / o.bandwidth_bytes_per_s + o.recv_overhead_s;
  double shortest = 1e9;
  for (const auto& m : t.msgs) shortest = std::min(shortest, m.recv - m.send);
  EXPECT_NEAR(shortest, minimum, 1e-9);
}

TEST(PaperFibonacci, TorusShapes) {
  EXPECT_EQ(fibonacci_torus_shape(8), (std::array<int, 2>{2, 4}));
  EXPECT_EQ(fibonacci_torus_shape(4), (std::array<int, 2>{2, 2}));
  EXPECT_EQ(fibonacci_torus_shape(16), (std::array<int, 2>{4, 4}));
  EXPECT_EQ(fibonacci_torus_shape(18), (std::array<int, 2>{3, 6}));
  for (const int bad : {2, 3, 5, 7, 13})
    EXPECT_THROW(fibonacci_torus_shape(bad), InputError) << bad;
}

TEST(PaperFibonacci, BadOptionsAreRejected) {
  auto rejects = [](FibonacciOptions o, const std::string& fragment) {
    std::ostringstream out;
    try {
      write_fibonacci_trace(o, out);
      ADD_FAILURE() << "accepted: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
    EXPECT_TRUE(out.str().empty());
  };
  FibonacciOptions o;
  o.n = 28;
  rejects(o, "n = 28");
  o = FibonacciOptions{};
  o.n = -1;
  rejects(o, "n = -1");
  o = FibonacciOptions{};
  o.nodes = 1;
  rejects(o, "nodes = 1");
  o = fib_options(Distribution::Torus, 10, 7);
  rejects(o, "2-D torus");
  o = FibonacciOptions{};
  o.sample_interval_s = 0;
  rejects(o, "sample_interval_s");
  o = FibonacciOptions{};
  o.latency_s = std::nan("");
  rejects(o, "latency_s");
  o = FibonacciOptions{};
  o.bandwidth_bytes_per_s = 0;
  rejects(o, "bandwidth");
  o = FibonacciOptions{};
  o.sample_interval_s = 1e-6;  // 4 s of fib(22) in 1 us periods: tens of millions of samples
  rejects(o, "use a longer sampling period");
}

TEST(PaperFibonacci, DistributionNames) {
  EXPECT_EQ(parse_fibonacci_distribution("random"), Distribution::Random);
  EXPECT_EQ(parse_fibonacci_distribution("ring"), Distribution::Ring);
  EXPECT_EQ(parse_fibonacci_distribution("torus"), Distribution::Torus);
  try {
    parse_fibonacci_distribution("rnadom");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("valid: random, ring, torus"), std::string::npos) << what;
    EXPECT_NE(what.find("did you mean 'random'"), std::string::npos) << what;
  }
}

// ---------------------------------------------------------------------------------------------
// Mesh
// ---------------------------------------------------------------------------------------------

using Communication = MeshOptions::Communication;
using Load = MeshOptions::Load;

TEST(PaperMesh, DeclaresTheMeshAndOnlyTalksAlongItsEdges) {
  MeshResult r;
  const ParsedTrace t = parse(mesh_text(mesh_options(Communication::Skewed, Load::Light), &r));
  expect_well_formed(t, 27);
  EXPECT_EQ(t.node_names[0], "n(0,0,0)");
  EXPECT_EQ(t.node_names[5], "n(2,1,0)");
  EXPECT_EQ(t.node_names[26], "n(2,2,2)");
  ASSERT_EQ(t.links.size(), 54U);
  std::set<std::pair<int, int>> edges;
  for (auto [a, b] : t.links) {
    EXPECT_LT(a, b);
    edges.insert({a, b});
  }
  EXPECT_EQ(edges.size(), 54U);
  // 160 iterations × 108 directed edges, each one halo per iteration.
  EXPECT_EQ(r.messages, 160U * 108U);
  ASSERT_EQ(t.msgs.size(), r.messages);
  std::map<std::pair<int, int>, int> per_pair;
  for (const auto& m : t.msgs) {
    EXPECT_EQ(edges.count({std::min(m.src, m.dst), std::max(m.src, m.dst)}), 1U);
    ++per_pair[{m.src, m.dst}];
    EXPECT_GE(m.tag, 1);
    EXPECT_LE(m.tag, 3);
  }
  EXPECT_EQ(per_pair.size(), 108U);
  for (const auto& [pair, n] : per_pair) EXPECT_EQ(n, 160);
  EXPECT_DOUBLE_EQ(t.end, 8.0);
  EXPECT_DOUBLE_EQ(r.end_s, 8.0);
}

TEST(PaperMesh, LightAndHeavyHaveExactlyTheSameMessages) {
  for (const Communication c : {Communication::Uniform, Communication::Skewed}) {
    const std::string light = mesh_text(mesh_options(c, Load::Light));
    const std::string heavy = mesh_text(mesh_options(c, Load::Heavy));
    auto msg_lines = [](const std::string& text) {
      std::vector<std::string> lines;
      std::istringstream in(text);
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("msg ", 0) == 0) lines.push_back(line);
      }
      return lines;
    };
    const auto a = msg_lines(light);
    EXPECT_EQ(a.size(), 160U * 108U);
    EXPECT_EQ(a, msg_lines(heavy)) << to_string(c);
    EXPECT_NE(light, heavy);
  }
}

TEST(PaperMesh, HeavyLoadFillsTheIterationAndLightLeavesItMostlyIdle) {
  for (const Communication c : {Communication::Uniform, Communication::Skewed}) {
    MeshResult light;
    MeshResult heavy;
    const ParsedTrace tl = parse(mesh_text(mesh_options(c, Load::Light), &light));
    const ParsedTrace th = parse(mesh_text(mesh_options(c, Load::Heavy), &heavy));
    expect_well_formed(tl, 27);
    expect_well_formed(th, 27);
    EXPECT_NEAR(light.mean_load, 0.2, 0.01);
    EXPECT_NEAR(heavy.mean_load, 0.9, 0.01);
    for (const auto& l : tl.loads) EXPECT_NEAR(l.value, 0.2, 0.01);
    for (const auto& l : th.loads) EXPECT_NEAR(l.value, 0.9, 0.01);
    EXPECT_EQ(light.max_exchange_s, heavy.max_exchange_s);
  }
}

/// Bytes per ordered pair per 0.1 s interval, from the parsed messages.
std::map<std::pair<int, int>, std::vector<std::uint64_t>> traffic_per_interval(
    const ParsedTrace& t) {
  const auto bins = static_cast<std::size_t>(std::llround(t.end / 0.1));
  std::map<std::pair<int, int>, std::vector<std::uint64_t>> traffic;
  for (const auto& m : t.msgs) {
    auto& v = traffic[{m.src, m.dst}];
    v.resize(bins, 0);
    v[std::min(bins - 1, static_cast<std::size_t>(std::floor(m.send / 0.1 + 1e-9)))] += m.bytes;
  }
  return traffic;
}

TEST(PaperMesh, UniformTrafficIsTheSameOnEveryEdgeAndChangesWithThePhase) {
  const ParsedTrace t = parse(mesh_text(mesh_options(Communication::Uniform, Load::Light)));
  const auto traffic = traffic_per_interval(t);
  const auto& reference = traffic.begin()->second;
  for (const auto& [pair, v] : traffic) EXPECT_EQ(v, reference);
  // 2 s cycles: 12 intervals of 2 × 32 KiB, then 8 intervals of 2 × 8 KiB.
  ASSERT_EQ(reference.size(), 80U);
  for (std::size_t bin = 0; bin < reference.size(); ++bin) {
    EXPECT_EQ(reference[bin], bin % 20 < 12 ? 2U * 32768U : 2U * 8192U) << "interval " << bin;
  }
}

TEST(PaperMesh, SkewedTrafficIsConcentratedInTheHotOctant) {
  const MeshOptions o = mesh_options(Communication::Skewed, Load::Heavy);
  const ParsedTrace t = parse(mesh_text(o));
  auto hot = [](int i) { return i % 3 < 2 && (i / 3) % 3 < 2 && i / 9 < 2; };
  int hot_pairs = 0;
  for (const auto& [pair, v] : traffic_per_interval(t)) {
    const bool inside = hot(pair.first) && hot(pair.second);
    hot_pairs += inside ? 1 : 0;
    for (std::size_t bin = 0; bin < v.size(); ++bin) {
      const std::uint64_t uniform = bin % 20 < 12 ? 2U * 32768U : 2U * 8192U;
      EXPECT_EQ(v[bin], inside ? 4 * uniform : uniform);
    }
    EXPECT_EQ(mesh_halo_bytes(o, 0, pair.first, pair.second), inside ? 4U * 32768U : 32768U);
    EXPECT_EQ(mesh_halo_bytes(o, 30, pair.first, pair.second), inside ? 4U * 8192U : 8192U);
  }
  EXPECT_EQ(hot_pairs, 24);  // the 12 edges of the 2×2×2 corner cube, both directions
  EXPECT_THROW(mesh_halo_bytes(o, 0, 0, 4), InputError);  // diagonal: not a mesh edge
}

TEST(PaperMesh, OutputIsDeterministic) {
  const MeshOptions o = mesh_options(Communication::Skewed, Load::Heavy);
  EXPECT_EQ(mesh_text(o), mesh_text(o));
}

TEST(PaperMesh, OtherShapesAndIterationCounts) {
  MeshOptions o = mesh_options(Communication::Skewed, Load::Light);
  o.dims = {4, 2, 1};
  o.iterations = 7;  // 0.35 s: the last load sample covers a half period
  MeshResult r;
  const ParsedTrace t = parse(mesh_text(o, &r));
  expect_well_formed(t, 8);
  EXPECT_EQ(r.links, 10U);  // 3·2 along x + 4·1 along y
  EXPECT_EQ(r.messages, 7U * 20U);
  EXPECT_DOUBLE_EQ(t.end, 0.35);
}

TEST(PaperMesh, ComputeThatOverrunsTheIterationIsRejected) {
  MeshOptions o = mesh_options(Communication::Skewed, Load::Heavy);
  o.heavy_compute_s = 0.049;
  std::ostringstream out;
  try {
    write_mesh_trace(o, out);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("overruns"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(out.str().empty());
}

TEST(PaperMesh, BadOptionsAndNamesAreRejected) {
  MeshOptions o;
  o.dims = {1, 1, 1};
  EXPECT_THROW(validate(o), InputError);
  o = MeshOptions{};
  o.iterations = 0;
  EXPECT_THROW(validate(o), InputError);
  o = MeshOptions{};
  o.active_iterations = 41;
  EXPECT_THROW(validate(o), InputError);
  o = MeshOptions{};
  o.iteration_s = -1;
  EXPECT_THROW(validate(o), InputError);
  o = MeshOptions{};
  o.dims = {16, 16, 16};
  o.iterations = 1000;  // 23 M messages
  EXPECT_THROW(validate(o), InputError);
  EXPECT_NO_THROW(validate(MeshOptions{}));

  EXPECT_EQ(parse_mesh_communication("skewed"), Communication::Skewed);
  EXPECT_EQ(parse_mesh_load("heavy"), Load::Heavy);
  try {
    parse_mesh_load("medium");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("valid: light, heavy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_mesh_communication("nonuniform"), InputError);
}

// ---------------------------------------------------------------------------------------------
// The native reader accepts what the generator writes.
// ---------------------------------------------------------------------------------------------

class CountingSink final : public TraceSink {
 public:
  std::size_t entities = 0, links = 0, messages = 0, loads = 0, states = 0;
  double end_s = -1;
  void on_entity(const Entity&) override { ++entities; }
  void on_link(const Link&) override { ++links; }
  void on_message(const Message&) override { ++messages; }
  void on_load(const LoadSample&) override { ++loads; }
  void on_state(const StateInterval&) override { ++states; }
  void on_end(double e) override { end_s = e; }
};

TEST(PaperPrograms, NativeReaderAcceptsTheGeneratedTraces) {
  FibonacciResult fr;
  CountingSink fib_sink;
  read_native_trace_text(fibonacci_text(fib_options(Distribution::Torus), &fr), "fib.kntr",
                         fib_sink);
  EXPECT_EQ(fib_sink.entities, 8U);
  EXPECT_EQ(fib_sink.messages, fr.messages);
  EXPECT_EQ(fib_sink.states, fr.states);
  EXPECT_DOUBLE_EQ(fib_sink.end_s, fr.end_s);

  MeshResult mr;
  CountingSink mesh_sink;
  read_native_trace_text(mesh_text(mesh_options(Communication::Skewed, Load::Heavy), &mr),
                         "mesh.kntr", mesh_sink);
  EXPECT_EQ(mesh_sink.entities, 27U);
  EXPECT_EQ(mesh_sink.links, 54U);
  EXPECT_EQ(mesh_sink.messages, mr.messages);
  EXPECT_EQ(mesh_sink.loads, 27U * 80U);
  EXPECT_DOUBLE_EQ(mesh_sink.end_s, 8.0);
}

// ---------------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------------

TEST(GenerateCommand, WritesTheSameTraceAsTheLibrary) {
  test::TempDir dir;
  const auto path = dir / "ring.kntr";
  const auto r = test::run_kanoko(
      {"generate", "fibonacci", "--distribution", "ring", "--n", "15", "-o", path.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fib(15) = 610"), std::string::npos) << r.out;
  EXPECT_EQ(test::read_text(path), fibonacci_text(fib_options(Distribution::Ring, 15)));

  const auto mesh_path = dir / "mesh.kntr";
  const auto m = test::run_kanoko({"generate", "mesh", "--communication", "skewed", "--load",
                                   "heavy", "--iterations", "20", "-o", mesh_path.string()});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  MeshOptions o = mesh_options(Communication::Skewed, Load::Heavy);
  o.iterations = 20;
  EXPECT_EQ(test::read_text(mesh_path), mesh_text(o));
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"mesh.kntr", "ring.kntr"}));
}

TEST(GenerateCommand, RejectsBadValuesWithoutWritingAnything) {
  test::TempDir dir;
  const std::string out = (dir / "x.kntr").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases{
      {{"generate", "fibonacci", "--distribution", "star", "-o", out},
       "valid: random, ring, torus"},
      {{"generate", "fibonacci", "--distribution", "torus", "--nodes", "7", "-o", out},
       "2-D torus"},
      {{"generate", "fibonacci", "--distribution", "ring", "--n", "40", "-o", out}, "n = 40"},
      {{"generate", "fibonacci", "--distribution", "ring", "--nodes", "eight", "-o", out}, "nodes"},
      {{"generate", "fibonacci", "-o", out}, "distribution"},
      {{"generate", "fibonacci", "--distribution", "ring"}, "output"},
      {{"generate", "mesh", "--communication", "uniform", "--load", "medium", "-o", out},
       "valid: light, heavy"},
      {{"generate", "mesh", "--communication", "lopsided", "--load", "light", "-o", out},
       "valid: uniform, skewed"},
      {{"generate", "mesh", "--communication", "uniform", "--load", "light", "--iterations", "0",
        "-o", out},
       "iterations"},
      {{"generate", "fibonaci", "-o", out}, "did you mean 'fibonacci'"},
  };
  for (const auto& c : cases) {
    const auto r = test::run_kanoko(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

TEST(GenerateCommand, HelpDescribesTheModels) {
  const auto top = test::run_kanoko({"generate", "--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("fibonacci"), std::string::npos);
  EXPECT_NE(top.out.find("mesh"), std::string::npos);
  const auto fibonacci = test::run_kanoko({"generate", "fibonacci", "--help"});
  EXPECT_EQ(fibonacci.exit_code, 0);
  EXPECT_NE(fibonacci.out.find("successor"), std::string::npos);
  EXPECT_NE(fibonacci.out.find("--distribution"), std::string::npos);
  const auto mesh = test::run_kanoko({"generate", "mesh", "--help"});
  EXPECT_EQ(mesh.exit_code, 0);
  EXPECT_NE(mesh.out.find("--communication"), std::string::npos);
  EXPECT_NE(mesh.out.find("same msg entries"), std::string::npos);
}

}  // namespace
}  // namespace kanoko::trace
