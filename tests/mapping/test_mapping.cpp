// The mapping parser: the shipped mappings, defaults, and every error with its line and column,
// several at once; truncated and mutated input.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/mapping/mapping.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {

const std::string kName = "m.toml";
// A force, so that a mapping is complete; appended where a test is about something else.
const std::string kForce = "\n[forces.friction]\nbeta = 1\n";

Mapping parse(const std::string& text) { return parse_mapping_text(text, kName); }

/// The diagnostics of a refused mapping (fails the test if it is accepted).
std::vector<Diagnostic> errors_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.diagnostics();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-InputError: " << e.what();
    return {};
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return {};
}

/// Exactly one error, at line:column, whose message holds `needle`.
::testing::AssertionResult fails_at(const std::string& text, std::int64_t line, std::int64_t column,
                                    const std::string& needle) {
  std::vector<Diagnostic> ds;
  try {
    parse(text);
    return ::testing::AssertionFailure() << "accepted";
  } catch (const InputError& e) {
    ds = e.diagnostics();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "non-InputError: " << e.what();
  }
  std::string all;
  for (const auto& d : ds) all += d.str() + "\n";
  if (ds.size() != 1) return ::testing::AssertionFailure() << ds.size() << " errors:\n" << all;
  const auto& d = ds[0];
  if (d.loc.file != kName || d.loc.line != line || d.loc.column != column ||
      d.message.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure() << "got " << all << "expected " << line << ":" << column << " '" << needle
                                         << "'";
  }
  return ::testing::AssertionSuccess();
}

/// Line (1-based) of the first line of `text` that starts with `prefix`.
std::int64_t line_of(const std::string& text, const std::string& prefix) {
  std::int64_t line = 1;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (text.compare(pos, prefix.size(), prefix) == 0) return line;
    pos = text.find('\n', pos);
    if (pos == std::string::npos) break;
    ++pos;
    ++line;
  }
  return -1;
}

// ------------------------------------------------------------------------------------------------
// Valid mappings
// ------------------------------------------------------------------------------------------------

/// The number after "key =" on the first line that starts with `key` (the shipped mappings are
/// tuned now and then; the test reads each number from the file by a route other than TOML and
/// checks that the parser put it in the right field).
double number_in(const std::string& text, const std::string& key) {
  const std::int64_t line = line_of(text, key + " =");
  EXPECT_GT(line, 0) << key;
  std::size_t pos = 0;
  for (std::int64_t l = 1; l < line; ++l) pos = text.find('\n', pos) + 1;
  return std::stod(text.substr(text.find('=', pos) + 1));
}

TEST(Mapping, PaperFibonacciMapping) {
  const auto path = test::source_dir() / "mappings" / "paper-fibonacci.toml";
  const Mapping m = parse_mapping_file(path);
  const std::string& t = m.text;
  EXPECT_EQ(m.path, path.string());
  EXPECT_EQ(m.text, test::read_text(path));
  EXPECT_EQ(m.simulation.interval_s, 0.1);  // the paper's sampling interval
  EXPECT_EQ(m.simulation.dt_s, number_in(t, "dt"));
  EXPECT_EQ(m.simulation.frame_every, static_cast<std::uint32_t>(number_in(t, "frame_every")));
  EXPECT_EQ(m.simulation.integrator, "rk4");
  EXPECT_EQ(m.simulation.settle_s, number_in(t, "settle"));
  // The paper's model: 8 bodies on a cube, constant mass, repulsion, sender-only attraction,
  // friction, no springs.
  EXPECT_EQ(m.bodies.placement, Placement::Cube);
  EXPECT_EQ(m.bodies.size, number_in(t, "size"));
  EXPECT_EQ(m.bodies.radius, number_in(t, "radius"));
  EXPECT_EQ(m.mass.base, number_in(t, "base"));
  EXPECT_EQ(m.mass.load_gain, 0.0);
  EXPECT_EQ(m.springs.topology, SpringTopology::None);
  ASSERT_TRUE(m.repulsion.has_value());
  EXPECT_EQ(m.repulsion->strength, number_in(t, "strength"));
  EXPECT_GT(m.repulsion->strength, 0.0);
  EXPECT_EQ(m.repulsion->softening, 0.0);
  ASSERT_TRUE(m.communication.has_value());
  EXPECT_EQ(m.communication->mode, CommunicationMode::Sender);
  EXPECT_EQ(m.communication->quantity, CommunicationQuantity::Bytes);
  EXPECT_EQ(m.communication->gain, number_in(t, "gain"));
  EXPECT_TRUE(m.communication->normalize);
  ASSERT_TRUE(m.friction.has_value());
  EXPECT_EQ(m.friction->beta, number_in(t, "beta"));
  EXPECT_GT(m.friction->beta, 0.0);
  EXPECT_FALSE(m.centre.has_value());
  // Locations point into the file.
  const FileLoc dt = m.where("simulation.dt");
  EXPECT_EQ(dt.file, path.string());
  EXPECT_EQ(dt.line, line_of(t, "dt ="));
  EXPECT_EQ(dt.column, 6);
  EXPECT_EQ(m.where("forces.friction.beta").line, line_of(t, "beta ="));
}

