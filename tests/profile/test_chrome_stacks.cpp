// Chrome/Perfetto JSON inline "stack" arrays as code locations (root first, the last frame the call
// site), bad stacks, and `kanoko profile --from/--to iter:K` through the simulate window parser.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/profile/profile.hpp"
#include "src/trace/readers.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::profile {
namespace KANOKO_UNITY_ID {

struct Read {
  trace::ReadReport report;
  Profile profile;
};

Read read_json(const std::string& json, GroupBy by = GroupBy::Path) {
  test::TempDir dir;
  const auto path = dir / "t.json";
  test::write_text(path, json);
  ProfileOptions o;
  o.by = by;
  const trace::FormatFacts& facts = trace::format_facts("chrome");
  o.computing = facts.states.computing;
  o.communicating = facts.states.communicating;
  o.idle = facts.states.idle;
  ProfileBuilder builder(o);
  Read r;
  r.report = trace::read_trace(path, builder, "chrome");
  r.profile = builder.take();
  return r;
}

const ProfileRow* row(const Profile& p, const std::string& label) {
  for (const ProfileRow& r : p.rows) {
    if (r.label == label) return &r;
  }
  return nullptr;
}

TEST(ChromeStacks, InlineStackIsTheCallPathRootFirst) {
  const Read r = read_json(R"({"traceEvents": [
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":1,"ts":0,"dur":3000,"stack":["main","solve","exchange"]},
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":2,"ts":0,"dur":1000,"stack":["main","solve","exchange"]},
 {"ph":"B","name":"compute","pid":1,"tid":1,"ts":3000,"stack":["main","solve"]},
 {"ph":"E","pid":1,"tid":1,"ts":5000},
 {"ph":"X","name":"MPI_Wait","pid":1,"tid":2,"ts":1000,"dur":500,"stack":["0x4005d0","0x400a1f"]},
 {"ph":"X","name":"MPI_Wait","pid":1,"tid":2,"ts":2000,"dur":500,"sf":1,"stack":["ignored"]}],
 "stackFrames": {"1": {"name": "main"}}})");
  EXPECT_TRUE(r.report.warning_lines().empty()) << r.report.warning_lines().front();
  ASSERT_FALSE(r.profile.rows.empty());
  EXPECT_EQ(r.profile.rows.front().label, "exchange < solve < main");
  EXPECT_DOUBLE_EQ(r.profile.rows.front().waiting_s, 0.004);
  EXPECT_EQ(r.profile.rows.front().spread.ranks, 2U);
  ASSERT_NE(row(r.profile, "solve < main"), nullptr);
  EXPECT_DOUBLE_EQ(row(r.profile, "solve < main")->computing_s, 0.002);
  ASSERT_NE(row(r.profile, "0x400a1f < 0x4005d0"), nullptr) << "addresses are kept as written";
  ASSERT_NE(row(r.profile, "main"), nullptr) << "\"sf\" wins over \"stack\"";
  EXPECT_EQ(row(r.profile, "ignored"), nullptr);
  EXPECT_EQ(r.profile.states_with_location, r.profile.states);
  // By line, the call site alone: the innermost frame.
  const Read by_line = read_json(R"([{"ph":"X","name":"MPI_Recv","pid":1,"tid":1,"ts":0,"dur":10,"stack":["main","exchange"]}])",
                                 GroupBy::Line);
  ASSERT_EQ(by_line.profile.rows.size(), 1U);
  EXPECT_EQ(by_line.profile.rows.front().label, "exchange");
}

