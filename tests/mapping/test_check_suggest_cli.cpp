// `kanoko check MAP --trace TRACE` and `kanoko suggest TRACE --mapping MAP [-o NEW]` end to end.
#include <gtest/gtest.h>

#include "src/mapping/mapping.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {

std::string mapping_file(const std::string& name) { return (test::source_dir() / "mappings" / name).string(); }
std::string trace_file(const std::string& name) { return (test::source_dir() / "traces" / name).string(); }

TEST(CheckCommand, ReportsMatchedBodiesAndLeftOutEntities) {
  test::TempDir dir;
  test::write_text(dir / "t.kntr",
                   "kntr 1\nnode 0 0 name=rank0 host=a\nnode 0 1 name=rank1 host=a\nnode 0 2 name=io0 host=b\n"
                   "state 0 0 0.05 compute\nstate 0 1 0.05 MPI_Wait\nmsg 0.01 0 1 10\nmsg 0.02 2 0 5\nend 0.1\n");
  test::write_text(dir / "m.toml", "[trace]\nselect = \"^rank\"\nidle = [\"MPI_Wait\"]\n[forces.friction]\nbeta = 1\n");
  const auto r = test::run_kanoko({"check", (dir / "m.toml").string(), "--trace", (dir / "t.kntr").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3 entities → 2 bodies, 1 left out"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("io0: name does not match [trace] select \"^rank\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MPI_Wait: 1 intervals, idle"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compute: 1 intervals, computing (busy)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 dropped (an end was left out)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok with"), std::string::npos) << r.out;
}

TEST(CheckCommand, EveryProblemAtOnceWithLocations) {
  test::TempDir dir;
  test::write_text(dir / "m.toml",
                   "[bodies]\nplacement = \"lattice\"\nlattice = [2, 2, 2]\norder = \"table\"\n"
                   "table = { pe0 = 0, pe1 = 1, pe9 = 2 }\n[springs]\ntopology = \"torus\"\ndims = [3, 3]\n"
                   "[forces.friction]\nbeta = 1\n");
  const auto r = test::run_kanoko({"check", (dir / "m.toml").string(), "--trace", trace_file("fib22-ring.kntr")});
  EXPECT_EQ(r.exit_code, 1);
  const std::string m = (dir / "m.toml").string();
  EXPECT_NE(r.err.find(m + ":8:8: error: torus 3×3 has 9 nodes but the trace has 8 bodies"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(m + ":5:9: error: 'table' gives no position for body 'pe2'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'table' names 'pe9', which is not a body of the trace"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("problems"), std::string::npos) << r.err;
  // Parse errors: all at once, with suggestions, before the trace is read.
  test::write_text(dir / "bad.toml", "[springs]\ntopolgy = \"ring\"\nk = \"1 + byte\"\n[mass]\nexpression = 2\n");
  const auto p = test::run_kanoko({"check", (dir / "bad.toml").string(), "--trace", trace_file("fib22-ring.kntr")});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find(":2:11: error: unknown key 'topolgy' in [springs] (did you mean 'topology'?)"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find(":3:10: error: 'k': unknown name 'byte' in expression (did you mean 'bytes'?)"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find(":5:14: error: 'expression' must be a formula in a string"), std::string::npos) << p.err;
}

TEST(CheckCommand, FindsADivisionByZeroInALaterInterval) {
  test::TempDir dir;
  test::write_text(dir / "m.toml", "[mass]\nexpression = \"1 + 1 / abs(time - 0.2)\"\n[forces.friction]\nbeta = 1\n");
  const auto r = test::run_kanoko({"check", (dir / "m.toml").string(), "--trace", trace_file("fib22-ring.kntr")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(":2:15: expression 'mass.expression' = \"1 + 1 / abs(time - 0.2)\" gives inf for body 0 'pe0' in interval 2"),
            std::string::npos) << r.err;
}

TEST(CheckCommand, HostilePatternsAndNamesEndAtOnce) {
  // A 30,000-character name under "^.*$" (a crash with a backtracking engine) and "^(a+)+$"
  // against 33 'a' and a 'b' (minutes of CPU with one).
  test::TempDir dir;
  const std::string long_name(30000, 'a');
  const std::string near_miss = std::string(33, 'a') + "b";
  test::write_text(dir / "t.kntr", "kntr 1\nnode 0 0 name=" + long_name + "\nnode 0 1 name=" + near_miss +
                                       "\nmsg 0.01 0 1 10\nend 0.1\n");
  test::write_text(dir / "dot.toml", "[trace]\nselect = \"^.*$\"\n[forces.friction]\nbeta = 1\n");
  const auto dot = test::run_kanoko({"check", (dir / "dot.toml").string(), "--trace", (dir / "t.kntr").string()});
  EXPECT_EQ(dot.exit_code, 0) << dot.err;
  EXPECT_NE(dot.out.find("2 entities → 2 bodies"), std::string::npos) << dot.out.substr(0, 2000);
  test::write_text(dir / "nested.toml", "[trace]\nselect = \"^(a+)+$\"\n[forces.friction]\nbeta = 1\n");
  const auto nested = test::run_kanoko({"check", (dir / "nested.toml").string(), "--trace", (dir / "t.kntr").string()});
  EXPECT_EQ(nested.exit_code, 0) << nested.err;
  EXPECT_NE(nested.out.find("2 entities → 1 bodies, 1 left out"), std::string::npos) << nested.out.substr(0, 2000);
  EXPECT_NE(nested.out.find(near_miss + ": name does not match [trace] select"), std::string::npos);
  test::write_text(dir / "ahead.toml", "[trace]\nselect = \"a(?!b)\"\n[forces.friction]\nbeta = 1\n");
  const auto ahead = test::run_kanoko({"check", (dir / "ahead.toml").string(), "--trace", (dir / "t.kntr").string()});
  EXPECT_EQ(ahead.exit_code, 1);
  EXPECT_NE(ahead.err.find("ahead.toml:2:10: error: 'select' is not a valid regular expression: look-ahead is not supported"),
            std::string::npos)
      << ahead.err;
}

TEST(SuggestCommand, PrintsReasoningAndWritesACopy) {
  test::TempDir dir;
  const std::string out = (dir / "tuned.toml").string();
  const auto r = test::run_kanoko({"suggest", trace_file("mesh-skewed-light.kntr"), "--mapping", mapping_file("paper-mesh.toml"), "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Reasoning:"), std::string::npos);
  EXPECT_NE(r.out.find("friction: beta = 1 / (5 × interval) = 2 /s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[springs] k = "), std::string::npos) << r.out;
  const Mapping original = parse_mapping_file(mapping_file("paper-mesh.toml"));
  const Mapping tuned = parse_mapping_file(out);
  // Everything else is kept: the comments, the lattice, the mass, the mode.
  const std::string text = test::read_text(out);
  EXPECT_NE(text.find("# The Kanoko paper's second example"), std::string::npos);
  EXPECT_EQ(tuned.bodies.lattice, original.bodies.lattice);
  EXPECT_DOUBLE_EQ(tuned.mass.load_gain, original.mass.load_gain);
  EXPECT_EQ(tuned.communication->mode, original.communication->mode);
  EXPECT_DOUBLE_EQ(tuned.friction->beta, 2.0);
  EXPECT_NE(tuned.springs.k, original.springs.k);
  // The copy is a valid mapping for the same trace.
  EXPECT_EQ(test::run_kanoko({"check", out, "--trace", trace_file("mesh-skewed-light.kntr")}).exit_code, 0);
  // Refuses to overwrite the mapping itself, and writes nothing on error.
  const auto same = test::run_kanoko({"suggest", trace_file("mesh-skewed-light.kntr"), "--mapping", out, "-o", out});
  EXPECT_EQ(same.exit_code, 1);
  EXPECT_NE(same.err.find("refusing to write: it is an input"), std::string::npos) << same.err;
  const auto missing = test::run_kanoko({"suggest", (dir / "none.kntr").string(), "--mapping", out, "-o", (dir / "x.toml").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir / "x.toml"));
  EXPECT_EQ(test::run_kanoko({"suggest", "--help"}).exit_code, 0);
}

}  // namespace
}  // namespace kanoko::mapping
