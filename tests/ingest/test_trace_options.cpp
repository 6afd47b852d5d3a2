// [trace] reader options and state categories: parsing and located errors, what each format's
// reader receives, per-format defaults, and traces read end to end through a mapping (a Chrome
// trace whose message sizes sit under a custom args key, the shared LULESH Paraver trace with no
// busy_states).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/mapping/mapping.hpp"
#include "src/ingest/schema.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {
using namespace ::kanoko::ingest;  // NOLINT

const std::string kForce = "[forces.friction]\nbeta = 1\n";

Mapping parse(const std::string& text) { return parse_mapping_text(text, "o.toml"); }

/// The message of a refused mapping ("" if accepted).
std::string errors(const std::string& text) {
  return test::input_error_of([&] { (void)parse(text); });
}

using test::input_error_of;

TEST(TraceOptions, KeysAreReadWithTheirTypes) {
  const Mapping m = parse(
      "[trace]\nmessage_bytes = \"data.size\"\nload_variable = 42000050\nentity_type = \"thread\"\n"
      "communicating = [\"MPI_*\"]\nidle = []\n" + kForce);
  EXPECT_EQ(m.trace.message_bytes, "data.size");
  EXPECT_EQ(m.trace.load_variable, "42000050");
  EXPECT_TRUE(m.trace.communicating_given);
  EXPECT_TRUE(m.trace.idle_given);  // an empty list is a choice: nothing is idle
  EXPECT_FALSE(m.trace.computing_given);
  EXPECT_EQ(parse("[trace]\nload_variable = \"power_used\"\n" + kForce).trace.load_variable, "power_used");
}

TEST(TraceOptions, BadValuesAreLocatedWithSuggestions) {
  const std::pair<std::string, std::string> cases[] = {
      {"mesage_bytes = \"bytes\"", "o.toml:2:16: error: unknown key 'mesage_bytes' in [trace] (did you mean 'message_bytes'?)"},
      {"message_bytes = 3", "o.toml:2:17: error: 'message_bytes' must be a string, found an integer"},
      {"message_bytes = \"\"", "o.toml:2:17: error: 'message_bytes' is empty"},
      {"load_variable = -4", "o.toml:2:17: error: 'load_variable' = -4 is not an event type"},
      {"load_variable = 1.5", "o.toml:2:17: error: 'load_variable' must be a string, found a number"},
      {"communicating = \"MPI_*\"", "o.toml:2:17: error: 'communicating' must be an array of strings"},
      {"idle = [\"x\", 2]", "o.toml:2:14: error: 'idle' must hold strings"},
      {"idel = [\"x\"]", "(did you mean 'idle'?)"},
  };
  for (const auto& [line, expected] : cases) {
    const std::string e = errors("[trace]\n" + line + "\n" + kForce);
    EXPECT_NE(e.find(expected), std::string::npos) << line << "\n" << e;
  }
}

TEST(TraceOptions, AStateInTwoCategoriesIsAnErrorAtItsSecondMention) {
  const std::string e = errors("[trace]\ncommunicating = [\"MPI_Send\"]\nidle = [\"x\", \"MPI_Send\"]\n" + kForce);
  EXPECT_NE(e.find("o.toml:3:14: error: state 'MPI_Send' is listed twice (already in 'communicating')"), std::string::npos) << e;
  const std::string mass = errors("[mass]\nbusy_states = [\"work\"]\n[trace]\nidle = [\"work\"]\n" + kForce);
  EXPECT_NE(mass.find("o.toml:4:9: error: state 'work' is listed twice (already in [mass] 'busy_states')"), std::string::npos)
      << mass;
  const std::string same = errors("[trace]\ncomputing = [\"a\", \"b\", \"a\"]\n" + kForce);
  EXPECT_NE(same.find("o.toml:2:24: error: state 'a' is listed twice (already in 'computing')"), std::string::npos) << same;
  EXPECT_EQ(errors("[trace]\ncomputing = [\"MPI_Wait\"]\ncommunicating = [\"MPI_*\"]\n" + kForce), "");
}

