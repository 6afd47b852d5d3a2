// The profile by code location (issue 19): locations read from real traces (Extrae's Paraver
// LULESH run, SimGrid SMPI runs of traces/smpi/late.c), the numbers of `kanoko profile`, and bad
// locations in the input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "src/profile/profile.hpp"
#include "src/trace/paraver_reader.hpp"
#include "src/trace/readers.hpp"
#include "tests/support/smpi_traces.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::profile {
namespace KANOKO_UNITY_ID {

struct Read {
  trace::ReadReport report;
  Profile profile;
};

Read read_profile(const std::filesystem::path& trace, ProfileOptions options = {}) {
  const std::string format = trace::detect_format(trace);
  const trace::FormatFacts& facts = trace::format_facts(format);
  options.computing = facts.states.computing;
  options.communicating = facts.states.communicating;
  options.idle = facts.states.idle;
  ProfileBuilder builder(options);
  Read r;
  r.report = trace::read_trace(trace, builder, format);
  r.profile = builder.take();
  return r;
}

/// The 1-based line of traces/smpi/late.c whose text holds `marker` (the program marks its calls).
std::int64_t line_of(const std::string& marker) { return test::line_with(test::source_dir() / "traces/smpi/late.c", marker); }

std::filesystem::path lulesh() {
  return test::shared_dir() / "traces/paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv";
}

/// Checks the late sender's truth (traces/smpi/late.c): the receive waits most, on P - 1 ranks,
/// rank r waiting (late - r) work units per iteration plus the network's latency.
void expect_late_sender(const Profile& p, int ranks, double late, double unit_s, int iters) {
  ASSERT_FALSE(p.rows.empty());
  const ProfileRow& top = p.rows.front();
  EXPECT_EQ(top.file, "late.c");
  EXPECT_EQ(top.line, line_of("/* RECEIVE */")) << top.label;
  EXPECT_EQ(top.calls, static_cast<std::uint64_t>((ranks - 1) * iters));
  EXPECT_EQ(top.computing_s, 0.0);
  EXPECT_EQ(top.spread.ranks, static_cast<std::size_t>(ranks - 1));
  // Without the latency (the same on every rank): min, mean and max as the program says.
  const double min_units = late - ranks + 1, max_units = late - 1, mean_units = late - ranks / 2.0;
  const double latency = top.spread.min_s / iters - min_units * unit_s;
  EXPECT_GT(latency, 0.0);
  EXPECT_LT(latency, 0.0025);  // platforms/flat.xml: well under 2.5 ms per receive
  EXPECT_NEAR(top.spread.max_s, iters * (max_units * unit_s + latency), 1e-3 * top.spread.max_s);
  EXPECT_NEAR(top.spread.mean_s, iters * (mean_units * unit_s + latency), 1e-3 * top.spread.mean_s);
  EXPECT_NEAR(top.spread.imbalance, top.spread.max_s / top.spread.mean_s, 1e-12);
  EXPECT_NEAR(top.waiting_s, top.spread.mean_s * (ranks - 1), 1e-9);
  // The sends carry the bytes: one message per receiving rank and iteration.
  bool sends = false;
  for (const ProfileRow& r : p.rows) {
    if (r.line != line_of("/* SEND */")) continue;
    sends = true;
    EXPECT_EQ(r.messages, static_cast<std::uint64_t>((ranks - 1) * iters));
    EXPECT_EQ(r.waiting_s, 0.0);
  }
  EXPECT_TRUE(sends);
}

/// Keeps states and messages with their locations and checks the location contract: indices
/// announced 1, 2, 3, ... before any event carries them, callers announced before their callees.
class LocationRecorder final : public trace::TraceSink {
 public:
  std::vector<std::tuple<double, double, trace::EntityIndex, std::string>> states;
  std::vector<std::tuple<double, double, trace::EntityIndex, trace::EntityIndex, std::uint64_t>> messages;
  std::vector<trace::CodeLocation> locations;  // strings not kept: only the caller is checked
  int violations = 0;
  std::uint64_t located = 0;