TEST(Mapping, PaperMeshMapping) {
  const Mapping m = parse_mapping_file(test::source_dir() / "mappings" / "paper-mesh.toml");
  const std::string& t = m.text;
  EXPECT_EQ(m.simulation.interval_s, 0.1);
  EXPECT_EQ(m.simulation.dt_s, number_in(t, "dt"));
  // The paper's model: a 3×3×3 lattice held by mesh springs, mass from load, symmetric
  // attraction, weak repulsion, friction.
  EXPECT_EQ(m.bodies.placement, Placement::Lattice);
  EXPECT_EQ(m.bodies.lattice, (std::array<int, 3>{3, 3, 3}));
  EXPECT_EQ(m.bodies.size, number_in(t, "size"));
  EXPECT_EQ(m.mass.base, number_in(t, "base"));
  EXPECT_EQ(m.mass.load_gain, number_in(t, "load_gain"));
  EXPECT_GT(m.mass.load_gain, 0.0);
  EXPECT_EQ(m.mass.load, LoadSource::Samples);
  EXPECT_EQ(m.springs.topology, SpringTopology::Mesh);
  EXPECT_EQ(m.springs.mesh, (std::array<int, 3>{0, 0, 0}));  // from the lattice
  EXPECT_EQ(m.springs.k, number_in(t, "k"));
  ASSERT_TRUE(m.springs.length.has_value());
  EXPECT_EQ(*m.springs.length, number_in(t, "length"));
  ASSERT_TRUE(m.repulsion.has_value());
  EXPECT_EQ(m.repulsion->strength, number_in(t, "strength"));
  ASSERT_TRUE(m.communication.has_value());
  EXPECT_EQ(m.communication->mode, CommunicationMode::Symmetric);
  EXPECT_EQ(m.communication->gain, number_in(t, "gain"));
  ASSERT_TRUE(m.friction.has_value());
  EXPECT_EQ(m.friction->beta, number_in(t, "beta"));
  EXPECT_EQ(m.where("bodies.lattice").line, line_of(t, "lattice ="));
  EXPECT_EQ(m.where("bodies.lattice").column, 11);
}

TEST(Mapping, DefaultsWhenOnlyAForceIsGiven) {
  const Mapping m = parse(kForce);
  EXPECT_EQ(m.simulation.interval_s, 0.1);
  EXPECT_EQ(m.simulation.dt_s, 0.01);
  EXPECT_EQ(m.simulation.frame_every, 1U);
  EXPECT_EQ(m.simulation.integrator, "rk4");
  EXPECT_EQ(m.simulation.settle_s, 0.0);
  EXPECT_EQ(m.bodies.placement, Placement::Cube);
  EXPECT_EQ(m.bodies.radius, 0.08);
  EXPECT_EQ(m.mass.busy_states, (std::vector<std::string>{"compute"}));
  EXPECT_EQ(m.mass.load, LoadSource::Samples);
  EXPECT_EQ(m.springs.topology, SpringTopology::None);
  EXPECT_EQ(m.springs.k, 1.0);
  EXPECT_FALSE(m.springs.length.has_value());
  EXPECT_FALSE(m.repulsion.has_value());
  EXPECT_FALSE(m.communication.has_value());
  EXPECT_FALSE(m.centre.has_value());
  ASSERT_TRUE(m.friction.has_value());
  EXPECT_EQ(m.friction->beta, 1.0);
}