TEST(TraceOptions, EachFormatReceivesWhatAppliesToIt) {
  const Mapping m = parse("[trace]\nmessage_bytes = \"payload.len\"\nload_variable = \"cpu.value\"\n" + kForce);
  const trace::ReaderOptions chrome = reader_options(m, "chrome");
  EXPECT_EQ(chrome.chrome.bytes_key, "payload.len");
  EXPECT_EQ(chrome.chrome.counter, "cpu.value");

  const Mapping prv = parse("[trace]\nload_variable = 42000050\nentity_type = \"thread\"\n" + kForce);
  const trace::ReaderOptions p = reader_options(prv, "paraver");
  EXPECT_EQ(p.paraver.load_event_type, 42000050);
  EXPECT_EQ(p.paraver.entity_level, "thread");
  const Mapping paje = parse("[trace]\nload_variable = \"power_used\"\nentity_type = \"HOST\"\n" + kForce);
  EXPECT_EQ(reader_options(paje, "paje").paje.load_variable, "power_used");
  EXPECT_EQ(reader_options(paje, "paje").paje.entity_type, "HOST");
  EXPECT_EQ(reader_options(paje, "otf2").otf2.metric, "power_used");

  // What a format cannot use is an error at the key.
  EXPECT_NE(input_error_of([&] { (void)reader_options(m, "paraver"); })
                .find("o.toml:2:17: error: 'message_bytes' chooses the args key of Chrome JSON flows; a paraver trace "
                      "fixes its message sizes (the size field of each communication record): remove the key"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { (void)reader_options(m, "native"); }).find("(the bytes of each `msg` entry)"), std::string::npos);
  EXPECT_NE(input_error_of([&] { (void)reader_options(paje, "paraver"); })
                .find("o.toml:3:15: error: for a Paraver trace 'entity_type' is \"task\" (MPI ranks) or \"thread\""),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { (void)reader_options(parse("[trace]\nentity_type = \"threads\"\n" + kForce), "paraver"); })
                .find("(did you mean 'thread'?)"),
            std::string::npos);
  EXPECT_EQ(reader_options(parse("[trace]\nload_variable = \"PAPI_TOT_INS\"\n" + kForce), "paraver").paraver.load_event,
            "PAPI_TOT_INS");  // a .pcf label, resolved by the reader
  // What changes nothing is a warning.
  std::vector<Diagnostic> warnings;
  EXPECT_NO_THROW((void)reader_options(paje, "native", &warnings));
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_NE(warnings[0].message.find("'entity_type' does not apply to native traces"), std::string::npos);
  EXPECT_NE(warnings[1].message.find("their load comes from `load` entries"), std::string::npos);
}

TEST(TraceOptions, StateDefaultsPerFormatAndWhatTheMappingReplaces) {
  const Mapping none = parse(kForce);
  EXPECT_EQ(timeline_options(none, "paraver").busy_states, (std::vector<std::string>{"Running"}));
  EXPECT_EQ(timeline_options(none, "paraver").idle_states.front(), "Idle");
  // SMPI's PMPI_* states are left to the MPI call table (waits idle, sends communicating).
  EXPECT_EQ(timeline_options(none, "paje").communicating_states, (std::vector<std::string>{}));
  EXPECT_EQ(timeline_options(none, "native").busy_states, (std::vector<std::string>{"compute"}));
  EXPECT_EQ(timeline_options(none, "native").idle_states, (std::vector<std::string>{"idle"}));
  EXPECT_EQ(timeline_options(none, "simgrid-ti").communicating_states, (std::vector<std::string>{"communication"}));
  const Mapping some = parse("[trace]\ncommunicating = [\"MPI_Wait*\"]\n" + kForce);
  const trace::TimelineOptions o = timeline_options(some, "paraver");
  EXPECT_EQ(o.busy_states, (std::vector<std::string>{"Running"}));  // not given: the default stays
  EXPECT_EQ(o.communicating_states, (std::vector<std::string>{"MPI_Wait*"}));
  EXPECT_EQ(timeline_options(parse("[mass]\nbusy_states = [\"w\"]\n" + kForce), "paraver").busy_states,
            (std::vector<std::string>{"w"}));
}