  void on_entity(const trace::Entity&) override {}
  void on_link(const trace::Link&) override {}
  void on_load(const trace::LoadSample&) override {}
  void on_end(double) override {}
  void on_location(trace::LocationIndex index, const trace::CodeLocation& l) override {
    if (index != locations.size() + 1 || l.caller >= index) ++violations;
    locations.push_back(trace::CodeLocation{{}, l.line, {}, l.caller});
  }
  void on_state(const trace::StateInterval& s) override {
    if (s.location > locations.size()) ++violations;
    located += s.location != 0 ? 1 : 0;
    states.emplace_back(s.begin_s, s.end_s, s.entity, std::string(s.name));
  }
  void on_message(const trace::Message& m) override {
    if (m.location > locations.size()) ++violations;
    messages.emplace_back(m.send_s, m.recv_s, m.src, m.dst, m.bytes);
  }
};

// ---- real traces ----

TEST(ProfileParaver, CallersChangeNoStateOrMessage) {
  // The LULESH trace read with its .pcf, and with the caller types renamed away: the states wait
  // for their callers, but the same states and messages come out, with a valid location table.
  const std::string prv = test::read_text(lulesh());
  const std::string row = test::read_text(std::filesystem::path(lulesh()).replace_extension(".row"));
  const std::string pcf = test::read_text(std::filesystem::path(lulesh()).replace_extension(".pcf"));
  std::string plain = pcf;
  for (const char* type : {" 7000000", " 8000000"}) {
    for (std::size_t at = plain.find(type); at != std::string::npos; at = plain.find(type, at + 3)) plain.replace(at, 1, " 9");
  }
  ASSERT_NE(plain, pcf);
  LocationRecorder with, without;
  trace::read_paraver_trace_text(prv, pcf, row, "lulesh.prv", with);
  trace::read_paraver_trace_text(prv, plain, row, "lulesh.prv", without);
  EXPECT_EQ(with.violations, 0);
  EXPECT_GT(with.located, 2000U);
  EXPECT_EQ(without.located, 0U);
  EXPECT_TRUE(without.locations.empty());
  bool path = false;
  for (const trace::CodeLocation& l : with.locations) path = path || l.caller != 0;
  EXPECT_TRUE(path);
  // Equal times may leave in another order: compare sorted.
  for (auto* r : {&with, &without}) {
    std::sort(r->states.begin(), r->states.end());
    std::sort(r->messages.begin(), r->messages.end());
  }
  EXPECT_EQ(with.states, without.states);
  EXPECT_EQ(with.messages, without.messages);
}

TEST(ProfileParaver, LuleshCallersGiveFunctionsFilesAndLinesFromThePcf) {
  const Read r = read_profile(lulesh());
  // Every MPI call of the 8 ranks carries its callers (3 levels); the Running states do not.
  EXPECT_GT(r.report.locations, 100U);
  EXPECT_EQ(r.report.states_with_location, r.profile.states_with_location);
  EXPECT_GT(r.profile.states_with_location, 2000U);
  EXPECT_LT(r.profile.states_with_location, r.profile.states);
  EXPECT_EQ(r.report.messages_with_location, r.report.messages_with_bytes + r.report.messages_without_bytes);
  bool comm_send = false;
  std::uint64_t bytes = 0;
  for (const ProfileRow& row : r.profile.rows) {
    bytes += row.bytes;
    if (row.function == "CommSend") {
      comm_send = true;
      EXPECT_EQ(row.file, "lulesh-comm.cc");
      EXPECT_GT(row.line, 0);
    }
    EXPECT_EQ(row.label.find("Unresolved"), std::string::npos) << row.label;
  }
  EXPECT_TRUE(comm_send);
  EXPECT_GT(bytes, 0U);
  // The run waits most in TimeIncrement's MPI_Allreduce (lulesh.cc), on all 8 ranks.
  EXPECT_EQ(r.profile.rows.front().function, "TimeIncrement");
  EXPECT_EQ(r.profile.rows.front().file, "lulesh.cc");
  EXPECT_EQ(r.profile.rows.front().spread.ranks, 8U);
  EXPECT_GT(r.profile.rows.front().spread.imbalance, 1.0);

  // By path: the callers at levels 2 and 3 follow the site.
  ProfileOptions by_path;
  by_path.by = GroupBy::Path;
  const Read paths = read_profile(lulesh(), by_path);
  bool nested = false;
  for (const ProfileRow& row : paths.profile.rows) {
    nested = nested || (row.function == "CommSend" && row.label.find(" < ") != std::string::npos &&
                        row.label.find("CalcQForElems") != std::string::npos);
  }
  EXPECT_TRUE(nested);
  EXPECT_GT(paths.profile.rows.size(), r.profile.rows.size());
}

TEST(ProfileOtf2, ScorePFunctionsGiveLocationsAndMpiCallsSitInThem) {
  // Score-P's ping-pong: main is compiler-instrumented (ping-pong.c, from line 5); every MPI call
  // is made from main.
  const Read r = read_profile(test::shared_dir() / "traces/otf2/ping-pong-otf2/traces.otf2");
  EXPECT_EQ(r.report.locations, 1U);
  EXPECT_EQ(r.report.messages_with_location, r.report.messages_with_bytes + r.report.messages_without_bytes);
  EXPECT_GT(r.report.messages_with_location, 0U);
  ASSERT_FALSE(r.profile.rows.empty());
  const ProfileRow& main = r.profile.rows.front();
  EXPECT_EQ(main.function, "main");
  EXPECT_TRUE(main.file.ends_with("/ping-pong.c")) << main.file;
  EXPECT_EQ(main.line, 5);
  EXPECT_EQ(main.calls, r.profile.states);  // main's own state and the MPI calls in it
  EXPECT_GT(main.communicating_s, 0.0);
  EXPECT_EQ(main.spread.ranks, 2U);
}

TEST(ProfileChrome, StackFramesGiveFunctionsAndCallPaths) {
  // stackFrames after the events, parents as strings and numbers, a parent loop, an unknown id.
  test::TempDir dir;
  const auto json = dir / "frames.json";
  test::write_text(json, R"({"traceEvents": [
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":1,"ts":0,"dur":3000,"sf":3},
 {"ph":"X","name":"MPI_Recv","pid":1,"tid":2,"ts":0,"dur":1000,"sf":"3"},
 {"ph":"B","name":"compute","pid":1,"tid":1,"ts":3000,"sf":2},
 {"ph":"E","pid":1,"tid":1,"ts":5000},
 {"ph":"X","name":"MPI_Wait","pid":1,"tid":2,"ts":1000,"dur":500,"sf":9},
 {"ph":"X","name":"MPI_Wait","pid":1,"tid":2,"ts":2000,"dur":500,"sf":7}],
"stackFrames": {"1": {"name": "main"}, "2": {"name": "solve", "parent": "1"}, "3": {"name": "exchange", "parent": 2},
  "7": {"name": "loop", "parent": "8"}, "8": {"name": "loop2", "parent": "7"}}})");
  ProfileOptions by_path;
  by_path.by = GroupBy::Path;
  const Read r = read_profile(json, by_path);
  ASSERT_GE(r.profile.rows.size(), 4U);
  EXPECT_EQ(r.profile.rows.front().label, "exchange < solve < main");
  EXPECT_EQ(r.profile.rows.front().spread.ranks, 2U);
  EXPECT_DOUBLE_EQ(r.profile.rows.front().waiting_s, 0.004);
  EXPECT_EQ(r.profile.states_with_location, 4U);
  bool loop = false, solve = false;
  for (const ProfileRow& row : r.profile.rows) {
    loop = loop || row.label == "loop < loop2";
    solve = solve || (row.label == "solve < main" && row.calls == 1);
  }
  EXPECT_TRUE(loop);
  EXPECT_TRUE(solve);
  const std::vector<std::string> warnings = r.report.warning_lines();
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_EQ(warnings[0].rfind(json.string() + ":6:", 0), 0U) << warnings[0];
  EXPECT_NE(warnings[0].find("\"sf\" names no entry"), std::string::npos) << warnings[0];
}

