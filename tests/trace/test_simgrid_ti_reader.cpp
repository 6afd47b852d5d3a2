// The SimGrid time-independent reader: both shared traces replay with counts derived here from
// the files; hand-written traces whose timed events follow from the documented cost model by
// hand (point-to-point, nonblocking requests, collectives, old syntax); the index form; errors
// and warnings with their location (deadlocks, unmatched messages, unknown actions, escaping
// paths); the bounded window; truncated and mutated input never crash.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/simgrid_ti_reader.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/mutation.hpp"
#include "tests/trace/stream_recorder.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

using Replayed = testing::StreamRecorder;

/// The states of entity e named `name`, in order.
std::vector<testing::RecordedState> states_of(const Replayed& r, EntityIndex e, const std::string& name) {
  std::vector<testing::RecordedState> out;
  for (const auto& s : r.states) {
    if (s.entity == e && s.name == name) out.push_back(s);
  }
  return out;
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// The default model: 1e9 flop/s, 1.25e8 bytes/s, 50 µs latency. A 1e6-byte message takes
// 50e-6 + 1e6 / 1.25e8 = 0.00805 s.
constexpr double kT1e6 = 0.00805;

TEST(SimgridTiShared, ActionsWithIsendReplaysByHand) {
  // simgrid/simgrid examples/smpi/replay/actions_with_isend.txt, replayed by hand:
  //  rank 0: compute 1e9 [0,1]; send 1 (tag 0) [1,1+T]; compute [1+T,2+T]; recv 2 (tag 2) from
  //          2+T until rank 2's isend at 2.5 arrives at 2.5+T.
  //  rank 1: irecv 0; compute [0,0.5]; test (not yet); compute [0.5,1]; wait until 1+T (the send
  //          left rank 0 at 1); send 2 (tag 1) [1+T,1+2T].
  //  rank 2: compute 2e9 [0,2]; irecv 1 (already arrived at 1+2T); compute [2,2.25]; test
  //          completes it; compute [2.25,2.5]; wait (done by the test, ignored as SimGrid does);
  //          isend 0 at 2.5; compute 5e8 [2.5,3]. The run ends at 3.
  const auto path = test::shared_dir() / "traces" / "simgrid-ti" / "actions_with_isend.txt";
  ASSERT_EQ(detect_format(path), "simgrid-ti");
  Replayed r;
  const SimgridTiSummary s = read_simgrid_ti_trace(path, r);
  EXPECT_FALSE(s.indexed);
  EXPECT_EQ(s.ranks, 3U);
  EXPECT_EQ(s.actions, 24U);  // the file's non-blank lines
  EXPECT_EQ(s.sends, 3U);
  EXPECT_EQ(s.receives, 3U);
  EXPECT_EQ(s.bytes, 3000000U);
  EXPECT_DOUBLE_EQ(s.flops, 1e9 + 1e9 + 5e8 + 5e8 + 2e9 + 2.5e8 + 2.5e8 + 5e8);
  EXPECT_TRUE(s.warnings.empty()) << s.warnings[0].str();
  EXPECT_EQ(r.order_violations, 0);
  ASSERT_EQ(r.entities.size(), 3U);
  EXPECT_EQ(r.entities[2].name, "rank-2");
  EXPECT_DOUBLE_EQ(r.end_s, 3.0);

  ASSERT_EQ(r.messages.size(), 3U);
  EXPECT_DOUBLE_EQ(r.messages[0].send_s, 1.0);
  EXPECT_DOUBLE_EQ(r.messages[0].recv_s, 1.0 + kT1e6);
  EXPECT_EQ(r.messages[0].src, 0U);
  EXPECT_EQ(r.messages[0].dst, 1U);
  EXPECT_EQ(r.messages[0].bytes, 1000000U);
  EXPECT_EQ(r.messages[0].tag, 0);
  EXPECT_DOUBLE_EQ(r.messages[1].send_s, 1.0 + kT1e6);
  EXPECT_EQ(r.messages[1].tag, 1);
  EXPECT_DOUBLE_EQ(r.messages[2].send_s, 2.5);
  EXPECT_EQ(r.messages[2].src, 2U);
  EXPECT_EQ(r.messages[2].dst, 0U);

  const auto w0 = states_of(r, 0, "communication");
  ASSERT_EQ(w0.size(), 2U);
  EXPECT_DOUBLE_EQ(w0[0].begin_s, 1.0);
  EXPECT_DOUBLE_EQ(w0[0].end_s, 1.0 + kT1e6);
  EXPECT_DOUBLE_EQ(w0[1].begin_s, 2.0 + kT1e6);
  EXPECT_DOUBLE_EQ(w0[1].end_s, 2.5 + kT1e6);
  const auto w1 = states_of(r, 1, "communication");
  ASSERT_EQ(w1.size(), 2U);
  EXPECT_DOUBLE_EQ(w1[0].begin_s, 1.0);
  EXPECT_DOUBLE_EQ(w1[0].end_s, 1.0 + kT1e6);
  EXPECT_TRUE(states_of(r, 2, "communication").empty());
  EXPECT_DOUBLE_EQ(r.state_seconds(0, "compute"), 2.0);
  EXPECT_DOUBLE_EQ(r.state_seconds(1, "compute"), 1.0);
  EXPECT_DOUBLE_EQ(r.state_seconds(2, "compute"), 3.0);
}

TEST(SimgridTiShared, IndexOf32RanksReplaysWithItsCounts) {
  // simgrid/simgrid examples/smpi/replay_multiple: an index of 32 per-rank files (no final
  // newline), compute and collectives only. Counts are taken here from the files.
  const auto dir = test::shared_dir() / "traces" / "simgrid-ti";
  const auto index = dir / "smpi_replay.txt";
  ASSERT_EQ(detect_format(index), "simgrid-ti");
  const std::vector<std::string> collective_names{"barrier", "bcast", "reduce", "allreduce", "alltoall", "alltoallv",
                                                  "gather", "allgather", "gatherv", "scatter", "scatterv",
                                                  "allgatherv", "reducescatter", "scan", "exscan"};
  std::uint64_t actions = 0;
  double flops = 0;
  std::vector<double> compute_flops;
  std::vector<std::vector<std::string>> sequences;  // each rank's collectives, in order
  std::stringstream list(test::read_text(index));
  std::string file;
  while (std::getline(list, file)) {
    if (file.empty()) continue;
    std::stringstream in(test::read_text(dir / file));
    std::string line;
    compute_flops.push_back(0);
    sequences.emplace_back();
    while (std::getline(in, line)) {
      const auto w = words(line);
      if (w.empty()) continue;
      ++actions;
      if (w[1] == "compute") {
        flops += std::stod(w[2]);
        compute_flops.back() += std::stod(w[2]);
      }
      if (w[1] == "allreduce" || w[1] == "reduce") flops += std::stod(w[3]);
      if (std::find(collective_names.begin(), collective_names.end(), w[1]) != collective_names.end()) {
        sequences.back().push_back(w[1]);
      }
    }
  }
  ASSERT_EQ(sequences.size(), 32U);
  for (const auto& seq : sequences) ASSERT_EQ(seq, sequences[0]);  // every rank calls the same collectives

  Replayed r;
  const SimgridTiSummary s = read_simgrid_ti_trace(index, r);
  EXPECT_TRUE(s.indexed);
  EXPECT_EQ(s.ranks, 32U);
  EXPECT_EQ(s.actions, actions);
  EXPECT_NEAR(s.flops, flops, flops * 1e-12);
  EXPECT_EQ(s.collectives, sequences[0].size());
  EXPECT_EQ(s.sends, 0U);
  EXPECT_TRUE(s.warnings.empty()) << s.warnings[0].str();
  EXPECT_EQ(r.order_violations, 0);
  ASSERT_EQ(r.collectives.size(), 32 * sequences[0].size());
  EXPECT_TRUE(r.messages.empty());
  // Rank r's compute time is its flops over the flop rate; nobody ends before its own work.
  double longest = 0;
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_NEAR(r.state_seconds(static_cast<EntityIndex>(i), "compute"), compute_flops[i] / 1e9, 1e-9);
    longest = std::max(longest, compute_flops[i] / 1e9);
  }
  EXPECT_GE(r.end_s, longest);
  // The k-th collective of every rank is one operation: same group, same end.
  std::map<std::string, std::pair<int, double>> groups;
  for (const auto& c : r.collectives) {
    auto& [n, end] = groups[c.group];
    if (n++ == 0) end = c.end_s;
    EXPECT_DOUBLE_EQ(c.end_s, end) << c.group;
  }
  EXPECT_EQ(groups.size(), sequences[0].size());
  // `init 1` makes the default datatype a double: `bcast 1` moves 8 bytes from the root, rank 0.
  for (const auto& c : r.collectives) {
    if (c.name == "bcast") {
      EXPECT_EQ(c.bytes, c.entity == 0 ? 8U : 0U);
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Hand-written traces with known answers
// ------------------------------------------------------------------------------------------------

SimgridTiSummary replay(const std::string& text, Replayed& r, const SimgridTiOptions& o = {}) {
  return read_simgrid_ti_text(text, "h.txt", r, o);
}

TEST(SimgridTiReader, CollectivesFollowTheCostModel) {
  // flop rate 1e6, bandwidth 1e3 bytes/s, latency 0.01 s; 4 ranks, so log2 P = 2.
  SimgridTiOptions o;
  o.flop_rate = 1e6;
  o.bandwidth = 1e3;
  o.latency_s = 0.01;
  const std::string t =
      "0 init\n1 init\n2 init\n3 init\n"
      "0 compute 1e6\n1 compute 2e6\n2 compute 0\n3 compute 3e6\n"
      "0 barrier\n1 barrier\n2 barrier\n3 barrier\n"            // last arrives at 3; 2 steps: 3.02
      "0 bcast 100 1\n1 bcast 100 1\n2 bcast 100 1\n3 bcast 100 1\n"  // 2 (0.01 + 100/1e3): 3.24
      "0 allreduce 10 1e6\n1 allreduce 10 1e6\n2 allreduce 10 1e6\n3 allreduce 10 1e6\n"  // 4 (0.01 + 10/1e3) + 1: 4.32
      "0 alltoall 5 5\n1 alltoall 5 5\n2 alltoall 5 5\n3 alltoall 5 5\n"  // 3 steps, 20 bytes each: 0.05 -> 4.37
      "0 finalize\n1 finalize\n2 finalize\n3 finalize\n";
  Replayed r;
  const SimgridTiSummary s = replay(t, r, o);
  EXPECT_EQ(s.collectives, 4U);
  EXPECT_EQ(r.order_violations, 0);
  ASSERT_EQ(r.collectives.size(), 16U);
  const auto ends_at = [&](const std::string& name, double end) {
    for (const auto& c : r.collectives) {
      if (c.name == name) {
        EXPECT_NEAR(c.end_s, end, 1e-12) << name;
      }
    }
  };
  ends_at("barrier", 3.02);
  ends_at("bcast", 3.24);
  ends_at("allreduce", 4.32);
  ends_at("alltoall", 4.37);
  EXPECT_NEAR(r.end_s, 4.37, 1e-12);
  // Arrival times and each rank's part: rank 2 waited in the barrier from 0.
  for (const auto& c : r.collectives) {
    if (c.name == "barrier") {
      EXPECT_DOUBLE_EQ(c.begin_s, c.entity == 3 ? 3.0 : static_cast<double>(c.entity == 2 ? 0 : c.entity + 1));
    }
    if (c.name == "bcast") {
      EXPECT_EQ(c.root, 1);
      EXPECT_EQ(c.bytes, c.entity == 1 ? 100U : 0U);
    }
    if (c.name == "alltoall") {
      EXPECT_EQ(c.bytes, 20U);
    }
    EXPECT_EQ(c.group.substr(0, 3), "ti.");
  }
  EXPECT_NEAR(r.state_seconds(2, "communication"), 4.37, 1e-12);
  EXPECT_NEAR(r.state_seconds(3, "communication"), 4.37 - 3.0, 1e-12);
}

TEST(SimgridTiReader, NonblockingRequestsSendRecvAndOldSyntax) {
  // T(b) = 50e-6 + b / 1.25e8.
  const auto T = [](double b) { return 50e-6 + b / 1.25e8; };
  Replayed r;
  const SimgridTiSummary s = replay(
      "0 isend 1 0 1000\n0 compute 1e9\n0 waitall\n"  // the isend is long done at 1: no wait
      "1 irecv 0 0 1000\n1 wait 0 1 0\n"              // waits from 0 until the message arrives
      "0 sendRecv 100 1 100 1\n1 sendRecv 100 0 100 0\n"  // rank 1 is there at T(1000), rank 0 at 1
      "0 send 1 64\n1 recv 0 64\n",                  // before 2018: send DST SIZE, no tag
      r);
  EXPECT_TRUE(s.warnings.empty()) << s.warnings[0].str();
  EXPECT_EQ(r.order_violations, 0);
  ASSERT_EQ(r.messages.size(), 4U);
  EXPECT_DOUBLE_EQ(r.messages[0].recv_s, T(1000));
  const auto w1 = states_of(r, 1, "communication");
  ASSERT_GE(w1.size(), 2U);
  EXPECT_DOUBLE_EQ(w1[0].begin_s, 0.0);
  EXPECT_DOUBLE_EQ(w1[0].end_s, T(1000));
  // sendRecv: rank 1 posts at T(1000) and waits for rank 0's half, sent at 1.
  EXPECT_DOUBLE_EQ(w1[1].begin_s, T(1000));
  EXPECT_DOUBLE_EQ(w1[1].end_s, 1 + T(100));
  EXPECT_DOUBLE_EQ(r.state_seconds(0, "compute"), 1.0);
  // The old-syntax message: 64 bytes, tag 0, sent when rank 0 leaves its sendRecv at 1 + T(100).
  EXPECT_EQ(r.messages[3].bytes, 64U);
  EXPECT_EQ(r.messages[3].tag, 0);
  EXPECT_DOUBLE_EQ(r.messages[3].send_s, 1 + T(100));
  EXPECT_DOUBLE_EQ(r.end_s, 1 + T(100) + T(64));
}

TEST(SimgridTiReader, TheModelScalesTheTimes) {
  const std::string t = "0 compute 4e9\n0 send 1 0 1e6\n1 recv 0 0 1e6\n";
  SimgridTiOptions o;
  o.flop_rate = 2e9;
  o.bandwidth = 1e6;
  o.latency_s = 0;
  Replayed r;
  replay(t, r, o);
  EXPECT_DOUBLE_EQ(r.end_s, 2.0 + 1.0);
  SimgridTiOptions bad;
  bad.bandwidth = 0;
  EXPECT_THROW(replay(t, r, bad), InputError);
  bad = {};
  bad.latency_s = -1;
  EXPECT_THROW(replay(t, r, bad), InputError);
  try {
    bad = {};
    bad.flop_rate = std::nan("");
    replay(t, r, bad);
    FAIL() << "a NaN flop rate was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("h.txt: error: cannot replay with a flop rate of"), std::string::npos) << e.what();
  }
}

TEST(SimgridTiReader, IndexFilesRelativeToTheIndex) {
  test::TempDir dir;
  test::write_text(dir / "run" / "r" / "a.txt", "0 init\n0 compute 1e9\n0 send 1 5 1e6");
  test::write_text(dir / "run" / "r" / "b.txt", "1 init\r\n\r\n1 recv 0 5 1e6\r\n");
  test::write_text(dir / "run" / "index.txt", "r/a.txt\nr/./b.txt\n");
  ASSERT_EQ(detect_format(dir / "run" / "index.txt"), "simgrid-ti");
  Replayed r;
  const SimgridTiSummary s = read_simgrid_ti_trace(dir / "run" / "index.txt", r);
  EXPECT_TRUE(s.indexed);
  ASSERT_EQ(r.messages.size(), 1U);
  EXPECT_DOUBLE_EQ(r.messages[0].send_s, 1.0);
  EXPECT_EQ(r.messages[0].tag, 5);
  EXPECT_DOUBLE_EQ(r.end_s, 1.0 + kT1e6);

  const auto error_of = [&](const std::string& index) {
    test::write_text(dir / "run" / "i2.txt", index);
    try {
      Replayed x;
      read_simgrid_ti_trace(dir / "run" / "i2.txt", x);
      return std::string();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(error_of("r/a.txt\n../secret.txt\n").find("i2.txt:2:1: error: '../secret.txt' leaves the index's folder"),
            std::string::npos);
  EXPECT_NE(error_of("r/a.txt\n/etc/passwd\n").find("i2.txt:2:1: error: '/etc/passwd' leaves"), std::string::npos);
  EXPECT_NE(error_of("r/a.txt\n\n  r/missing.txt\n").find("i2.txt:3:3: error: rank 1's action file"), std::string::npos);
  EXPECT_NE(error_of("r/a.txt\nr/missing.txt\n").find("missing.txt does not exist"), std::string::npos);
  EXPECT_NE(error_of("r/a.txt\nr\n").find("i2.txt:2:1: error: rank 1's action file"), std::string::npos);
  EXPECT_NE(error_of("r/a.txt\nr\n").find("is not a regular file"), std::string::npos) << error_of("r/a.txt\nr\n");
  // A per-rank file naming another rank is replayed as the index says, with a warning.
  test::write_text(dir / "run" / "r" / "c.txt", "7 recv 0 5 1e6\n");
  test::write_text(dir / "run" / "i3.txt", "r/a.txt\nr/c.txt\n");
  Replayed y;
  const SimgridTiSummary s3 = read_simgrid_ti_trace(dir / "run" / "i3.txt", y);
  ASSERT_EQ(s3.warnings.size(), 1U);
  EXPECT_NE(s3.warnings[0].str().find("c.txt:1:1: warning: 1x action of another rank"), std::string::npos);
}

// ------------------------------------------------------------------------------------------------
// Errors and warnings
// ------------------------------------------------------------------------------------------------

std::string error_of(const std::string& text) {
  try {
    Replayed r;
    read_simgrid_ti_text(text, "d.txt", r);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

::testing::AssertionResult has(const std::string& text, const std::string& what) {
  if (text.find(what) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << what << "' not in: " << text;
}

TEST(SimgridTiReaderErrors, LocatedAtTheAction) {
  EXPECT_TRUE(has(error_of(""), "d.txt:1:1: error: empty TI trace"));
  EXPECT_TRUE(has(error_of("x init\n"), "d.txt:1:1: error: expected a rank number"));
  EXPECT_TRUE(has(error_of("0 init\n0 compte 10\n"), "d.txt:2:3: error: unknown action 'compte'"));
  EXPECT_TRUE(has(error_of("0 init\n0 compte 10\n"), "compute"));
  EXPECT_TRUE(has(error_of("0 compute abc\n"), "d.txt:1:11: error: expected a number of flops"));
  EXPECT_TRUE(has(error_of("0 compute -5\n"), "d.txt:1:11: error: a number of flops must be between 0 and 1e30"));
  EXPECT_TRUE(has(error_of("0 compute 1e999\n"), "d.txt:1:11: error: expected a number of flops"));
  EXPECT_TRUE(has(error_of("0 send 7 0 10\n"), "d.txt:1:8: error: rank 7 is not in the trace"));
  EXPECT_TRUE(has(error_of("0 send 1\n1 init\n"), "d.txt:1:9: error: too few arguments"));
  EXPECT_TRUE(has(error_of("0 compute 1 2\n"), "d.txt:1:13: error: too many arguments"));
  EXPECT_TRUE(has(error_of("0 wait 1 2\n"), "d.txt:1:8: error: expected 'wait SRC DST TAG'"));
  EXPECT_TRUE(has(error_of("0 init\n0\n"), "d.txt:2:1: error: expected an action"));
  EXPECT_TRUE(has(error_of(std::string("0 init\n0 comp\0ute 1\n", 20)), "d.txt:2:7: error: binary content"));
  // Deadlocks name the blocked action.
  EXPECT_TRUE(has(error_of("0 init\n0 recv 1 0 10\n1 init\n"), "d.txt:2:1: error: deadlock: rank 0 waits forever in recv"));
  EXPECT_TRUE(has(error_of("0 barrier\n1 init\n"), "d.txt:1:1: error: deadlock: rank 0 waits forever in barrier (some ranks"));
  EXPECT_TRUE(has(error_of("0 irecv 1 3 10\n0 wait 1 0 3\n1 send 0 4 10\n"), "d.txt:2:1: error: deadlock"));
  // Collectives must agree.
  const std::string mismatch = error_of("0 barrier\n1 bcast 10\n");
  EXPECT_TRUE(has(mismatch, "d.txt:2:3: error: collective mismatch: rank 1 calls bcast"));
  EXPECT_TRUE(has(mismatch, "d.txt:1:1: error: the other rank's barrier is here"));
  EXPECT_TRUE(has(error_of("0 alltoallv 1 2\n1 init\n"), "too few arguments"));
}

TEST(SimgridTiReaderErrors, UnmatchedMessagesAreWarnings) {
  Replayed r;
  const SimgridTiSummary s = replay("0 init\n0 send 1 0 10\n0 send 1 0 10\n1 init\n1 irecv 0 9 10\n0 wait 5 5 5\n", r);
  std::string all;
  for (const auto& w : s.warnings) all += w.str() + "\n";
  EXPECT_TRUE(has(all, "h.txt:2:1: warning: 2x message sent but never received"));
  EXPECT_TRUE(has(all, "h.txt:5:1: warning: 1x receive never matched by a send"));
  EXPECT_TRUE(has(all, "h.txt:6:1: warning: 1x wait for a request that was never started"));
  EXPECT_EQ(r.messages.size(), 2U);  // sent messages exist whether or not they are received
}

TEST(SimgridTiReader, BoundedWindowKeepsOrderAndTotals) {
  // Rank 1 waits from 0 while rank 0 computes 300 times before sending: with a window of 8 the
  // wait is emitted in pieces; the order and every total stay the same.
  std::string t = "1 recv 0 0 100\n1 compute 1e6\n";
  for (int i = 0; i < 300; ++i) t += "0 compute 1e7\n";
  t += "0 send 1 0 100\n2 compute 5e9\n";
  Replayed big, small;
  replay(t, big);
  SimgridTiOptions o;
  o.max_held = 8;
  const SimgridTiSummary s = replay(t, small, o);
  EXPECT_EQ(small.order_violations, 0);
  EXPECT_GT(small.states.size(), big.states.size());  // the wait came in pieces
  for (EntityIndex e = 0; e < 3; ++e) {
    EXPECT_NEAR(small.state_seconds(e, "communication"), big.state_seconds(e, "communication"), 1e-9);
    EXPECT_NEAR(small.state_seconds(e, "compute"), big.state_seconds(e, "compute"), 1e-9);
  }
  EXPECT_DOUBLE_EQ(small.end_s, big.end_s);
  EXPECT_NEAR(big.state_seconds(1, "communication"), 3.0 + 50e-6 + 100 / 1.25e8, 1e-9);
  EXPECT_TRUE(s.warnings.empty()) << s.warnings[0].str();
}

TEST(SimgridTiReader, DetectionAndRegistry) {
  EXPECT_TRUE(looks_like_simgrid_ti("0 init\n1 init\n"));
  EXPECT_TRUE(looks_like_simgrid_ti("\n12 compute 1e6"));
  EXPECT_TRUE(looks_like_simgrid_ti("ti/ti_trace0.txt\nti/ti_trace1.txt"));
  EXPECT_FALSE(looks_like_simgrid_ti("0 hello\n"));
  EXPECT_FALSE(looks_like_simgrid_ti("hello world\n"));
  EXPECT_FALSE(looks_like_simgrid_ti(""));
  EXPECT_EQ(detect_format_text("0 init\n"), "simgrid-ti");
  const auto names = reader_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "simgrid-ti"), names.end());
  // Through the registry, with the cost model from the reader options.
  ReaderOptions ro;
  ro.simgrid_ti.flop_rate = 2e9;
  Replayed r;
  const ReadReport rep = read_trace(test::shared_dir() / "traces" / "simgrid-ti" / "actions_with_isend.txt", r, "simgrid-ti", ro);
  EXPECT_EQ(rep.format, "simgrid-ti");
  EXPECT_DOUBLE_EQ(r.state_seconds(2, "compute"), 1.5);
}

TEST(SimgridTiCli, InfoReadsBothSharedTraces) {
  const auto dir = test::shared_dir() / "traces" / "simgrid-ti";
  const test::CommandResult a = test::run_kanoko({"info", (dir / "smpi_replay.txt").string(), "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("\"format\":\"simgrid-ti\""), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("\"entities\":32"), std::string::npos) << a.out;
  const test::CommandResult b = test::run_kanoko({"info", (dir / "actions_with_isend.txt").string(), "--format", "simgrid-ti"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("3 messages"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("ti cost model: 1e+09 flop/s"), std::string::npos) << b.out;
  // The cost model from the command line: twice the flop rate halves rank 2's 3 s of compute.
  const test::CommandResult fast = test::run_kanoko({"info", (dir / "actions_with_isend.txt").string(), "--flop-rate", "2e9",
                                                     "--latency", "0", "--bandwidth", "1e9", "--json"});
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  EXPECT_NE(fast.out.find("\"end_s\":1.5,"), std::string::npos) << fast.out;
  const test::CommandResult zero = test::run_kanoko({"info", (dir / "actions_with_isend.txt").string(), "--bandwidth", "0"});
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_NE(zero.err.find("cannot replay with a bandwidth of"), std::string::npos) << zero.err;
  const test::CommandResult c = test::run_kanoko({"info", (dir / "actions_with_isend.txt").string(), "--format", "simgrd-ti"});
  EXPECT_NE(c.exit_code, 0);
  EXPECT_NE(c.err.find("did you mean 'simgrid-ti'"), std::string::npos) << c.err;
}

TEST(SimgridTiCli, SimulateTakesTheFormat) {
  test::TempDir dir;
  const auto trace = test::shared_dir() / "traces" / "simgrid-ti" / "actions_with_isend.txt";
  const auto mapping = test::source_dir() / "mappings" / "all-to-all-many.toml";
  const test::CommandResult ok = test::run_kanoko(
      {"simulate", trace.string(), "--mapping", mapping.string(), "-o", (dir / "a.kntj").string(), "--format", "simgrid-ti", "-q"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "a.kntj"));
  const test::CommandResult bad = test::run_kanoko(
      {"simulate", trace.string(), "--mapping", mapping.string(), "-o", (dir / "b.kntj").string(), "--format", "paraver", "-q"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("actions_with_isend.txt:1:1: error: not a Paraver trace"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "b.kntj"));
  const test::CommandResult unknown = test::run_kanoko(
      {"simulate", trace.string(), "--mapping", mapping.string(), "-o", (dir / "c.kntj").string(), "--format", "prv"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("kanoko simulate --format: error: unknown trace format 'prv'"), std::string::npos) << unknown.err;
}

// ------------------------------------------------------------------------------------------------
// Truncation and mutation: only InputError, never a crash or a hang
// ------------------------------------------------------------------------------------------------

std::string read_hostile(const std::string& text) {
  try {
    TimelineBuilder b(TimelineOptions{});
    SimgridTiOptions o;
    o.max_held = 4;
    read_simgrid_ti_text(text, "m.txt", b, o);
    (void)b.take();
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(SimgridTiReaderHostile, TruncatedAtEveryByte) {
  const std::string full = test::read_text(test::shared_dir() / "traces" / "simgrid-ti" / "actions_with_isend.txt");
  ASSERT_EQ(read_hostile(full), "");
  int accepted = 0, refused = 0;
  for (std::size_t cut = 0; cut <= full.size(); ++cut) {
    (read_hostile(full.substr(0, cut)).empty() ? accepted : refused) += 1;
  }
  EXPECT_GT(accepted, 10);
  EXPECT_GT(refused, 10);  // cut before rank 0's recv is matched: a deadlock
}

TEST(SimgridTiReaderHostile, DeterministicMutation) {
  const auto shared = test::shared_dir() / "traces" / "simgrid-ti";
  const std::vector<std::string> seeds{
      test::read_text(shared / "actions_with_isend.txt"),
      test::read_text(test::source_dir() / "tests" / "fuzz" / "seeds" / "simgrid_ti" / "two_ranks_collectives.txt")};
  const std::vector<std::string> tokens{" ", "\n", "\t", "0", "1", "-1", "1e308", "nan", "wait", "waitall",
                                        "0 barrier\n", "1 recv 0 0 5\n", "0 isend 1 0 5\n", "2 init\n", std::string(1, '\0'),
                                        "99999999999999999999 init\n", "\xff"};
  std::mt19937_64 rng(20261123);
  int accepted = 0, refused = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::string s = seeds[static_cast<std::size_t>(iter) % seeds.size()];
    const int ops = 1 + static_cast<int>(rng() % 3);
    for (int op = 0; op < ops; ++op) {
      const std::size_t pos = rng() % (s.size() + 1);
      // Whole-line moves keep the syntax and break the matching; byte edits break the syntax.
      const std::size_t a = s.rfind('\n', pos == 0 ? 0 : pos - 1);
      const std::size_t from = a == std::string::npos ? 0 : a + 1;
      const std::size_t to = std::min(s.size(), s.find('\n', from) == std::string::npos ? s.size() : s.find('\n', from) + 1);
      switch (rng() % 4) {
        case 0: testing::mutate_once(s, rng, tokens); break;
        case 1: s.erase(from, to - from); break;
        case 2: s.insert(rng() % 2 == 0 ? 0 : s.size(), s.substr(from, to - from) + "\n"); break;
        default: {
          const std::string line = s.substr(from, to - from);
          s.erase(from, to - from);
          const std::size_t at = s.find('\n', rng() % (s.size() + 1));
          s.insert(at == std::string::npos ? s.size() : at + 1, line);
        }
      }
    }
    (read_hostile(s).empty() ? accepted : refused) += 1;
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 100);
}

TEST(SimgridTiReaderHostile, FuzzSeedsRead) {
  const auto dir = test::source_dir() / "tests" / "fuzz" / "seeds" / "simgrid_ti";
  const auto names = test::list_dir(dir);
  ASSERT_GE(names.size(), 2U);
  for (const std::string& n : names) EXPECT_EQ(read_hostile(test::read_text(dir / n)), "") << n;
}

}  // namespace
}  // namespace kanoko::trace