// A Chrome trace whose flows carry their sizes under args.payload.len.
const char* const kChrome = R"({"traceEvents": [
  {"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"main"}},
  {"ph":"X","pid":1,"tid":1,"ts":0,"dur":40000,"name":"compute"},
  {"ph":"X","pid":1,"tid":2,"ts":0,"dur":100000,"name":"MPI_Recv"},
  {"ph":"s","pid":1,"tid":1,"ts":10000,"cat":"mpi","name":"m","id":1,"args":{"payload":{"len":1234}}},
  {"ph":"f","pid":1,"tid":2,"ts":20000,"cat":"mpi","name":"m","id":1,"bp":"e"},
  {"ph":"s","pid":1,"tid":2,"ts":150000,"cat":"mpi","name":"m","id":2,"args":{"payload":{"len":66},"bytes":5}},
  {"ph":"f","pid":1,"tid":1,"ts":160000,"cat":"mpi","name":"m","id":2,"bp":"e"},
  {"ph":"C","pid":1,"tid":1,"ts":0,"name":"mem","args":{"heap":10}},
  {"ph":"C","pid":1,"tid":1,"ts":0,"name":"cpu","args":{"value":0.25}},
  {"ph":"X","pid":1,"tid":1,"ts":190000,"dur":10000,"name":"compute"}
]})";

TEST(TraceOptions, ChromeBytesAndCounterComeFromTheMapping) {
  test::TempDir dir;
  test::write_text(dir / "run.json", kChrome);
  const auto read = [&](const std::string& trace_section) {
    return read_body_timeline(dir / "run.json", parse("[trace]\n" + trace_section + "[simulation]\ninterval = 0.1\n" + kForce));
  };
  const trace::Timeline tl = read("message_bytes = \"payload.len\"\nload_variable = \"cpu\"\n");
  ASSERT_EQ(tl.entity_count(), 2U);
  ASSERT_EQ(tl.bin_count, 2U);
  ASSERT_EQ(tl.traffic(0).size(), 1U);
  EXPECT_EQ(tl.traffic(0)[0].src, 0U);
  EXPECT_DOUBLE_EQ(tl.traffic(0)[0].bytes, 1234.0);
  ASSERT_EQ(tl.traffic(1).size(), 1U);
  EXPECT_DOUBLE_EQ(tl.traffic(1)[0].bytes, 66.0);
  EXPECT_DOUBLE_EQ(tl.load_at(0, 0), 0.25);  // the "cpu" counter, not the first one ("mem")
  // The default categories of Chrome: `compute` slices are computing, MPI calls as the MPI call
  // table says (MPI_Recv waits: idle).
  EXPECT_NEAR(tl.busy_fraction(0, 0), 0.4, 1e-9);
  EXPECT_NEAR(tl.idle_fraction(0, 1), 1.0, 1e-9);

  const trace::Timeline other_key = read("message_bytes = \"bytes\"\n");
  EXPECT_DOUBLE_EQ(other_key.traffic(0)[0].bytes, 0.0);  // the first flow has no "bytes"
  EXPECT_DOUBLE_EQ(other_key.traffic(1)[0].bytes, 5.0);
  EXPECT_DOUBLE_EQ(other_key.load_at(0, 0), 10.0);       // default counter: the first
  const trace::Timeline no_key = read("");
  EXPECT_DOUBLE_EQ(no_key.traffic(0)[0].bytes, 0.0);
}

const std::filesystem::path kLulesh =
    test::shared_dir() / "traces" / "paraver" / "lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv";

/// Seconds per state number of application 1's state records, summed straight from the .prv.
std::map<int, double> state_seconds(const std::filesystem::path& prv) {
  std::ifstream in(prv);
  std::map<int, double> out;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::size_t at = 0;
    while (true) {
      const std::size_t colon = line.find(':', at);
      f.push_back(line.substr(at, colon - at));
      if (colon == std::string::npos) break;
      at = colon + 1;
    }
    if (f.size() == 8 && f[0] == "1" && f[2] == "1") out[std::stoi(f[7])] += static_cast<double>(std::stoll(f[6]) - std::stoll(f[5])) * 1e-9;
  }
  return out;
}