TEST(ChromeStacks, FramesThatAreNotStringsAreLocatedWarnings) {
  const Read r = read_json(R"({"traceEvents": [
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":1,"ts":0,"dur":1000,"stack":["main",7,{"name":"x"},["y"],null,"recv"]},
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":1,"ts":1000,"dur":1000,"stack":[]},
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":1,"ts":2000,"dur":1000,"stack":"main"}]})");
  const std::vector<std::string> w = r.report.warning_lines();
  ASSERT_EQ(w.size(), 1U);
  EXPECT_NE(w[0].find("t.json:2:"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("\"stack\" holds a frame that is not a string"), std::string::npos) << w[0];
  ASSERT_NE(row(r.profile, "recv < main"), nullptr);
  EXPECT_DOUBLE_EQ(row(r.profile, "recv < main")->waiting_s, 0.001);
  ASSERT_NE(row(r.profile, "(no location)"), nullptr) << "an empty stack or a string is no location";
  EXPECT_EQ(row(r.profile, "(no location)")->calls, 2U);
}

TEST(ChromeStacks, DeepStacksKeepTheInnermostFramesAndHugeNamesAreCut) {
  std::string stack;
  for (int i = 0; i < 100000; ++i) stack += (i ? ",\"f" : "\"f") + std::to_string(i) + "\"";
  const std::string huge(5'000'000, 'n');
  const Read r = read_json("[{\"ph\":\"X\",\"name\":\"MPI_Recv\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10,\"stack\":[" + stack +
                           "]},\n{\"ph\":\"X\",\"name\":\"MPI_Recv\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":10,\"stack\":[\"" + huge +
                           "\"]}]");
  const std::vector<std::string> w = r.report.warning_lines();
  ASSERT_EQ(w.size(), 1U);
  EXPECT_NE(w[0].find("\"stack\" deeper than 256 frames (the outermost left out)"), std::string::npos) << w[0];
  ASSERT_EQ(r.profile.rows.size(), 2U);
  for (const ProfileRow& p : r.profile.rows) {
    if (p.function.size() > 100) {
      EXPECT_EQ(p.function.size(), 1024U);  // LocationTable::kMaxNameBytes
    } else {
      EXPECT_EQ(p.function, "f99999");
      EXPECT_EQ(p.label.rfind("f99999 < f99998 < ", 0), 0U);
      EXPECT_NE(p.label.find("f99968 < ..."), std::string::npos) << "32 frames shown (max_path_frames)";
    }
  }
  EXPECT_EQ(r.report.locations, 256U + 1U);
}

TEST(ChromeStacks, StackNestedTooDeepIsALocatedErrorNotACrash) {
  test::TempDir dir;
  const auto path = dir / "deep.json";
  test::write_text(path, "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1,\"stack\":" +
                             std::string(100000, '[') + std::string(100000, ']') + "}]");
  const test::CommandResult r = test::run_kanoko({"profile", path.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.rfind(path.string() + ":1:", 0), 0U) << r.err;
  EXPECT_NE(r.err.find("nested deeper than"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

// ---- kanoko profile --from/--to iter:K ----

TEST(ProfileIterations, IterationBoundsAreTheSimulateWindowsOnes) {
  test::TempDir dir;
  const auto path = dir / "iters.json";
  // Three iterations marked by instant events at 0, 10 and 20 ms; each waits 1, 2 and 3 ms.
  test::write_text(path, R"([
 {"ph":"i","name":"iteration","pid":1,"tid":1,"ts":0},
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":1,"ts":1000,"dur":1000,"stack":["main","recv"]},
 {"ph":"i","name":"iteration","pid":1,"tid":1,"ts":10000},
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":1,"ts":11000,"dur":2000,"stack":["main","recv"]},
 {"ph":"i","name":"iteration","pid":1,"tid":1,"ts":20000},
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":1,"ts":21000,"dur":3000,"stack":["main","recv"]},
 {"ph":"X","name":"done","pid":1,"tid":1,"ts":29000,"dur":1000}])");
  const auto waiting = [&](std::vector<std::string> range) {
    std::vector<std::string> argv{"profile", path.string(), "--csv"};
    argv.insert(argv.end(), range.begin(), range.end());
    const test::CommandResult r = test::run_kanoko(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::size_t at = r.out.find("\nrecv,");
    if (at == std::string::npos) return -1.0;
    // label,file,line,function,calls,computing_s,communicating_s,waiting_s
    std::size_t pos = at + 1;
    for (int field = 0; field < 7; ++field) pos = r.out.find(',', pos) + 1;
    return std::stod(r.out.substr(pos));
  };
  EXPECT_DOUBLE_EQ(waiting({}), 0.006);
  EXPECT_DOUBLE_EQ(waiting({"--from", "iter:2", "--to", "iter:2"}), 0.002);
  EXPECT_DOUBLE_EQ(waiting({"--from", "iter:2"}), 0.005);
  EXPECT_DOUBLE_EQ(waiting({"--to", "iter:1"}), 0.001);
  EXPECT_DOUBLE_EQ(waiting({"--from", "0.01", "--to", "0.02"}), 0.002);
  // The same bounds and errors as simulate's --from/--to.
  for (const auto& [args, expected] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--from", "iter:4"}, "iter:4"},
           {{"--from", "iter:0"}, "--from: error:"},
           {{"--to", "later"}, "--to: error:"},
           {{"--from", "iter:3", "--to", "iter:2"}, "empty"},
           {{"--marker", "iteration"}, "--marker: error:"}}) {
    std::vector<std::string> argv{"profile", path.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const test::CommandResult r = test::run_kanoko(argv);
    EXPECT_NE(r.exit_code, 0) << args.front();
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
  const test::CommandResult none =
      test::run_kanoko({"profile", (test::source_dir() / "traces/smpi/late4-locations.trace").string(), "--from", "iter:2"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("late4-locations.trace"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace kanoko::profile