TEST(ProfileSmpi, ShippedLateSenderPutsTheReceiveOnTopWithItsRankSpread) {
  const Read r = read_profile(test::source_dir() / "traces/smpi/late4-locations.trace");
  EXPECT_EQ(r.report.states_with_location, r.profile.states);  // SMPI locates every MPI state
  expect_late_sender(r.profile, 4, 5, 0.010, 3);
}

TEST(ProfileSmpi, GeneratedLateSenderOnSixRanks) {
  KANOKO_REQUIRE_SMPI();
  test::SmpiRun run;
  run.program = "late";
  run.ranks = 6;
  run.sizes = true;
  run.locations = true;
  run.args = {"--late", "8", "--work", "2e6", "--iters", "2"};
  const Read r = read_profile(test::smpi_trace(run));
  expect_late_sender(r.profile, 6, 8, 0.002, 2);
}

TEST(ProfileSmpi, RangeAndRanksSelectWhatIsCounted) {
  const auto trace = test::source_dir() / "traces/smpi/late4-locations.trace";
  ProfileOptions one;
  one.ranks = {3};
  const Read r3 = read_profile(trace, one);
  ASSERT_FALSE(r3.profile.rows.empty());
  EXPECT_EQ(r3.profile.ranks, 1U);
  EXPECT_EQ(r3.profile.rows.front().spread.ranks, 1U);
  // Rank 3 waits the shortest: (5 - 3) units of 10 ms in each of 3 iterations, plus latency.
  EXPECT_GT(r3.profile.rows.front().waiting_s, 0.060);
  EXPECT_LT(r3.profile.rows.front().waiting_s, 0.065);
  // The first iteration only (it ends at the first barrier, after 50 ms of rank 0's work).
  ProfileOptions first;
  first.to_s = 0.05;
  const Read r1 = read_profile(trace, first);
  const Read all = read_profile(trace);
  EXPECT_NEAR(r1.profile.rows.front().waiting_s, all.profile.rows.front().waiting_s / 3, 0.002);
  EXPECT_EQ(r1.profile.rows.front().line, all.profile.rows.front().line);
}

