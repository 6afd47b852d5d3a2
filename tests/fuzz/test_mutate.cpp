// The mutation harness's own checks: deterministic mutants, the classification of every kind of
// run, and whole campaigns of kanoko_mutate against stand-in programs that crash, hang, run away,
// leave files behind or fail without naming their input.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <csignal>
#include <sstream>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tests/fuzz/mutate.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using kanoko::fuzz::Outcome;

namespace {

TEST(Mutate, IsDeterministicBySeedAndChangesTheInput) {
  const std::string seed = kanoko::test::read_text(kanoko::test::source_dir() / "tests/fuzz/seeds/native_trace/small.kntr");
  std::size_t changed = 0;
  for (std::uint64_t s = 0; s < 200; ++s) {
    std::mt19937_64 a(s), b(s);
    const std::string ma = kanoko::fuzz::mutate(seed, a);
    EXPECT_EQ(ma, kanoko::fuzz::mutate(seed, b));
    changed += ma != seed ? 1U : 0U;
  }
  EXPECT_GT(changed, 180U);
}

TEST(Mutate, NamesPosition) {
  struct Case {
    const char* line;
    const char* input;
    bool located;
  };
  for (const Case& c : {Case{"/w/in/a.kntr:12:3: bad number", "/w/in/a.kntr", true},
                        Case{"/w/in/a.kntr:12: bad number", "/w/in/a.kntr", true},
                        Case{"/w/in/a.kntj: byte 4096: bad block", "/w/in/a.kntj", true},
                        Case{"/w/in/arch/traces/0.evt: record 7: bad", "/w/in/arch", true},
                        Case{"/w/in/a.kntr: not a trace", "/w/in/a.kntr", false},
                        Case{"/w/in/b.kntr:3: bad", "/w/in/a.kntr", false},
                        Case{"kanoko simulate: error: stod", "/w/in/a.kntr", false}}) {
    EXPECT_EQ(kanoko::fuzz::names_position(c.line, c.input), c.located) << c.line;
  }
}

kanoko::fuzz::RunResult failed_with(const std::string& err) {
  kanoko::fuzz::RunResult r;
  r.exit_code = 1;
  r.err = err;
  return r;
}

TEST(Mutate, ClassifiesEveryKindOfEnd) {
  using kanoko::fuzz::classify;
  const std::string in = "/w/in/a.kntr";
  kanoko::fuzz::RunResult ok;
  ok.exit_code = 0;
  EXPECT_EQ(classify(ok, in), Outcome::ok);
  EXPECT_EQ(classify(failed_with("warning: x\n/w/in/a.kntr:3:1: bad\n"), in), Outcome::located);
  EXPECT_EQ(classify(failed_with("/w/in/a.kntr: unknown trace format\n"), in), Outcome::whole_file);
  EXPECT_EQ(classify(failed_with("/w/in/a.kntr:3:1: error: bad\nkanoko check: 1 problem\n"), in), Outcome::located);
  EXPECT_EQ(classify(failed_with("kanoko info: error: stod\n"), in), Outcome::unlocated);
  EXPECT_EQ(classify(failed_with("/w/in/a.kntr:3: warning: odd\nkanoko info: error: stod\n"), in), Outcome::unlocated);
  EXPECT_EQ(classify(failed_with("kanoko info: error: std::bad_alloc\n"), in), Outcome::runaway);
  EXPECT_EQ(classify(failed_with("==1==ERROR: AddressSanitizer: heap-buffer-overflow\n"), in), Outcome::crash);
  EXPECT_EQ(classify(failed_with("x.cpp:3:1: runtime error: signed integer overflow\n"), in), Outcome::crash);
  kanoko::fuzz::RunResult signalled;
  signalled.signal = SIGSEGV;
  EXPECT_EQ(classify(signalled, in), Outcome::crash);
  kanoko::fuzz::RunResult slow = signalled;
  slow.timed_out = true;
  EXPECT_EQ(classify(slow, in), Outcome::hang);
  kanoko::fuzz::RunResult big;
  big.signal = SIGXFSZ;
  EXPECT_EQ(classify(big, in), Outcome::runaway);
  kanoko::fuzz::RunResult left = failed_with("/w/in/a.kntr:3:1: bad\n");
  left.leftovers = {"out/run.kntj"};
  EXPECT_EQ(classify(left, in), Outcome::leftover);
}

/// Runs kanoko_mutate on the native seeds with `script` standing in for kanoko.
kanoko::test::CommandResult campaign(const kanoko::test::TempDir& dir, const std::string& script,
                                     std::vector<std::string> extra) {
  const fs::path fake = dir / "fake-kanoko";
  kanoko::test::write_text(fake, "#!/bin/sh\n" + script + "\n");
  fs::permissions(fake, fs::perms::owner_all);
  std::vector<std::string> argv{KANOKO_TEST_MUTATE, "--kanoko", fake.string(), "--source", kanoko::test::source_dir().string(),
                                "--formats", "native", "--rounds", "2", "--timeout", "2", "--work", (dir / "work").string(),
                                "--artifacts", (dir / "artifacts").string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return kanoko::test::run_program(argv);
}

/// The count of `outcome` in the harness's total row.
std::size_t total_of(const std::string& report, Outcome outcome) {
  const std::size_t at = report.find("\ntotal");
  if (at == std::string::npos) return 0;
  std::istringstream row(report.substr(at + 7));
  std::size_t runs = 0, n = 0;
  row >> runs;
  for (std::size_t k = 0; k <= static_cast<std::size_t>(outcome); ++k) row >> n;
  return n;
}

TEST(MutateCampaign, LocatedErrorsPass) {
  const kanoko::test::TempDir dir;
  // $2 is the input of every trace subcommand but plot (whose input is $3).
  const auto r = campaign(dir, R"(for a in "$@"; do case "$a" in */in/*) echo "$a:2:1: bad" >&2;; esac; done; exit 1)", {});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(total_of(r.out, Outcome::located), 10U) << r.out;  // 2 rounds x 5 subcommands
}

TEST(MutateCampaign, CrashesFailAndAreKept) {
  const kanoko::test::TempDir dir;
  const auto r = campaign(dir, "kill -SEGV $$", {"--commands", "info"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(total_of(r.out, Outcome::crash), 2U) << r.out;
  const fs::path kept = dir / "artifacts" / "crash";
  ASSERT_TRUE(fs::exists(kept)) << r.out;
  const auto cases = kanoko::test::list_dir(kept);
  ASSERT_EQ(cases.size(), 2U);
  EXPECT_TRUE(fs::exists(kept / cases[0] / "command.txt"));
  EXPECT_TRUE(fs::exists(kept / cases[0] / "stderr.txt"));
}

TEST(MutateCampaign, HangsAreKilledAtTheTimeBound) {
  const kanoko::test::TempDir dir;
  const auto r = campaign(dir, "sleep 30", {"--commands", "info", "--rounds", "1", "--timeout", "0.5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(total_of(r.out, Outcome::hang), 1U) << r.out;
}

TEST(MutateCampaign, OutputOrMemoryBeyondTheBoundIsARunaway) {
  // 3 MB on stdout against a 1 MiB bound; a shell variable of 64 MiB of text against 16 MiB of
  // resident memory (under RLIMIT_AS the shell would just crash).
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"head -c 3000000 /dev/zero", {"--output-mb", "1"}},
      {"x=$(head -c 67108864 /dev/zero | tr '\\0' a); echo ${#x}", {"--memory-mb", "16", "--no-address-limit"}}};
  for (const auto& [script, bound] : cases) {
    const kanoko::test::TempDir dir;
    std::vector<std::string> extra{"--commands", "info", "--rounds", "1"};
    extra.insert(extra.end(), bound.begin(), bound.end());
    const auto r = campaign(dir, script, extra);
    EXPECT_EQ(r.exit_code, 1) << script << '\n' << r.out << r.err;
    EXPECT_EQ(total_of(r.out, Outcome::runaway), 1U) << script << '\n' << r.out;
  }
}

TEST(MutateCampaign, FilesLeftBehindAreLeftovers) {
  const kanoko::test::TempDir dir;
  // A failed run that keeps its output, and a successful one that leaves a temp file.
  const auto failing = campaign(dir, "touch half-written; exit 1", {"--commands", "info", "--rounds", "1"});
  EXPECT_EQ(failing.exit_code, 1) << failing.out << failing.err;
  EXPECT_EQ(total_of(failing.out, Outcome::leftover), 1U) << failing.out;
  const auto temp = campaign(dir, "touch \"$TMPDIR/scratch\"", {"--commands", "info", "--rounds", "1"});
  EXPECT_EQ(temp.exit_code, 1) << temp.out << temp.err;
  EXPECT_EQ(total_of(temp.out, Outcome::leftover), 1U) << temp.out;
}

TEST(MutateCampaign, UnlocatedErrorsFailOnlyWhenStrict) {
  const kanoko::test::TempDir dir;
  const std::string script = "echo 'kanoko info: error: stod' >&2; exit 1";
  const auto lax = campaign(dir, script, {"--commands", "info"});
  EXPECT_EQ(lax.exit_code, 0) << lax.out << lax.err;
  EXPECT_EQ(total_of(lax.out, Outcome::unlocated), 2U) << lax.out;
  const auto strict = campaign(dir, script, {"--commands", "info", "--strict"});
  EXPECT_EQ(strict.exit_code, 1) << strict.out << strict.err;
}

}  // namespace