TEST(Mapping, EveryKeyOfEverySection) {
  const Mapping m = parse(
      "[simulation]\ninterval = 0.2\ndt = 0.05\nframe_every = 3\nintegrator = \"euler\"\nsettle = 2\n"
      "[bodies]\nplacement = \"explicit\"\nsize = 2\nlattice = [2, 1, 1]\n"
      "positions = [[0, 0, 0], [1.5, -2, 3e-1]]\nradius = 0.5\n"
      "[mass]\nbase = 2\nload_gain = 0.5\nload = \"busy\"\nbusy_states = [\"compute\", \"send\"]\n"
      "[springs]\ntopology = \"explicit\"\nedges = [[0, 1], [1, 0]]\nmesh = [2, 1, 1]\nk = 0\nlength = 3\n"
      "[forces.repulsion]\nstrength = 1\nsoftening = 0.1\n"
      "[forces.communication]\nmode = \"symmetric\"\nquantity = \"messages\"\ngain = 0\nnormalize = \"none\"\n"
      "[forces.friction]\nbeta = 0\n"
      "[forces.centre]\nstrength = 0.25\n");
  EXPECT_EQ(m.simulation.interval_s, 0.2);
  EXPECT_EQ(m.simulation.dt_s, 0.05);
  EXPECT_EQ(m.simulation.frame_every, 3U);
  EXPECT_EQ(m.simulation.integrator, "euler");  // checked against the registry later, by simulate
  EXPECT_EQ(m.simulation.settle_s, 2.0);
  EXPECT_EQ(m.bodies.placement, Placement::Explicit);
  EXPECT_EQ(m.bodies.size, 2.0);
  EXPECT_EQ(m.bodies.lattice, (std::array<int, 3>{2, 1, 1}));
  ASSERT_EQ(m.bodies.positions.size(), 2U);
  EXPECT_EQ(m.bodies.positions[1], Eigen::Vector3d(1.5, -2, 0.3));
  EXPECT_EQ(m.bodies.radius, 0.5);
  EXPECT_EQ(m.mass.base, 2.0);
  EXPECT_EQ(m.mass.load_gain, 0.5);
  EXPECT_EQ(m.mass.load, LoadSource::Busy);
  EXPECT_EQ(m.mass.busy_states, (std::vector<std::string>{"compute", "send"}));
  EXPECT_EQ(m.springs.topology, SpringTopology::Explicit);
  ASSERT_EQ(m.springs.edges.size(), 2U);
  EXPECT_EQ(m.springs.edges[1], (std::array<int, 2>{1, 0}));
  EXPECT_EQ(m.springs.mesh, (std::array<int, 3>{2, 1, 1}));
  EXPECT_EQ(m.springs.k, 0.0);
  EXPECT_EQ(m.springs.length, 3.0);
  EXPECT_EQ(m.repulsion->softening, 0.1);
  EXPECT_EQ(m.communication->mode, CommunicationMode::Symmetric);
  EXPECT_EQ(m.communication->quantity, CommunicationQuantity::Messages);
  EXPECT_EQ(m.communication->gain, 0.0);
  EXPECT_FALSE(m.communication->normalize);
  EXPECT_EQ(m.friction->beta, 0.0);
  EXPECT_EQ(m.centre->strength, 0.25);
  EXPECT_EQ(m.where("forces.centre.strength").line, 35);
  EXPECT_EQ(m.where("springs.edges").line, 20);
  EXPECT_EQ(m.where("springs.edges").column, 9);
}

TEST(Mapping, SpringLengthIsInitialOrAPositiveNumber) {
  EXPECT_FALSE(parse("[springs]\ntopology = \"ring\"\nlength = \"initial\"\n").springs.length.has_value());
  EXPECT_EQ(parse("[springs]\ntopology = \"ring\"\nlength = 2.5\n").springs.length, 2.5);
  EXPECT_EQ(parse("[springs]\ntopology = \"ring\"\nlength = 3\n").springs.length, 3.0);
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"ring\"\nlength = \"initail\"\n", 3, 10,
                       "'length' must be a number or \"initial\", found a string"));
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"ring\"\nlength = -1\n", 3, 10, "'length' must be > 0"));
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"ring\"\nlength = 0\n", 3, 10, "'length' must be > 0"));
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"ring\"\nlength = inf\n", 3, 10, "'length' must be > 0"));
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"ring\"\nlength = nan\n", 3, 10, "'length' must be > 0"));
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"ring\"\nlength = true\n", 3, 10, "found a boolean"));
}

TEST(Mapping, ASpringTopologyAloneIsAForce) {
  EXPECT_NO_THROW(parse("[springs]\ntopology = \"mesh\"\n"));
  EXPECT_NO_THROW(parse("[forces.centre]\n"));
}

TEST(Mapping, WhereFallsBackToTheTableThenTheTopOfTheFile) {
  const Mapping m = parse("# m\n[simulation]\ndt = 0.01\n" + kForce);
  EXPECT_EQ(m.where("simulation.dt").str(), "m.toml:3:6");
  EXPECT_EQ(m.where("simulation.intervals").line, 2);
  EXPECT_EQ(m.where("bodies.lattice").str(), "m.toml:1:1");
  EXPECT_EQ(m.where("no.such.key").line, 1);
  const Mapping unnamed = parse_mapping_text(kForce, "");
  EXPECT_EQ(unnamed.where("bodies.lattice").file, "<mapping>");
}

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