// ---- the command ----

TEST(ProfileCommand, TextJsonCsvAndFunctionRows) {
  const std::string trace = (test::source_dir() / "traces/smpi/late4-locations.trace").string();
  const test::CommandResult text = test::run_kanoko({"profile", trace});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string receive = "late.c:" + std::to_string(line_of("/* RECEIVE */"));
  // The first row after the two header lines is the receive.
  const std::size_t first_row = text.out.find('\n', text.out.find('\n') + 1) + 1;
  EXPECT_NE(text.out.substr(first_row, text.out.find('\n', first_row) - first_row).find(receive), std::string::npos) << text.out;
  const test::CommandResult json = test::run_kanoko({"profile", trace, "--json", "--top", "1"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"line\":" + std::to_string(line_of("/* RECEIVE */"))), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"rows_left_out\":5"), std::string::npos) << json.out;
  const test::CommandResult csv = test::run_kanoko({"profile", trace, "--csv", "--by", "function"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("label,file,line,function,calls,", 0), 0U) << csv.out;
  // SMPI names no functions: rows by function are by file (late.c and common.h).
  EXPECT_NE(csv.out.find("\nlate.c,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\ncommon.h,"), std::string::npos) << csv.out;
  const test::CommandResult info_json = test::run_kanoko({"info", trace, "--json"});
  EXPECT_NE(info_json.out.find("\"locations\":6,\"states_with_location\":50,\"messages_with_location\":9"), std::string::npos)
      << info_json.out;
  const test::CommandResult info = test::run_kanoko({"info", trace});
  EXPECT_NE(info.out.find("locations:   6 code locations; 50 of 50 states and 9 of 9 messages carry one"), std::string::npos)
      << info.out;
}