TEST(TraceOptions, ParaverNeedsNoBusyStates) {
  SelectionReport report;
  const Mapping m = parse("[mass]\nload = \"busy\"\nload_gain = 1\n" + kForce);
  const trace::Timeline tl = read_body_timeline(kLulesh, m, &report);
  ASSERT_EQ(tl.entity_count(), 8U);
  EXPECT_EQ(report.format, "paraver");
  EXPECT_EQ(report.categories.at("Running"), trace::StateCategory::Computing);
  EXPECT_EQ(report.categories.at("Group Communication"), trace::StateCategory::Idle);  // the MPI call table
  EXPECT_EQ(report.categories.at("Others"), trace::StateCategory::None);
  EXPECT_TRUE(report.warnings.empty());  // defaults that never occur are not warned about
  // Running (1) is computing; Immediate Send (10) and Receive (11) are communicating; Wait/WaitAll
  // (8) and Group Communication (13) wait, as Idle (0), Not created (2), Waiting a message (3),
  // Synchronization (5), Blocked (9), Send Receive (16) would; Others (15) is neither.
  const auto expected = state_seconds(kLulesh);
  ASSERT_GT(expected.at(1), 1.0);
  const double busy = std::accumulate(tl.busy_s.begin(), tl.busy_s.end(), 0.0);
  const double comm = std::accumulate(tl.comm_s.begin(), tl.comm_s.end(), 0.0);
  EXPECT_NEAR(busy, expected.at(1), 1e-6);
  EXPECT_NEAR(comm, expected.at(10) + expected.at(11), 1e-6);
  double idle_expected = 0;
  for (const int id : {0, 2, 3, 5, 8, 9, 13, 16}) idle_expected += expected.count(id) != 0 ? expected.at(id) : 0.0;
  EXPECT_GT(expected.at(8) + expected.at(13), 0.0);
  EXPECT_NEAR(std::accumulate(tl.idle_s.begin(), tl.idle_s.end(), 0.0), idle_expected, 1e-6);
  double max_busy = 0;
  for (std::size_t b = 0; b < tl.bin_count; ++b) {
    for (trace::EntityIndex e = 0; e < 8; ++e) max_busy = std::max(max_busy, tl.busy_fraction(b, e));
  }
  EXPECT_GT(max_busy, 0.5);
  EXPECT_LE(max_busy, 1.0 + 1e-9);
  // Naming the load event type gives load samples (instructions), by number or by .pcf label.
  const trace::Timeline ins = read_body_timeline(kLulesh, parse("[trace]\nload_variable = 42000050\n" + kForce));
  EXPECT_GT(ins.load_sample_count, 100U);
  const trace::Timeline by_label = read_body_timeline(kLulesh, parse("[trace]\nload_variable = \"PAPI_TOT_INS\"\n" + kForce));
  EXPECT_EQ(by_label.load_sample_count, ins.load_sample_count);
  EXPECT_EQ(by_label.load, ins.load);
  const trace::Timeline cycles = read_body_timeline(kLulesh, parse("[trace]\nload_variable = 42000059\n" + kForce));
  EXPECT_NE(cycles.load, ins.load);
  EXPECT_NE(input_error_of([&] { (void)read_body_timeline(kLulesh, parse("[trace]\nload_variable = \"PAPI_TOT_IN\"\n" + kForce)); })
                .find("chop_5it.pcf: error: the .pcf defines no event type labelled 'PAPI_TOT_IN' (did you mean 'PAPI_TOT_INS'?)"),
            std::string::npos);
  // message_bytes cannot change Paraver's sizes: an error located in the mapping.
  EXPECT_NE(input_error_of([&] { (void)read_body_timeline(kLulesh, parse("[trace]\nmessage_bytes = \"size\"\n" + kForce)); })
                .find("o.toml:2:17: error: 'message_bytes' chooses the args key"),
            std::string::npos);
}

TEST(TraceOptions, CheckListsEachStatesCategory) {
  test::TempDir dir;
  test::write_text(dir / "m.toml", "[trace]\nidle = [\"Oth*\"]\ncommunicating = [\"Immediate *\"]\n" + kForce);
  const test::CommandResult r = test::run_kanoko({"check", (dir / "m.toml").string(), "--trace", kLulesh.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Running: 2140 intervals, computing (busy)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Immediate Send: 540 intervals, communicating"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Group Communication: 40 intervals, idle"), std::string::npos) << r.out;  // MPI call table
  EXPECT_NE(r.out.find("Others: 360 intervals, idle"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kanoko::mapping