TEST(MappingErrors, TomlSyntax) {
  EXPECT_TRUE(fails_at("[simulation]\ninterval = \n", 2, 1, "TOML syntax error"));
  EXPECT_TRUE(fails_at("[simulation]\ninterval = 0.1\n[simulation]\n", 3, 1, "TOML syntax error"));
  EXPECT_TRUE(fails_at("a = \"abc\n", 1, 1, "TOML syntax error"));
  const auto ds = errors_of("\n\n[bodies\n");
  ASSERT_EQ(ds.size(), 1U);
  EXPECT_EQ(ds[0].loc.line, 3);
  // The message is the first line of toml11's, without its prefix.
  EXPECT_EQ(ds[0].message.find("[error]"), std::string::npos) << ds[0].message;
  EXPECT_EQ(ds[0].message.find('\n'), std::string::npos) << ds[0].message;
}

TEST(MappingErrors, UnknownKeysAndSectionsWithSuggestions) {
  EXPECT_TRUE(fails_at("[simulation]\nintervall = 0.1\n" + kForce, 2, 13,
                       "unknown key 'intervall' in [simulation] (did you mean 'interval'?)"));
  EXPECT_TRUE(fails_at("[simulaton]\ninterval = 0.1\n" + kForce, 1, 1,
                       "unknown key 'simulaton' at the top level (did you mean 'simulation'?)"));
  EXPECT_TRUE(fails_at("[forces.frictoin]\nbeta = 1\n", 1, 1,
                       "unknown key 'frictoin' in [forces] (did you mean 'friction'?)"));
  EXPECT_TRUE(fails_at("[forces.friction]\nbetta = 1\n", 2, 9, "(did you mean 'beta'?)"));
  EXPECT_TRUE(fails_at("[mass]\nbusy_state = [\"x\"]\n" + kForce, 2, 14, "did you mean 'busy_states'"));
  // Nothing close: no suggestion.
  const auto ds = errors_of("[simulation]\nzzzzzz = 1\n" + kForce);
  ASSERT_EQ(ds.size(), 1U);
  EXPECT_EQ(ds[0].message, "unknown key 'zzzzzz' in [simulation]");
}

TEST(MappingErrors, WrongTypes) {
  EXPECT_TRUE(fails_at("[simulation]\ndt = \"0.1\"\n" + kForce, 2, 6, "'dt' must be a number, found a string"));
  EXPECT_TRUE(fails_at("[simulation]\ndt = {a = 1}\n" + kForce, 2, 6, "'dt' must be a number, found a table"));
  EXPECT_TRUE(fails_at("[simulation]\ndt = [0.1]\n" + kForce, 2, 6, "found an array"));
  EXPECT_TRUE(fails_at("[simulation]\ndt = true\n" + kForce, 2, 6, "found a boolean"));
  EXPECT_TRUE(fails_at("[simulation]\ndt = 1979-05-27\n" + kForce, 2, 6, "found a date/time"));
  EXPECT_TRUE(fails_at("[simulation]\nframe_every = 4.0\n" + kForce, 2, 15, "'frame_every' must be an integer"));
  EXPECT_TRUE(fails_at("[simulation]\nintegrator = 5\n" + kForce, 2, 14, "'integrator' must be a string"));
  EXPECT_TRUE(fails_at("simulation = 5\n" + kForce, 1, 14, "'simulation' must be a table ([simulation])"));
  EXPECT_TRUE(fails_at("[forces]\nfriction = 3\n", 2, 12, "'friction' must be a table ([forces.friction])"));
  EXPECT_TRUE(fails_at("[bodies]\nplacement = 1\n" + kForce, 2, 13, "'placement' must be a string"));
  EXPECT_TRUE(fails_at("[mass]\nbusy_states = \"compute\"\n" + kForce, 2, 15, "must be an array of strings"));
  EXPECT_TRUE(fails_at("[mass]\nbusy_states = [\"a\", 1]\n" + kForce, 2, 21, "'busy_states' must hold strings"));
}

