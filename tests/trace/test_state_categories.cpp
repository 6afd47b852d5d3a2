// State categories in the timeline: glob patterns, the precedence between exact names and
// patterns, and computing / communicating / idle seconds binned per interval (checked by hand).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "src/trace/native_reader.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

TEST(StateCategories, GlobPatterns) {
  EXPECT_TRUE(glob_match("MPI_*", "MPI_Send"));
  EXPECT_TRUE(glob_match("MPI_*", "MPI_"));
  EXPECT_FALSE(glob_match("MPI_*", "PMPI_Send"));
  EXPECT_FALSE(glob_match("*Send*", "PMPI_Isend_init"));  // case matters
  EXPECT_TRUE(glob_match("*send*", "PMPI_Isend_init"));
  EXPECT_TRUE(glob_match("MPI_?send", "MPI_Isend"));
  EXPECT_FALSE(glob_match("MPI_?send", "MPI_send"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "x"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYbc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYYb"));
  EXPECT_TRUE(glob_match("compute", "compute"));
  EXPECT_FALSE(glob_match("compute", "computes"));
  // Many stars on a long name that does not match: linear backtracking, no blow-up.
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*b", std::string(5000, 'a')));
}

TEST(StateCategories, NamesSeenLatelyAreClassifiedAsAFreshClassifierDoes) {
  // The classifier remembers the last few names its patterns and the MPI table classified: names
  // that share a length and a first character, more of them than it remembers, an empty one,
  // and a copy of the classifier used after the original is gone must all come out as a fresh
  // classifier has them.
  const std::vector<std::string> computing{"comp*", "main"}, communicating{"MPI_S*", "MPI_R*"}, idle{"MPI_W*"};
  const std::vector<std::string> names{"MPI_Send", "MPI_Recv", "MPI_Wait", "MPI_Sent", "compute", "compact", "",
                                       "MPI_Bcast", "MPI_Allreduce", "main", "mainx", "c", "PMPI_Send", "idle"};
  auto c = std::make_unique<StateClassifier>(computing, communicating, idle);
  std::optional<StateClassifier> copy;
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::size_t> pick(0, names.size() - 1);
  for (int i = 0; i < 5000; ++i) {
    const std::string& name = i % 2 == 0 ? names[pick(rng)] : names[static_cast<std::size_t>(i / 5) % 3];
    StateClassifier fresh(computing, communicating, idle);
    // A buffer rewritten for each name, as a reader's line is.
    std::string buffer = name + "zzzz";
    const std::string_view view(buffer.data(), name.size());
    StateClassifier& used = copy ? *copy : *c;
    ASSERT_EQ(used.classify(view), fresh.classify(name)) << "'" << name << "' at " << i;
    if (i == 2500) {
      copy.emplace(*c);
      c.reset();
    }
  }
}

TEST(StateCategories, ExactNamesBeatPatternsAndLongerPatternsBeatShorter) {
  StateClassifier c({"*", "MPI_Wait_compute"}, {"MPI_*", "Waiting a message"}, {"MPI_Wait*", "idle"});
  EXPECT_EQ(c.classify("main"), StateCategory::Computing);          // only "*"
  EXPECT_EQ(c.classify("MPI_Send"), StateCategory::Communicating);  // "MPI_*" has more literals than "*"
  EXPECT_EQ(c.classify("MPI_Waitall"), StateCategory::Idle);        // "MPI_Wait*" longer still
  EXPECT_EQ(c.classify("MPI_Wait_compute"), StateCategory::Computing);  // exact wins
  EXPECT_EQ(c.classify("Waiting a message"), StateCategory::Communicating);
  EXPECT_EQ(c.classify("idle"), StateCategory::Idle);
  EXPECT_EQ(c.classify("MPI_Send"), StateCategory::Communicating);  // cached answer is the same
  EXPECT_TRUE(c.uses(StateCategory::Idle));

  StateClassifier ties({"a*"}, {"*b"}, {});
  EXPECT_EQ(ties.classify("ab"), StateCategory::Computing);  // equal literals: computing first
  StateClassifier none({"compute"}, {}, {}, false);  // without the MPI call table (test_mpi_calls.cpp)
  EXPECT_EQ(none.classify("MPI_Send"), StateCategory::None);
  EXPECT_FALSE(none.uses(StateCategory::Communicating));
}

TEST(StateCategories, LongListsOfNamesClassifyTheSame) {
  // Past a short list the exact names are hashed: the answers, and the first list's priority,
  // must not change.
  std::vector<std::string> many;
  for (int i = 0; i < 40; ++i) many.push_back("s" + std::to_string(i));
  StateClassifier c({"s7", "*"}, {"MPI_*"}, many);
  EXPECT_EQ(c.classify("s7"), StateCategory::Computing);
  EXPECT_EQ(c.classify("s39"), StateCategory::Idle);
  EXPECT_EQ(c.classify("s40"), StateCategory::Computing);  // only "*"
  EXPECT_EQ(c.classify("MPI_Send"), StateCategory::Communicating);
  StateClassifier short_list({"s7", "*"}, {"MPI_*"}, {"s7", "s39"});
  EXPECT_EQ(short_list.classify("s7"), StateCategory::Computing);
  EXPECT_EQ(short_list.classify("s39"), StateCategory::Idle);
}

Timeline bin(const std::string& text, std::vector<std::string> busy, std::vector<std::string> comm,
             std::vector<std::string> idle) {
  TimelineOptions o;
  o.interval_s = 0.1;
  o.busy_states = std::move(busy);
  o.communicating_states = std::move(comm);
  o.idle_states = std::move(idle);
  o.mpi_call_table = false;  // the lists alone; test_mpi_calls.cpp and test_smpi_traces.cpp add the table
  TimelineBuilder b(o);
  read_native_trace_text(text, "c.kntr", b);
  return b.take();
}

const std::string kTrace =
    "kntr 1\nnode 0 0\nnode 0 1\n"
    "state 0 0 0.04 compute\n"
    "state 0 1 0.15 idle\n"
    "state 0.04 0 0.03 MPI_Send\n"
    "state 0.07 0 0.05 MPI_Wait\n"  // crosses into the second interval: 0.03 + 0.02
    "state 0.12 0 0.08 compute\n"
    "state 0.15 1 0.05 MPI_Recv\n"
    "end 0.2\n";

TEST(StateCategories, TimelineBinsEachCategory) {
  const Timeline tl = bin(kTrace, {"compute"}, {"MPI_*"}, {"idle"});
  ASSERT_EQ(tl.bin_count, 2U);
  ASSERT_EQ(tl.comm_s.size(), 4U);
  ASSERT_EQ(tl.idle_s.size(), 4U);
  EXPECT_NEAR(tl.busy_fraction(0, 0), 0.4, 1e-12);
  EXPECT_NEAR(tl.comm_fraction(0, 0), 0.6, 1e-12);  // 0.03 send + 0.03 wait
  EXPECT_NEAR(tl.comm_fraction(1, 0), 0.2, 1e-12);  // the rest of the wait
  EXPECT_NEAR(tl.busy_fraction(1, 0), 0.8, 1e-12);
  EXPECT_NEAR(tl.idle_fraction(0, 1), 1.0, 1e-12);
  EXPECT_NEAR(tl.idle_fraction(1, 1), 0.5, 1e-12);
  EXPECT_NEAR(tl.comm_fraction(1, 1), 0.5, 1e-12);
  EXPECT_NEAR(tl.comm_at(1, 1), 0.05, 1e-12);
  EXPECT_NEAR(tl.idle_at(0, 0), 0.0, 1e-15);

  // Idle beats the shorter MPI pattern for the wait; the exact "MPI_Send" stays communicating.
  const Timeline wait_idle = bin(kTrace, {"compute"}, {"MPI_*"}, {"MPI_Wait*", "idle"});
  EXPECT_NEAR(wait_idle.comm_fraction(0, 0), 0.3, 1e-12);
  EXPECT_NEAR(wait_idle.idle_fraction(0, 0), 0.3, 1e-12);
  EXPECT_NEAR(wait_idle.idle_fraction(1, 0), 0.2, 1e-12);
}

TEST(StateCategories, UnusedCategoriesKeepNoArrays) {
  const Timeline tl = bin(kTrace, {"compute"}, {}, {});
  EXPECT_TRUE(tl.comm_s.empty());
  EXPECT_TRUE(tl.idle_s.empty());
  EXPECT_EQ(tl.comm_fraction(0, 0), 0.0);
  EXPECT_EQ(tl.idle_at(1, 1), 0.0);
  EXPECT_NEAR(tl.busy_fraction(1, 0), 0.8, 1e-12);
  // Listed but never occurring: no array either; one that occurs late still gets every bin.
  const Timeline late = bin(kTrace, {"compute"}, {"MPI_Recv"}, {"sleep"});
  EXPECT_TRUE(late.idle_s.empty());
  ASSERT_EQ(late.comm_s.size(), 4U);
  EXPECT_NEAR(late.comm_at(1, 1), 0.05, 1e-12);
  EXPECT_NEAR(late.comm_at(0, 0) + late.comm_at(0, 1) + late.comm_at(1, 0), 0.0, 1e-15);
}

TEST(StateCategories, LateEntitiesAndStatesPastTheEnd) {
  // A node declared after the arrays grew is re-laid in every array; a state running past the
  // end is cut there.
  const Timeline tl = bin("kntr 1\nnode 0 0\nstate 0 0 0.15 MPI_Recv\nnode 0.15 1\nstate 0.15 1 0.5 idle\nend 0.2\n",
                          {"compute"}, {"MPI_*"}, {"idle"});
  ASSERT_EQ(tl.entity_count(), 2U);
  ASSERT_EQ(tl.comm_s.size(), 4U);
  EXPECT_NEAR(tl.comm_fraction(0, 0), 1.0, 1e-12);
  EXPECT_NEAR(tl.comm_fraction(1, 0), 0.5, 1e-12);
  EXPECT_NEAR(tl.idle_at(1, 1), 0.05, 1e-12);
  EXPECT_NEAR(tl.idle_at(0, 1), 0.0, 1e-15);
}

}  // namespace
}  // namespace kanoko::trace
