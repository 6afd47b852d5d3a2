// SimGrid SMPI traces as they really are (tests/trace/data/smpi-farm*.trace, made by
// generate-smpi-farm.sh): MPI_ANY_TAG receives whose link keys never match, collectives recorded
// only as states, no computing states, no message sizes. Also the collective traffic model, the
// gap rule and the per-format facts of the reader registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/paje_reader.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/text_input.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/mutation.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

std::filesystem::path data(const char* name) { return test::source_dir() / "tests" / "trace" / "data" / name; }

/// Keeps messages and collectives.
class Recorder final : public TraceSink {
 public:
  struct Part {
    EntityIndex entity;
    std::string name;
    std::string group;
  };
  std::vector<Message> messages;
  std::vector<Part> collectives;
  void on_entity(const Entity&) override {}
  void on_link(const Link&) override {}
  void on_message(const Message& m) override { messages.push_back(m); }
  void on_load(const LoadSample&) override {}
  void on_state(const StateInterval&) override {}
  void on_collective(const Collective& c) override {
    collectives.push_back({c.entity, std::string(c.name), std::string(c.group)});
  }
  void on_end(double) override {}
};

std::uint64_t warning_count(const PajeSummary& s, const std::string& start) {
  std::uint64_t n = 0;
  for (const PajeWarning& w : s.warnings) {
    if (w.what.rfind(start, 0) == 0) n += w.count;
  }
  return n;
}

TEST(SmpiTraces, AnyTagReceivesArePairedInOrderPerSenderAndReceiver) {
  Recorder r;
  const ReadReport report = read_trace(data("smpi-farm.trace"), r);
  ASSERT_TRUE(report.has_paje);
  // Rank 0 sends work to 1..3 (keys match), receives the results with MPI_ANY_TAG (they do not).
  ASSERT_EQ(r.messages.size(), 6U);
  std::map<std::pair<EntityIndex, EntityIndex>, int> pairs;
  for (const Message& m : r.messages) {
    ++pairs[{m.src, m.dst}];
    EXPECT_GT(m.recv_s, m.send_s);
  }
  for (EntityIndex w = 1; w <= 3; ++w) {
    EXPECT_EQ((pairs[{0, w}]), 1) << w;
    EXPECT_EQ((pairs[{w, 0}]), 1) << w;
  }
  EXPECT_EQ(report.paje.links, 6U);
  EXPECT_EQ(warning_count(report.paje, "link paired in order"), 3U);
  EXPECT_EQ(warning_count(report.paje, "link end without"), 0U);
  EXPECT_EQ(warning_count(report.paje, "link start without"), 0U);
  const auto lines = report.warning_lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("smpi-farm.trace:"), std::string::npos);
  EXPECT_NE(lines[0].find("3x link paired in order"), std::string::npos);
}

const std::string kHeader =
    "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
    "%EventDef PajeDefineLinkType 1\n% Alias string\n% Type string\n% StartContainerType string\n"
    "% EndContainerType string\n% Name string\n%EndEventDef\n"
    "%EventDef PajeCreateContainer 2\n% Time date\n% Alias string\n% Type string\n% Container string\n"
    "% Name string\n%EndEventDef\n"
    "%EventDef PajeStartLink 3\n% Time date\n% Type string\n% Container string\n% Value string\n"
    "% StartContainer string\n% Key string\n%EndEventDef\n"
    "%EventDef PajeEndLink 4\n% Time date\n% Type string\n% Container string\n% Value string\n"
    "% EndContainer string\n% Key string\n%EndEventDef\n"
    "0 MPI 0 MPI\n1 L 0 MPI MPI LINK\n"
    "2 0 a MPI 0 rank-0\n2 0 b MPI 0 rank-1\n2 0 c MPI 0 rank-2\n";