TEST(MappingErrors, ArrayShapes) {
  EXPECT_TRUE(fails_at("[bodies]\nlattice = [3, 3]\n" + kForce, 2, 11, "'lattice' must be an array of 3 integers"));
  EXPECT_TRUE(fails_at("[bodies]\nlattice = 3\n" + kForce, 2, 11, "'lattice' must be an array of 3 integers"));
  EXPECT_TRUE(fails_at("[bodies]\nlattice = [3, 3, 0]\n" + kForce, 2, 18, "must hold integers from 1 to"));
  EXPECT_TRUE(fails_at("[bodies]\nlattice = [3, 3, 3.0]\n" + kForce, 2, 18, "must hold integers"));
  EXPECT_TRUE(fails_at("[springs]\nmesh = [1, 2, 3, 4]\n" + kForce, 2, 8, "'mesh' must be an array of 3 integers"));
  EXPECT_TRUE(fails_at("[bodies]\npositions = 5\n" + kForce, 2, 13, "'positions' must be an array of [x, y, z] points"));
  EXPECT_TRUE(fails_at("[bodies]\npositions = [[0, 0]]\n" + kForce, 2, 14, "each point in 'positions' must be [x, y, z]"));
  EXPECT_TRUE(fails_at("[bodies]\npositions = [1, 2, 3]\n" + kForce, 2, 14, "must be [x, y, z]"));
  EXPECT_TRUE(fails_at("[bodies]\npositions = [[0, 0, \"a\"]]\n" + kForce, 2, 21, "coordinates in 'positions' must be finite numbers"));
  EXPECT_TRUE(fails_at("[bodies]\npositions = [[0, 0, inf]]\n" + kForce, 2, 21, "finite numbers"));
  EXPECT_TRUE(fails_at("[springs]\nedges = [[0, 1, 2]]\n" + kForce, 2, 10, "each edge in 'edges' must be an array of 2 integers"));
  EXPECT_TRUE(fails_at("[springs]\nedges = [[0, -1]]\n" + kForce, 2, 14, "must hold integers from 0 to"));
  EXPECT_TRUE(fails_at("[springs]\nedges = [[0, 1], [2, 2]]\n" + kForce, 2, 18, "edge [2, 2] joins a body to itself"));
  EXPECT_TRUE(fails_at("[springs]\nedges = 7\n" + kForce, 2, 9, "'edges' must be an array of [a, b] body index pairs"));
}

TEST(MappingErrors, OutOfRangeValues) {
  EXPECT_TRUE(fails_at("[simulation]\ndt = -0.1\n" + kForce, 2, 6, "'dt' = -0.1 is out of range: expected > 0"));
  EXPECT_TRUE(fails_at("[simulation]\ndt = 0\n" + kForce, 2, 6, "expected > 0"));
  EXPECT_TRUE(fails_at("[simulation]\ndt = 0.5\n" + kForce, 2, 6, "'dt' must not exceed 'interval' (0.1 s)"));
  EXPECT_TRUE(fails_at("[simulation]\ninterval = 0.01\ndt = 0.02\n" + kForce, 3, 6, "must not exceed 'interval' (0.01 s)"));
  EXPECT_NO_THROW(parse("[simulation]\ninterval = 0.02\ndt = 0.02\n" + kForce));
  EXPECT_TRUE(fails_at("[simulation]\ninterval = 0\n" + kForce, 2, 12, "'interval' = 0 is out of range"));
  EXPECT_TRUE(fails_at("[simulation]\ninterval = 1e301\n" + kForce, 2, 12, "'interval' = 1e+301 is too large"));
  EXPECT_TRUE(fails_at("[simulation]\nframe_every = 0\n" + kForce, 2, 15, "'frame_every' = 0 is out of range: expected 1 to 1000000"));
  EXPECT_TRUE(fails_at("[simulation]\nframe_every = -4\n" + kForce, 2, 15, "out of range"));
  EXPECT_TRUE(fails_at("[simulation]\nsettle = -1\n" + kForce, 2, 10, "expected >= 0"));
  EXPECT_TRUE(fails_at("[bodies]\nsize = 0\n" + kForce, 2, 8, "'size' = 0 is out of range: expected > 0"));
  EXPECT_TRUE(fails_at("[bodies]\nradius = -1\n" + kForce, 2, 10, "expected > 0"));
  EXPECT_TRUE(fails_at("[mass]\nbase = 0\n" + kForce, 2, 8, "expected > 0"));
  EXPECT_TRUE(fails_at("[mass]\nload_gain = -0.5\n" + kForce, 2, 13, "expected >= 0"));
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"ring\"\nk = -1\n", 3, 5, "expected >= 0"));
  EXPECT_TRUE(fails_at("[forces.repulsion]\nstrength = -1\n", 2, 12, "expected >= 0"));
  EXPECT_TRUE(fails_at("[forces.repulsion]\nsoftening = -1\n", 2, 13, "expected >= 0"));
  EXPECT_TRUE(fails_at("[forces.communication]\ngain = -2\n", 2, 8, "expected >= 0"));
  EXPECT_TRUE(fails_at("[forces.friction]\nbeta = -2\n", 2, 8, "expected >= 0"));
  EXPECT_TRUE(fails_at("[forces.centre]\nstrength = -2\n", 2, 12, "expected >= 0"));
}