TEST(ProfileCommand, TraceWithoutLocationsGetsOneLineSayingHowToRecordThem) {
  for (const auto& [trace, hint] :
       {std::pair{test::source_dir() / "traces/smpi/pipeline8-flat.trace", "smpi/trace-call-location:yes"},
        std::pair{test::shared_dir() / "traces/paraver/qsort_beo3.prv", "<callers enabled=\"yes\">"}}) {
    const test::CommandResult r = test::run_kanoko({"profile", trace.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("no code locations"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(hint), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;  // one line, no table
  }
}

TEST(ProfileCommand, BadOptionsAreOneLineErrors) {
  const std::string trace = (test::source_dir() / "traces/smpi/late4-locations.trace").string();
  for (const auto& [args, expected] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--by", "file"}, "--by: error: expected line, function or path"},
           {{"--ranks", "2-1"}, "--ranks: error:"},
           {{"--ranks", "a"}, "'a' is not a rank"},
           {{"--from", "1", "--to", "0.5"}, "--to: error: the window is empty"},
           {{"--json", "--csv"}, "choose --json or --csv"}}) {
    std::vector<std::string> argv{"profile", trace};
    argv.insert(argv.end(), args.begin(), args.end());
    const test::CommandResult r = test::run_kanoko(argv);
    EXPECT_NE(r.exit_code, 0) << args.front();
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  }
}

// ---- bad locations in the input ----

/// A two-rank SMPI-style Pajé trace with call locations; `fname` and `lnumber` are the receive's.
std::string smpi_paje(const std::string& fname, const std::string& lnumber) {
  return "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
         "%EventDef PajeDefineStateType 2\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
         "%EventDef PajeCreateContainer 6\n% Time date\n% Alias string\n% Type string\n% Container string\n"
         "% Name string\n%EndEventDef\n"
         "%EventDef PajePushState 12\n% Time date\n% Type string\n% Container string\n% Value string\n"
         "% Size int\n% Fname string\n% Lnumber int\n%EndEventDef\n"
         "%EventDef PajePopState 13\n% Time date\n% Type string\n% Container string\n%EndEventDef\n"
         "0 1 0 MPI\n2 2 1 MPI_STATE\n6 0 1 1 0 \"rank-0\"\n6 0 2 1 0 \"rank-1\"\n"
         "12 0 2 1 PMPI_Recv 4 \"" + fname + "\" " + lnumber + "\n12 0 2 2 PMPI_Send 4 \"ok.c\" 3\n"
         "13 0.5 2 2 \"ok.c\" 3\n13 1.5 2 1 \"" + fname + "\" " + lnumber + "\n";
}

TEST(ProfileSmpi, ManyCallSitesKeepTheirOwnLines) {
  // 300 call sites visited twice: more than the Pajé reader's cache of call-site texts holds, so
  // sites share its slots; each must still get its own line (and the second visit its location).
  std::string text = smpi_paje("ok.c", "1");
  double t = 2;
  for (int pass = 0; pass < 2; ++pass) {
    for (int line = 1; line <= 300; ++line) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "12 %.6f 2 1 PMPI_Recv 4 \"many.c\" %d\n13 %.6f 2 1\n", t, line, t + line * 1e-3);
      text += buf;
      t += 1;
    }
  }
  test::TempDir dir;
  const auto trace = dir / "many.trace";
  test::write_text(trace, text);
  const Read r = read_profile(trace);
  std::size_t many = 0;
  for (const ProfileRow& row : r.profile.rows) {
    if (row.file != "many.c") continue;
    ++many;
    EXPECT_EQ(row.calls, 2U) << row.label;
    EXPECT_NEAR(row.waiting_s, 2 * static_cast<double>(row.line) * 1e-3, 1e-9) << row.label;
  }
  EXPECT_EQ(many, 300U);
}