TEST(SmpiTraces, OrderPairingKeepsSendersApartAndKeyMatchesFirst) {
  // a→b twice and c→b once with ANY_TAG keys, interleaved; one a→b pair matches by key.
  const std::string text = kHeader +
                           "3 1 L 0 PTP a 1_2_5_1\n"
                           "3 2 L 0 PTP c 3_2_9_2\n"
                           "3 3 L 0 PTP a 1_2_6_3\n"
                           "3 4 L 0 PTP a 1_2_8_4\n"
                           "4 5 L 0 PTP b 3_2_-444_5\n"
                           "4 6 L 0 PTP b 1_2_8_4\n"
                           "4 7 L 0 PTP b 1_2_-444_6\n"
                           "4 8 L 0 PTP b 1_2_-444_7\n";
  Recorder r;
  const PajeSummary s = read_paje_trace_text(text, "any.trace", r);
  ASSERT_EQ(r.messages.size(), 4U);
  std::vector<std::pair<double, double>> from_a;
  for (const Message& m : r.messages) {
    if (m.src == 2) {
      EXPECT_EQ(m.send_s, 2.0);
      EXPECT_EQ(m.recv_s, 5.0);
    } else {
      EXPECT_EQ(m.src, 0U);
      from_a.emplace_back(m.send_s, m.recv_s);
    }
  }
  std::sort(from_a.begin(), from_a.end());
  const std::vector<std::pair<double, double>> expected{{1, 7}, {3, 8}, {4, 6}};
  EXPECT_EQ(from_a, expected);
  EXPECT_EQ(warning_count(s, "link paired in order"), 3U);

  // Opaque keys (no src_dst_tag_counter shape) are never paired by order: orphans, reported.
  Recorder opaque;
  const PajeSummary o = read_paje_trace_text(kHeader + "3 1 L 0 PTP a k1\n4 2 L 0 PTP b k2\n", "opaque.trace", opaque);
  EXPECT_TRUE(opaque.messages.empty());
  EXPECT_EQ(warning_count(o, "link paired in order"), 0U);
  EXPECT_EQ(warning_count(o, "link start without"), 1U);
  EXPECT_EQ(warning_count(o, "link end without"), 1U);
}

TEST(SmpiTraces, CollectiveStatesBecomeCollectivesNumberedPerRank) {
  Recorder r;
  read_trace(data("smpi-farm.trace"), r);
  // PMPI_Bcast, PMPI_Allreduce, PMPI_Barrier on 4 ranks; PMPI_Init/Finalize/Send/Recv are not.
  ASSERT_EQ(r.collectives.size(), 12U);
  std::map<std::string, std::vector<EntityIndex>> groups;
  for (const auto& c : r.collectives) groups[c.group].push_back(c.entity);
  ASSERT_EQ(groups.size(), 3U);
  for (const char* g : {"bcast#0", "allreduce#0", "barrier#0"}) {
    auto& members = groups[g];
    std::sort(members.begin(), members.end());
    EXPECT_EQ(members, (std::vector<EntityIndex>{0, 1, 2, 3})) << g;
  }
  EXPECT_EQ(r.collectives[0].name.rfind("PMPI_", 0), 0U);
}

Timeline timeline_of(const std::filesystem::path& path, GapPolicy gaps, ReadReport* report = nullptr) {
  TimelineOptions o;
  o.interval_s = 0.0001;
  o.busy_states = {"computing"};
  o.gaps = gaps;
  TimelineBuilder b(o);
  const ReadReport r = read_trace(path, b);
  if (report != nullptr) *report = r;
  return b.take();
}

double total(const Timeline& t, const std::vector<double>& per_bin, EntityIndex e) {
  double s = 0;
  for (std::size_t b = 0; b < t.bin_count && !per_bin.empty(); ++b) s += per_bin[b * t.entity_count() + e];
  return s;
}

TEST(SmpiTraces, TaskFarmWaitsAndGapsAreComputing) {
  ReadReport report;
  const Timeline t = timeline_of(data("smpi-farm.trace"), GapPolicy::Auto, &report);
  EXPECT_EQ(report.messages_with_bytes, 0U);  // SMPI without display-sizes
  EXPECT_EQ(report.messages_without_bytes, 6U);
  EXPECT_TRUE(t.gaps_counted_as_computing);
  EXPECT_EQ(t.message_count, 6U);
  EXPECT_EQ(t.collectives, 3U);
  EXPECT_EQ(t.collective_messages, 12U);  // a ring of 4 per instance (SMPI names no root)
  std::uint64_t in_pairs = 0;
  for (const PairTraffic& p : t.pairs) in_pairs += p.messages;
  EXPECT_EQ(in_pairs, t.message_count + t.collective_messages);
  // The master (rank 0) mostly waits in PMPI_Recv and the collectives; the workers compute.
  const double span = t.end_s;
  const double idle0 = total(t, t.idle_s, 0) / span;
  EXPECT_GT(idle0, 0.5);
  // The workers compute between their receive and their send: gap time, computing.
  const double busy1 = total(t, t.busy_s, 1) / span;
  const double busy3 = total(t, t.busy_s, 3) / span;
  EXPECT_GT(busy1, 0.0);
  EXPECT_GT(busy3, 0.0);
  for (EntityIndex e = 0; e < 4; ++e) {
    const double all = total(t, t.busy_s, e) + total(t, t.comm_s, e) + total(t, t.idle_s, e);
    EXPECT_NEAR(all, span, 1e-9) << e;  // every second of every rank is classified
  }
  const Timeline uncounted = timeline_of(data("smpi-farm.trace"), GapPolicy::Uncounted);
  EXPECT_FALSE(uncounted.gaps_counted_as_computing);
  EXPECT_EQ(total(uncounted, uncounted.busy_s, 3), 0.0);
  EXPECT_NEAR(total(uncounted, uncounted.idle_s, 0), total(t, t.idle_s, 0), 1e-12);
}