TEST(MappingErrors, NonFiniteNumbers) {
  EXPECT_TRUE(fails_at("[simulation]\ndt = inf\n" + kForce, 2, 6, "'dt' must be finite"));
  EXPECT_TRUE(fails_at("[simulation]\ndt = -inf\n" + kForce, 2, 6, "must be finite"));
  EXPECT_TRUE(fails_at("[simulation]\ndt = nan\n" + kForce, 2, 6, "must be finite"));
  EXPECT_TRUE(fails_at("[forces.friction]\nbeta = +inf\n", 2, 8, "must be finite"));
  EXPECT_TRUE(fails_at("[forces.friction]\nbeta = -nan\n", 2, 8, "must be finite"));
}

TEST(MappingErrors, InvalidChoicesSuggest) {
  EXPECT_TRUE(fails_at("[bodies]\nplacement = \"cubee\"\n" + kForce, 2, 13,
                       "'placement' = \"cubee\" is not valid (did you mean 'cube'?); valid: cube, lattice, ring, line, explicit"));
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"meshh\"\n" + kForce, 2, 12, "did you mean 'mesh'"));
  EXPECT_TRUE(fails_at("[forces.communication]\nmode = \"sendr\"\n", 2, 8, "did you mean 'sender'"));
  EXPECT_TRUE(fails_at("[forces.communication]\nquantity = \"byte\"\n", 2, 12, "did you mean 'bytes'"));
  EXPECT_TRUE(fails_at("[forces.communication]\nnormalize = \"maxx\"\n", 2, 13, "did you mean 'max'"));
  EXPECT_TRUE(fails_at("[forces.communication]\nnormalize = true\n", 2, 13, "'normalize' must be a string"));
  EXPECT_TRUE(fails_at("[mass]\nload = \"sample\"\n" + kForce, 2, 8, "did you mean 'samples'"));
  // Nothing close: the valid list without a guess.
  const auto ds = errors_of("[bodies]\nplacement = \"spiral\"\n" + kForce);
  ASSERT_EQ(ds.size(), 1U);
  EXPECT_EQ(ds[0].message.find("did you mean"), std::string::npos);
  EXPECT_NE(ds[0].message.find("valid: cube, lattice, ring, line, explicit"), std::string::npos);
}

TEST(MappingErrors, ChoicesThatNeedMoreKeys) {
  EXPECT_TRUE(fails_at("[bodies]\nplacement = \"explicit\"\n" + kForce, 2, 13,
                       "placement \"explicit\" needs 'positions = [[x, y, z], ...]'"));
  EXPECT_TRUE(fails_at("[bodies]\nplacement = \"explicit\"\npositions = []\n" + kForce, 2, 13, "needs 'positions"));
  EXPECT_TRUE(fails_at("[bodies]\nplacement = \"lattice\"\n" + kForce, 2, 13, "placement \"lattice\" needs 'lattice = [nx, ny, nz]'"));
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"explicit\"\n", 2, 12, "topology \"explicit\" needs 'edges = [[a, b], ...]'"));
  EXPECT_TRUE(fails_at("[springs]\ntopology = \"explicit\"\nedges = []\n", 2, 12, "needs 'edges"));
}

TEST(MappingErrors, AMappingWithoutForcesIsRefused) {
  // Located where a force was expected: the [forces] or [springs] table, else the top of the file.
  const std::pair<std::string, std::int64_t> cases[] = {{"", 1},
                                                        {"# nothing\n", 1},
                                                        {"[simulation]\ndt = 0.01\n", 1},
                                                        {"[simulation]\ndt = 0.01\n[springs]\nk = 2\n", 3},
                                                        {"# x\n[forces]\n", 2}};
  for (const auto& [text, line] : cases) {
    const auto ds = errors_of(text);
    ASSERT_EQ(ds.size(), 1U) << text;
    EXPECT_EQ(ds[0].loc.file, kName);
    EXPECT_EQ(ds[0].loc.line, line) << text;
    EXPECT_NE(ds[0].message.find("the mapping defines no force (expected a [springs]"), std::string::npos)
        << ds[0].message;
  }
}