TEST(ProfileBadInput, ControlCharactersAndInvalidUtf8AreShownEscaped) {
  test::TempDir dir;
  const auto trace = dir / "names.trace";
  test::write_text(trace, smpi_paje(std::string("we\x01ird\xff\xfe.c"), "7"));
  for (const char* mode : {"--json", "--csv", "--top"}) {
    std::vector<std::string> argv{"profile", trace.string(), mode};
    if (std::string(mode) == "--top") argv.emplace_back("5");
    const test::CommandResult r = test::run_kanoko(argv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // As text; in JSON a string holding that text (its backslashes escaped).
    const std::string shown = std::string(mode) == "--json" ? "we\\\\x01ird\\\\xFF\\\\xFE.c" : "we\\x01ird\\xFF\\xFE.c";
    EXPECT_NE(r.out.find(shown), std::string::npos) << mode << ": " << r.out;
    for (const char c : r.out) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << mode;
  }
}

TEST(ProfileBadInput, LnumberThatIsNoLineIsALocatedWarning) {
  test::TempDir dir;
  const auto trace = dir / "line.trace";
  const std::string text = smpi_paje("late.c", "1e999x");
  test::write_text(trace, text);
  const std::string push = text.substr(0, text.find("12 0 2 1 PMPI_Recv"));
  const auto push_line = std::count(push.begin(), push.end(), '\n') + 1;
  const test::CommandResult r = test::run_kanoko({"profile", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(trace.string() + ":" + std::to_string(push_line) + ":"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Lnumber that is not a line number"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("  late.c\n"), std::string::npos) << r.out;  // the file, without a line
}

TEST(ProfileBadInput, PcfCallerTableThatDisagreesWithTheEventsIsALocatedWarning) {
  test::TempDir dir;
  const auto prv = dir / "callers.prv";
  // Caller value 7 and line value 9 are not in the .pcf's tables; value 1 is.
  test::write_text(prv,
                   "#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:1)\n"
                   "1:1:1:1:1:0:100:1\n"
                   "1:1:1:1:1:100:600:3\n"
                   "2:1:1:1:1:100:50000001:3:70000001:7:80000001:9:70000002:1:80000002:1\n"
                   "1:2:1:2:1:0:500:1\n"
                   "1:2:1:2:1:500:600:3\n"
                   "2:2:1:2:1:500:50000001:3:70000001:1:80000001:1\n");
  test::write_text(dir / "callers.pcf",
                   "STATES\n1 Running\n3 Waiting a message\n\n"
                   "EVENT_TYPE\n0 70000001 Caller at level 1\n0 70000002 Caller at level 2\nVALUES\n0 End\n"
                   "1 main.cpp [main]\n\n"
                   "EVENT_TYPE\n0 80000001 Caller line at level 1\n0 80000002 Caller line at level 2\nVALUES\n"
                   "0 End\n1 42 (main.cpp, a.out)\n");
  const test::CommandResult r = test::run_kanoko({"profile", prv.string(), "--by", "path"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(prv.string() + ":4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("caller value not defined in the .pcf"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("caller line value not defined in the .pcf"), std::string::npos) << r.err;
  // Rank 1 waits 500 ns at an unknown caller called from main.cpp:42; rank 2 100 ns in main.
  EXPECT_NE(r.out.find("caller 7 < main.cpp:42 main\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("main.cpp:42 main\n"), std::string::npos) << r.out;
  const std::size_t unknown = r.out.find("caller 7");
  EXPECT_LT(unknown, r.out.find("  main.cpp:42 main\n")) << r.out;  // more waiting: first
}

}  // namespace
}  // namespace kanoko::profile