TEST(SmpiTraces, WithComputingStatesAndSizesNothingIsGuessed) {
  ReadReport report;
  const Timeline t = timeline_of(data("smpi-farm-sizes.trace"), GapPolicy::Auto, &report);
  EXPECT_EQ(report.messages_with_bytes, 6U);
  EXPECT_EQ(report.messages_without_bytes, 0U);
  EXPECT_FALSE(t.gaps_counted_as_computing);
  EXPECT_GT(total(t, t.busy_s, 3), 0.0);
}

TEST(SmpiTraces, GapRuleNeedsStatesAndNoComputingOnes) {
  EXPECT_TRUE(gaps_are_computing(5, 0));
  EXPECT_FALSE(gaps_are_computing(5, 1));
  EXPECT_FALSE(gaps_are_computing(0, 0));  // load samples only: nothing to say
}

Timeline native_timeline(const std::string& text, GapPolicy gaps = GapPolicy::Auto) {
  TimelineOptions o;
  o.interval_s = 0.5;
  o.gaps = gaps;
  TimelineBuilder b(o);
  read_native_trace_text(text, "t.kntr", b);
  return b.take();
}

TEST(SmpiTraces, GapsCountFromEachEntitysFirstEvent) {
  // No computing state: node 0 appears at 0, node 1 at 0.25 (a receive).
  const std::string text =
      "kntr 1\nnode 0 0\nnode 0 1\n"
      "state 0 0 0.25 send\nmsg 0 0 1 8 recv=0.25\nstate 0.5 0 0.25 wait\nstate 0.5 1 0.5 PMPI_Barrier\n";
  const Timeline t = native_timeline(text + "end 1\n");
  ASSERT_TRUE(t.gaps_counted_as_computing);
  ASSERT_EQ(t.bin_count, 2U);
  EXPECT_DOUBLE_EQ(t.busy_s[0 * 2 + 0], 0.25);  // [0.25, 0.5)
  EXPECT_DOUBLE_EQ(t.busy_s[1 * 2 + 0], 0.25);  // [0.75, 1)
  EXPECT_DOUBLE_EQ(t.busy_s[0 * 2 + 1], 0.25);  // [0.25, 0.5)
  EXPECT_DOUBLE_EQ(t.busy_s[1 * 2 + 1], 0.0);   // all barrier
  EXPECT_DOUBLE_EQ(t.idle_s[1 * 2 + 0], 0.25);  // "wait" by the MPI call table
  EXPECT_DOUBLE_EQ(t.idle_s[1 * 2 + 1], 0.5);
  const Timeline with_compute = native_timeline(text + "state 0.9 1 0.05 compute\nend 1\n");
  EXPECT_FALSE(with_compute.gaps_counted_as_computing);
}

/// Pair traffic of one timeline as (src, dst) → (messages, bytes).
std::map<std::pair<EntityIndex, EntityIndex>, std::pair<std::uint32_t, double>> traffic(const Timeline& t) {
  std::map<std::pair<EntityIndex, EntityIndex>, std::pair<std::uint32_t, double>> out;
  for (const PairTraffic& p : t.pairs) {
    auto& v = out[{p.src, p.dst}];
    v.first += p.messages;
    v.second += p.bytes;
  }
  return out;
}