TEST(MappingErrors, SeveralErrorsAreReportedTogether) {
  const std::string text =
      "[simulation]\n"
      "dt = -1\n"              // 2:6
      "frame_every = 0\n"      // 3:15
      "intervl = 0.1\n"        // 4:11
      "[bodies]\n"
      "placement = \"cubee\"\n"  // 6:13
      "[forces.friction]\n"
      "beta = \"high\"\n"      // 8:8
      "[extra]\n";             // 9:1
  try {
    parse(text);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    const auto& ds = e.diagnostics();
    ASSERT_EQ(ds.size(), 6U) << e.what();
    std::vector<std::string> at;
    for (const auto& d : ds) at.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.column));
    std::sort(at.begin(), at.end());
    EXPECT_EQ(at, (std::vector<std::string>{"2:6", "3:15", "4:11", "6:13", "8:8", "9:1"}));
    // what() is every diagnostic, one per line.
    const std::string what = e.what();
    EXPECT_EQ(std::count(what.begin(), what.end(), '\n'), 5);
    EXPECT_NE(what.find("m.toml:2:6: error: 'dt' = -1 is out of range"), std::string::npos) << what;
    EXPECT_NE(what.find("m.toml:9:1: error: unknown key 'extra' at the top level"), std::string::npos) << what;
  }
}

TEST(MappingErrors, FilesThatCannotBeRead) {
  test::TempDir dir;
  try {
    parse_mapping_file(dir / "missing.toml");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).loc.file, (dir / "missing.toml").string());
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
  try {
    parse_mapping_file(dir.path());
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  // Errors in a file carry its path.
  test::write_text(dir / "bad.toml", "[simulation]\ndt = -1\n" + kForce);
  try {
    parse_mapping_file(dir / "bad.toml");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).str().rfind((dir / "bad.toml").string() + ":2:6: error:", 0), 0U) << e.what();
  }
}

// ------------------------------------------------------------------------------------------------
// Hostile input
// ------------------------------------------------------------------------------------------------

/// Parses; "" when accepted, otherwise the error. Fails the test on anything but InputError or
/// on a diagnostic without the file name.
std::string try_parse(const std::string& text) {
  try {
    parse(text);
    return {};
  } catch (const InputError& e) {
    EXPECT_FALSE(e.diagnostics().empty());
    for (const auto& d : e.diagnostics()) EXPECT_EQ(d.loc.file, kName) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-InputError " << e.what() << " for:\n" << text;
    return "?";
  }
}

TEST(MappingHostile, DeepNestingIsAnErrorNotAStackOverflow) {
  // Each of these crashed inside toml11 (recursion) before the nesting check.
  const int n = 200000;
  for (const std::string& text : {"a = " + std::string(n, '[') + std::string(n, ']') + "\n",
                                  "a = " + std::string(n, '[') + "\n",
                                  [n] {
                                    std::string s = "a = ";
                                    for (int i = 0; i < n; ++i) s += "{b=";
                                    return s + "1" + std::string(n, '}') + "\n";
                                  }(),
                                  [n] {
                                    std::string s = "a";
                                    for (int i = 0; i < n; ++i) s += ".a";
                                    return s + " = 1\n";
                                  }(),
                                  [n] {
                                    std::string s = "[a";
                                    for (int i = 0; i < n; ++i) s += ".a";
                                    return s + "]\n";
                                  }()}) {
    const auto ds = errors_of(text);
    ASSERT_EQ(ds.size(), 1U);
    EXPECT_EQ(ds[0].loc.line, 1);
    EXPECT_NE(ds[0].message.find("nesting deeper than"), std::string::npos) << ds[0].message;
  }
  // Brackets, dots and hashes inside strings and comments do not count.
  const std::string deep_in_strings = "[simulation]\nintegrator = \"" + std::string(100, '[') + "\"  # " +
                                      std::string(100, '{') + "\n[mass]\nbusy_states = ['" +
                                      std::string(100, '.') + "', \"\"\"\n" + std::string(100, '[') +
                                      "\"\"\", '''" + std::string(100, '{') + "''']\n" + kForce;
  const Mapping m = parse(deep_in_strings);
  EXPECT_EQ(m.simulation.integrator, std::string(100, '['));
  ASSERT_EQ(m.mass.busy_states.size(), 3U);
  EXPECT_EQ(m.mass.busy_states[1], std::string(100, '['));
  // Floats do not add up to a deep key.
  std::string many_points = "[bodies]\nplacement = \"explicit\"\npositions = [";
  for (int i = 0; i < 100; ++i) many_points += "[0.5, 1.5, 2.5], ";
  EXPECT_NO_THROW(parse(many_points + "]\n" + kForce));
}

