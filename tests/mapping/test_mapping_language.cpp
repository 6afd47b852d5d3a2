// The complete mapping language: [trace], [visual], topologies and orders, formulas (compiled at
// load with located errors), the text editor used by `kanoko suggest`, and mutated examples.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/mapping/edit.hpp"
#include "src/mapping/expression.hpp"
#include "src/mapping/mapping.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {

const std::string kForce = "\n[forces.friction]\nbeta = 1\n";

Mapping parse(const std::string& text, const std::string& name = "m.toml") { return parse_mapping_text(text, name); }

/// All diagnostics of a refused mapping, one per line ("" if it was accepted).
std::string errors(const std::string& text, const std::string& name = "m.toml") {
  try {
    parse(text, name);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MappingLanguage, EveryNewKeyIsRead) {
  const Mapping m = parse(
      "[trace]\nformat = \"native\"\nentity_type = \"MPI\"\nload_variable = \"power_used\"\nselect = \"^rank\"\n"
      "exclude = \"helper\"\ngroup_by = \"table\"\ngroups = { r0 = \"n0\", r1 = \"n0\", n0 = \"rack\" }\nlevel = 2\n"
      "computing = [\"work\"]\ncommunicating = [\"MPI_Send\"]\nidle = [\"wait\"]\n"
      "[bodies]\nplacement = \"topology\"\norder = \"pattern\"\npattern = \"r(\\\\d+)\"\n"
      "[mass]\nexpression = \"1 + 2 * load\"\n"
      "[springs]\ntopology = \"dragonfly\"\ngroups = 2\nrouters = 3\nnodes_per_router = 2\nk = \"1 + bytes\"\n"
      "[forces.communication]\nweight = \"bytes / peak_bytes\"\n"
      "[visual]\ncolour_map = \"viridis\"\ncolour = \"busy\"\ncolour_range = [0, 2]\nscale = \"1 + load\"\n"
      "labels = \"rank\"\ntrails = 2.5\n");
  EXPECT_EQ(m.trace.format, "native");
  EXPECT_EQ(m.trace.entity_type, "MPI");
  EXPECT_EQ(m.trace.group_by, GroupBy::Table);
  EXPECT_EQ(m.trace.groups.at("n0"), "rack");
  EXPECT_EQ(m.trace.level, 2);
  EXPECT_EQ(m.mass.busy_states, (std::vector<std::string>{"work"}));
  EXPECT_TRUE(m.trace.computing_given);
  EXPECT_EQ(m.bodies.placement, Placement::Topology);
  EXPECT_EQ(m.bodies.order, BodyOrder::Pattern);
  EXPECT_EQ(m.bodies.pattern, "r(\\d+)");
  ASSERT_TRUE(m.mass.expression);
  EXPECT_EQ(m.mass.expression->used, (std::vector<std::string>{"load"}));
  EXPECT_EQ(m.mass.expression->loc.line, 18);
  EXPECT_EQ(m.mass.expression->loc.column, 15);  // first character after the quote
  EXPECT_EQ(m.springs.topology, SpringTopology::Dragonfly);
  EXPECT_EQ(m.springs.nodes_per_router, 2);
  ASSERT_TRUE(m.springs.k_expression);
  EXPECT_EQ(m.springs.k_expression->scope, Scope::Pair);
  ASSERT_TRUE(m.communication && m.communication->weight);
  EXPECT_EQ(m.visual.colour_map, ColourMap::Viridis);
  EXPECT_EQ(m.visual.labels, LabelKind::Rank);
  EXPECT_DOUBLE_EQ(m.visual.trails_s, 2.5);
  ASSERT_TRUE(m.visual.colour_range);
  EXPECT_DOUBLE_EQ((*m.visual.colour_range)[1], 2.0);
  EXPECT_EQ(expressions(m).size(), 5U);
}

TEST(MappingLanguage, UnknownNameInAFormulaIsLocatedWithASuggestion) {
  const std::string e = errors("[mass]\nexpression = \"1 + 19 * laod\"" + kForce);
  // Line 2; the value's quote is at column 14, the formula starts at 15, "laod" at +9.
  EXPECT_NE(e.find("m.toml:2:24: error: 'expression': unknown name 'laod' in expression (did you mean 'load'?)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("variables here: index, rank"), std::string::npos) << e;
  // A pair variable is unknown in a body formula, and the other way round.
  EXPECT_NE(errors("[mass]\nexpression = \"bytes\"" + kForce).find("unknown name 'bytes'"), std::string::npos);
  EXPECT_NE(errors("[forces.communication]\nweight = \"bytes_sent\"\n").find("unknown name 'bytes_sent'"),
            std::string::npos);
}

TEST(MappingLanguage, BadFormulasAreRefusedAtLoad) {
  EXPECT_NE(errors("[mass]\nexpression = \"load / 0\"" + kForce).find("even when every variable is 1"), std::string::npos);
  EXPECT_NE(errors("[mass]\nexpression = \"1 + (load\"" + kForce).find("m.toml:2:"), std::string::npos);
  EXPECT_NE(errors("[mass]\nexpression = \"\"" + kForce).find("empty expression"), std::string::npos);
  EXPECT_NE(errors("[mass]\nexpression = 3" + kForce).find("'expression' must be a formula in a string, found an integer"),
            std::string::npos);
  EXPECT_NE(errors("[mass]\nexpression = \"" + std::string(5000, '1') + "\"" + kForce).find("at most 4096"),
            std::string::npos);
  // muparser has no I/O, no assignment to unknown names and no user functions.
  EXPECT_NE(errors("[mass]\nexpression = \"system(1)\"" + kForce), "");
  EXPECT_NE(errors("[mass]\nexpression = \"x = 1\"" + kForce), "");
  EXPECT_NE(errors("[mass]\nexpression = \"load = 1\"" + kForce).find("m.toml:2:20: error: 'expression': assignment"), std::string::npos)
      << errors("[mass]\nexpression = \"load = 1\"" + kForce);
  EXPECT_NE(errors("[mass]\nexpression = \"(load += 1)\"" + kForce).find("assignment"), std::string::npos);
  EXPECT_EQ(errors("[mass]\nexpression = \"1 + (load == 1) + (load <= 2) + (load >= 0) + (load != 3)\"" + kForce), "");
}

TEST(MappingLanguage, SeveralProblemsAtOnce) {
  const std::string e = errors(
      "[springs]\ntopology = \"hypercub\"\nk = \"1 + byts\"\n"
      "[bodies]\norder = \"ranks\"\npattern = \"pe\\\\d+\"\n"
      "[visual]\ncolour = \"lod\"\nlabel = \"name\"\n" + kForce);
  EXPECT_NE(e.find("m.toml:2:12: error: 'topology' = \"hypercub\" is not valid (did you mean 'hypercube'?)"),
            std::string::npos) << e;
  EXPECT_NE(e.find("m.toml:3:10: error: 'k': unknown name 'byts'"), std::string::npos) << e;
  EXPECT_NE(e.find("(did you mean 'rank'?)"), std::string::npos) << e;
  EXPECT_NE(e.find("'pattern' needs a capture group"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown name 'lod'"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'label' in [visual] (did you mean 'labels'?)"), std::string::npos) << e;
}

TEST(MappingLanguage, WrongTypesAndMissingCompanions) {
  EXPECT_NE(errors("[springs]\ntopology = \"torus\"\n").find("topology \"torus\" needs 'dims"), std::string::npos);
  EXPECT_NE(errors("[springs]\ntopology = \"fat-tree\"\n").find("needs 'levels"), std::string::npos);
  EXPECT_NE(errors("[springs]\ntopology = \"dragonfly\"\ngroups = 3\n").find("needs 'groups = G' and 'routers = A'"),
            std::string::npos);
  EXPECT_NE(errors("[springs]\ntopology = \"torus\"\ndims = [4]\n").find("'dims' must be an array of 2 to 3 integers"),
            std::string::npos);
  EXPECT_NE(errors("[springs]\ntopology = \"hypercube\"\ndimension = 40\n").find("out of range"), std::string::npos);
  EXPECT_NE(errors("[bodies]\norder = \"table\"\n" + kForce).find("order \"table\" needs 'table"), std::string::npos);
  EXPECT_NE(errors("[bodies]\norder = \"table\"\ntable = { a = \"x\" }\n" + kForce).find("'table.a' must be an integer"),
            std::string::npos);
  EXPECT_NE(errors("[trace]\nselect = \"(\"\n" + kForce).find("'select' is not a valid regular expression"),
            std::string::npos);
  EXPECT_NE(errors("[trace]\ngroup_by = \"table\"\n" + kForce).find("needs 'groups"), std::string::npos);
  EXPECT_NE(errors("[trace]\ngroups = { a = 1 }\n" + kForce).find("'groups.a' must be a string"), std::string::npos);
  EXPECT_NE(errors("[trace]\ncomputing = [\"a\"]\n[mass]\nbusy_states = [\"b\"]\n" + kForce).find("say the same thing"),
            std::string::npos);
  EXPECT_NE(errors("[visual]\ncolour_range = [2, 1]\n" + kForce).find("low < high"), std::string::npos);
  EXPECT_NE(errors("[visual]\ntrails = -1\n" + kForce).find("out of range"), std::string::npos);
}

TEST(MappingLanguage, CycleInTheGroupHierarchy) {
  const std::string e = errors("[trace]\ngroup_by = \"table\"\ngroups = { r0 = \"node\", node = \"rack\", rack = \"node\" }\n" + kForce);
  EXPECT_NE(e.find("m.toml:3:10: error: 'groups' has a cycle: "), std::string::npos) << e;
  EXPECT_NE(e.find("node → rack → node"), std::string::npos) << e;
  EXPECT_NE(errors("[trace]\ngroups = { a = \"a\" }\n" + kForce).find("cycle: a → a"), std::string::npos);
}

TEST(MappingLanguage, TexturePathsStayInTheMappingFolder) {
  test::TempDir dir;
  test::write_text(dir / "img" / "dot.png", "not really a png");
  const std::string name = (dir / "m.toml").string();
  const Mapping m = parse("[visual]\ntexture = \"img/dot.png\"\n" + kForce, name);
  EXPECT_EQ(m.visual.texture, dir / "img" / "dot.png");
  EXPECT_NE(errors("[visual]\ntexture = \"../secret\"\n" + kForce, name).find("'..' is not allowed"), std::string::npos);
  EXPECT_NE(errors("[visual]\ntexture = \"img/../../x\"\n" + kForce, name).find("'..' is not allowed"), std::string::npos);
  EXPECT_NE(errors("[visual]\ntexture = \"/etc/passwd\"\n" + kForce, name).find("relative to the mapping"),
            std::string::npos);
  EXPECT_NE(errors("[visual]\ntexture = \"img/none.png\"\n" + kForce, name).find("which is not a file"), std::string::npos);
  EXPECT_NE(errors("[visual]\ntexture = \"img\"\n" + kForce, name).find("which is not a file"), std::string::npos);
}

TEST(MappingLanguage, ExpressionsEvaluateOverBoundVariables) {
  std::vector<double> v(kBodyVarCount, 0.0);
  ExpressionSpec spec;
  spec.key = "mass.expression";
  spec.text = "1 + 19 * load + (busy > 0.5 ? 100 : 0)";
  spec.scope = Scope::Body;
  spec.loc = FileLoc{"x.toml", 3, 14};
  const Expression e(spec, v.data());
  EXPECT_DOUBLE_EQ(e.eval(), 1.0);
  v[kBodyLoad] = 0.5;
  EXPECT_DOUBLE_EQ(e.eval(), 10.5);
  v[kBodyBusy] = 0.75;
  EXPECT_DOUBLE_EQ(e.eval(), 110.5);
  try {
    e.throw_bad_value("body 3 'pe3' in interval 7", 0.0, "finite and > 0");
    FAIL();
  } catch (const RunError& err) {
    EXPECT_NE(std::string(err.what()).find("x.toml:3:14: expression 'mass.expression' = \"1 + 19 * load"), std::string::npos)
        << err.what();
    EXPECT_NE(std::string(err.what()).find("for body 3 'pe3' in interval 7"), std::string::npos);
  }
}

TEST(MappingLanguage, VariableListsMatchTheirDocs) {
  EXPECT_EQ(variable_names(Scope::Body).size(), static_cast<std::size_t>(kBodyVarCount));
  EXPECT_EQ(variable_names(Scope::Pair).size(), static_cast<std::size_t>(kPairVarCount));
  EXPECT_EQ(variable_names(Scope::Body)[kBodyBytesRecvTotal], "bytes_recv_total");
  EXPECT_EQ(variable_names(Scope::Pair)[kPairDstDegree], "dst_degree");
  EXPECT_EQ(variable_names(Scope::Cue).size(), static_cast<std::size_t>(kCueVarCount));
  EXPECT_EQ(variable_names(Scope::Cue)[kCuePeakRate], "peak_rate");
  EXPECT_EQ(variable_names(Scope::Cue)[kCueAllPeakRate], "all_peak_rate");
  // Every variable is documented in docs/mapping-language.md as a table row.
  const std::string doc = test::read_text(test::source_dir() / "docs" / "mapping-language.md");
  for (Scope s : {Scope::Body, Scope::Pair, Scope::Cue}) {
    for (const auto& [name, meaning] : variable_docs(s)) {
      EXPECT_NE(doc.find("| `" + name + "` | " + meaning + " |"), std::string::npos) << name;
    }
  }
}

TEST(MappingLanguage, ColourMapsRunFromDarkToLight) {
  for (ColourMap c : {ColourMap::Cividis, ColourMap::Viridis, ColourMap::Magma, ColourMap::Grey}) {
    const auto lo = colour_at(c, 0.0), hi = colour_at(c, 1.0), mid = colour_at(c, 0.5);
    const auto luma = [](const std::array<float, 3>& rgb) { return 0.3F * rgb[0] + 0.59F * rgb[1] + 0.11F * rgb[2]; };
    EXPECT_LT(luma(lo), luma(mid)) << to_string(c);
    EXPECT_LT(luma(mid), luma(hi)) << to_string(c);
    const auto nan = colour_at(c, std::nan(""));
    EXPECT_EQ(nan, lo);
    EXPECT_EQ(colour_at(c, 7.0), hi);
  }
  EXPECT_NE(colour_at(ColourMap::Categorical, 0.0), colour_at(ColourMap::Categorical, 0.2));
}

TEST(MappingEdit, ReplacesKeepsCommentsAndAdds) {
  const std::string text = "# tuned\n[forces.friction]\nbeta = 2.0   # damping\n\n[springs]\ntopology = \"ring\"\n";
  const Mapping m = parse(text);
  std::string t = set_value(text, m, "forces.friction", "beta", "3.5");
  EXPECT_NE(t.find("beta = 3.5   # damping\n"), std::string::npos) << t;
  t = set_value(t, parse(t), "springs", "k", "4.0");
  EXPECT_NE(t.find("[springs]\nk = 4.0  # added by kanoko suggest\ntopology"), std::string::npos) << t;
  t = set_value(t, parse(t), "forces.repulsion", "strength", "0.1");
  EXPECT_NE(t.find("[forces.repulsion]  # added by kanoko suggest\nstrength = 0.1\n"), std::string::npos) << t;
  const Mapping after = parse(t);
  EXPECT_DOUBLE_EQ(after.friction->beta, 3.5);
  EXPECT_DOUBLE_EQ(after.springs.k, 4.0);
  EXPECT_DOUBLE_EQ(after.repulsion->strength, 0.1);
  // "initial" is a string value: replaced whole.
  const std::string lt = "[springs]\ntopology = \"ring\"\nlength = \"initial\"  # L\n";
  EXPECT_NE(set_value(lt, parse(lt), "springs", "length", "1.5").find("length = 1.5  # L"), std::string::npos);
}

/// Parses, accepting only success or InputError.
bool parses(const std::string& text) {
  try {
    parse(text);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

TEST(MappingLanguageHostile, MutatedExamplesAndFormulasNeverCrash) {
  std::vector<std::string> seeds;
  for (const auto& f : test::list_dir(test::source_dir() / "mappings")) {
    if (f.size() > 5 && f.substr(f.size() - 5) == ".toml") seeds.push_back(test::read_text(test::source_dir() / "mappings" / f));
  }
  ASSERT_GE(seeds.size(), 10U);
  const std::vector<std::string> tokens{"(", ")", "?", ":", "/", "/ 0", "^", "1e308 * 1e308", "sqrt(-1)", "ln(0)",
                                        "load", "bytes", "sum(", "min(1,", ",", "_pi", "\"", "\\\\", "\\\"", "[", "]",
                                        "{", "}", "=", "#", "\n", "..", "/etc", "(?:", "(\\\\d+)", "*", "+", "a = \"b\"",
                                        "\xe2\x86\x92", "\xff"};
  std::mt19937_64 rng(97);
  int accepted = 0, refused = 0;
  for (int iter = 0; iter < 2500; ++iter) {
    std::string s = seeds[rng() % seeds.size()];
    const int ops = 1 + static_cast<int>(rng() % 3);
    for (int op = 0; op < ops; ++op) {
      // Mutate inside quoted strings half of the time: that is where formulas and patterns live.
      std::size_t pos = rng() % (s.size() + 1);
      if (rng() % 2 == 0) {
        const std::size_t q = s.find('"', pos);
        if (q != std::string::npos) pos = q + 1;
      }
      switch (rng() % 4) {
        case 0: s.insert(pos, tokens[rng() % tokens.size()]); break;
        case 1:
          if (pos < s.size()) s.erase(pos, 1 + rng() % 6);
          break;
        case 2:
          if (pos < s.size()) s[pos] = static_cast<char>(s[pos] ^ static_cast<char>(1U << (rng() % 8)));
          break;
        default: s.resize(pos);
      }
    }
    (parses(s) ? accepted : refused) += 1;
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 500);
}

}  // namespace
}  // namespace kanoko::mapping