TEST(SmpiTraces, CollectivesBecomePairTrafficByTheirShape) {
  const std::string nodes = "kntr 1\nnode 0 0\nnode 0 1\nnode 0 2\nnode 0 3\n";
  // bcast from node 2 (root) with 100 bytes: root → each other participant.
  std::string text = nodes;
  for (int p = 0; p < 4; ++p) {
    text += "coll 0.1 " + std::to_string(p) + " 0.1 MPI_Bcast " + (p == 2 ? "100" : "0") + " root=2 group=b\n";
  }
  text += "end 1\n";
  Timeline t = native_timeline(text);
  auto tr = traffic(t);
  EXPECT_EQ(t.collective_messages, 3U);
  EXPECT_EQ(t.message_count, 0U);
  ASSERT_EQ(tr.size(), 3U);
  for (EntityIndex d : {0U, 1U, 3U}) EXPECT_EQ((tr[{2, d}]), (std::pair<std::uint32_t, double>{1, 100.0}));

  // reduce to node 0: each other participant → root with its own bytes; only 3 of 4 take part.
  text = nodes;
  for (int p = 0; p < 3; ++p) {
    text += "coll 0.6 " + std::to_string(p) + " 0.1 reduce " + std::to_string(10 * (p + 1)) + " root=0 group=r\n";
  }
  text += "end 1\n";
  t = native_timeline(text);
  tr = traffic(t);
  ASSERT_EQ(tr.size(), 2U);
  EXPECT_EQ((tr[{1, 0}]), (std::pair<std::uint32_t, double>{1, 20.0}));
  EXPECT_EQ((tr[{2, 0}]), (std::pair<std::uint32_t, double>{1, 30.0}));
  EXPECT_EQ(t.traffic(1).size(), 2U);  // in the bin of the last arrival

  // allreduce: a ring in entity order; an instance of one participant and a part without a group
  // make nothing.
  text = nodes;
  for (int p = 0; p < 4; ++p) text += "coll 0.2 " + std::to_string(p) + " 0.1 allreduce 8 group=a\n";
  text += "coll 0.2 0 0.1 allreduce 8 group=alone\ncoll 0.3 1 0.1 barrier 0\nmsg 0.4 3 1 5\nend 1\n";
  t = native_timeline(text);
  tr = traffic(t);
  EXPECT_EQ(t.collectives, 1U);
  EXPECT_EQ(t.collective_messages, 4U);
  EXPECT_EQ(t.message_count, 1U);
  EXPECT_EQ((tr[{0, 1}]), (std::pair<std::uint32_t, double>{1, 8.0}));
  EXPECT_EQ((tr[{1, 2}]), (std::pair<std::uint32_t, double>{1, 8.0}));
  EXPECT_EQ((tr[{2, 3}]), (std::pair<std::uint32_t, double>{1, 8.0}));
  EXPECT_EQ((tr[{3, 0}]), (std::pair<std::uint32_t, double>{1, 8.0}));
  EXPECT_EQ((tr[{3, 1}]), (std::pair<std::uint32_t, double>{1, 5.0}));  // the point-to-point message
  // Each bin's pairs stay sorted by (src, dst).
  for (std::size_t b = 0; b < t.bin_count; ++b) {
    const auto pairs = t.traffic(b);
    EXPECT_TRUE(std::is_sorted(pairs.begin(), pairs.end(), [](const PairTraffic& x, const PairTraffic& y) {
      return std::tie(x.src, x.dst) < std::tie(y.src, y.dst);
    }));
  }
}

TEST(SmpiTraces, FormatFactsAreColumnsOfTheRegistry) {
  for (const std::string& f : reader_names()) {
    const FormatFacts& facts = format_facts(f);
    EXPECT_FALSE(facts.states.computing.empty()) << f;
    EXPECT_EQ(facts.message_bytes, f == "chrome") << f;  // the others fix their sizes
    EXPECT_EQ(facts.message_sizes, f != "chrome") << f;
    EXPECT_EQ(facts.entity_type, f == "paje" || f == "paraver") << f;
  }
  // SMPI's calls are left to the MPI call table, not to patterns that would make waits overhead.
  EXPECT_TRUE(format_facts("paje").states.communicating.empty());
  EXPECT_EQ(&format_facts("no such format"), &format_facts("native"));
}

TEST(SmpiTraces, MutatedSmpiTracesFailCleanlyOrRead) {
  const std::string seed = test::read_text(data("smpi-farm.trace"));
  std::mt19937_64 rng(11);
  const std::vector<std::string> tokens{"16 ", "15 ", "_-444_", "PMPI_Allreduce", "\n13 0.5 2 1\n", "\"", "1e308 "};
  int read = 0;
  int refused = 0;
  for (int i = 0; i < 300; ++i) {
    std::string text = seed;
    for (int k = 0; k < 3; ++k) testing::mutate_once(text, rng, tokens);
    TimelineOptions o;
    o.interval_s = 0.001;
    TimelineBuilder b(o);
    try {
      read_paje_trace_text(text, "m.trace", b);
      ++read;
    } catch (const InputError& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find("m.trace"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(read, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace kanoko::trace