TEST(MappingHostile, InvalidUtf8IsRefusedBeforeToml11SeesIt) {
  // fuzz_mapping found that toml11 3.7 reads past its buffer on "'\xee'" (a lone lead byte in a
  // quoted key); these are that input and its relatives.
  for (const std::string& text : {std::string("'\xee'"), std::string("'\xee"), std::string("\"\xee\" = 1\n"),
                                  std::string("a = '\xe2\x82'\n"), std::string("a = \"\xc0\xaf\"\n"),
                                  std::string("a = \"\xed\xa0\x80\"\n"), std::string("a = \"\xf4\x90\x80\x80\"\n"),
                                  std::string("a = \"\xff\"\n"), std::string("# \x80 in a comment\n"),
                                  std::string("a = 1 \xf0\x9f")}) {
    const auto ds = errors_of(text);
    ASSERT_EQ(ds.size(), 1U) << text;
    EXPECT_EQ(ds[0].loc.line, 1);
    EXPECT_NE(ds[0].message.find("invalid UTF-8"), std::string::npos) << ds[0].message;
  }
  EXPECT_TRUE(fails_at("[simulation]\nintegrator = \"r\xeek4\"\n" + kForce, 2, 16, "invalid UTF-8 (byte 0xEE)"));
  // Valid UTF-8 of every length passes.
  const Mapping m = parse("[simulation]\nintegrator = \"\xc3\xbc\xe2\x82\xac\xf0\x9d\x84\x9e\"\n" + kForce);
  EXPECT_EQ(m.simulation.integrator, "\xc3\xbc\xe2\x82\xac\xf0\x9d\x84\x9e");
}

TEST(MappingHostile, TruncatedAtEveryByte) {
  const std::string text = test::read_text(test::source_dir() / "mappings" / "paper-mesh.toml");
  ASSERT_EQ(try_parse(text), "");
  int accepted = 0;
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    if (try_parse(text.substr(0, cut)).empty()) ++accepted;
    if (HasFailure()) return;
  }
  EXPECT_GT(accepted, 10);
}

TEST(MappingHostile, DeterministicMutationFuzz) {
  const std::vector<std::string> seeds{
      test::read_text(test::source_dir() / "mappings" / "paper-mesh.toml"),
      test::read_text(test::source_dir() / "mappings" / "paper-fibonacci.toml"),
      "[bodies]\nplacement = \"explicit\"\npositions = [[0, 0, 0], [1, 1, 1]]\n[springs]\ntopology = "
      "\"explicit\"\nedges = [[0, 1]]\nlength = \"initial\"\n"};
  const std::vector<std::string> tokens{"[", "]", "{", "}", "\"", "'", "\"\"\"", "=", ".", ",", "#", "\n",
                                        "inf", "nan", "-", "1e999", "99999999999999999999", "[[a]]\n",
                                        "[forces.x]\n", "true", "1979-05-27T07:32:00Z", std::string(1, '\0'),
                                        "\xff", "\\u0000", "\\", "1.5", "\"s\"", "[]", "{}", "[1, 2]", "0",
                                        "-1", "1e-9"};
  std::mt19937_64 rng(424242);
  int accepted = 0, refused = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = seeds[rng() % seeds.size()];
    const std::vector<std::string> values{"1.5", "-1", "0", "1e999", "inf", "nan", "\"x\"", "\"initial\"", "true",
                                          "[]", "[1, 2, 3]", "[[0, 1]]", "[[0, 0, 0]]", "{a = 1}", "1979-05-27",
                                          "99999999999999999999", "\"\"", "[\"compute\"]"};
    const int ops = 1 + static_cast<int>(rng() % 3);
    for (int op = 0; op < ops; ++op) {
      const std::size_t pos = rng() % (s.size() + 1);
      switch (rng() % 6) {
        case 5: {  // replace the value of a random "key = value" line by a value of another type
          const std::size_t eq = s.find(" = ", pos);
          if (eq != std::string::npos) {
            const std::size_t end = s.find('\n', eq);
            s.replace(eq + 3, (end == std::string::npos ? s.size() : end) - eq - 3, values[rng() % values.size()]);
          }
          break;
        }
        case 0:
          if (pos < s.size()) s[pos] = static_cast<char>(s[pos] ^ static_cast<char>(1U << (rng() % 8)));
          break;
        case 1:
          s.insert(pos, 1, static_cast<char>(rng() % 256));
          break;
        case 2:
          s.insert(pos, tokens[rng() % tokens.size()]);
          break;
        case 3:
          if (pos < s.size()) s.erase(pos, 1 + rng() % 10);
          break;
        default:
          s.resize(pos);
      }
    }
    if (try_parse(s).empty()) {
      ++accepted;
    } else {
      ++refused;
    }
    if (HasFailure()) {
      ADD_FAILURE() << "iteration " << iter;
      return;
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 500);
}

}  // namespace
}  // namespace kanoko::mapping
