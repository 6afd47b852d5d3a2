// Zero configuration on real MPI programs (our own, run under SimGrid SMPI: traces/smpi): with no
// mapping, and with each purpose preset, the picture shows the program: bodies move (neither
// frozen nor flying apart), the starting layout follows the communication graph, the most loaded
// rank is the heaviest and moves least, the skewed axis deforms more, a heavier run deforms less,
// and a copy of a trace traced 100× slower or with 10× bigger messages gives the same picture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "models/graph_layout.hpp"
#include "models/suggest.hpp"
#include "src/base/error.hpp"
#include "src/ingest/infer.hpp"
#include "src/sim/simulate.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/smpi_traces.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

std::filesystem::path shipped(const std::string& name) { return test::source_dir() / "traces" / "smpi" / (name + ".trace"); }

struct ZeroRun {
  sim::SimulateSummary summary;
  std::filesystem::path path;
};

/// Simulates `trace` with the mapping inferred for `purpose` into `dir`.
ZeroRun run_inferred(const std::filesystem::path& trace, const std::filesystem::path& dir, const std::string& name,
                     ingest::Purpose purpose = ingest::Purpose::Balance, const std::filesystem::path& like = {}) {
  ingest::InferOptions io;
  io.purpose = purpose;
  sim::SimulateOptions so;
  so.trace = trace;
  so.mapping_text = ingest::infer_mapping(trace, io).text;
  so.mapping_label = trace.string() + " (inferred)";
  so.output = dir / (name + ".kntj");
  so.progress = false;
  so.threads = 1;
  so.calibrate_like = like;
  return {sim::simulate(so), so.output};
}

/// Each body's MPI rank, from its SMPI name ("rank-4").
std::vector<long> ranks_of(const trajectory::Reader& r) {
  std::vector<long> out;
  for (const auto& b : r.meta().bodies) out.push_back(std::stol(b.name.substr(b.name.rfind('-') + 1)));
  return out;
}

/// Mean over frames of each body's speed.
std::vector<double> mean_speed(const trajectory::Reader& r) {
  const std::size_t n = r.meta().body_count();
  std::vector<double> sum(n, 0.0);
  for (std::size_t k = 0; k < r.frame_count(); ++k) {
    const auto f = r.frame(k);
    for (std::size_t i = 0; i < n; ++i) sum[i] += f.velocities.col(static_cast<Eigen::Index>(i)).norm();
  }
  for (double& s : sum) s /= static_cast<double>(r.frame_count());
  return sum;
}

/// Mean over frames of each body's mass.
std::vector<double> mean_mass(const trajectory::Reader& r) {
  const std::size_t n = r.meta().body_count();
  const auto& names = r.meta().stat_names;
  const auto row = static_cast<Eigen::Index>(std::find(names.begin(), names.end(), "mass") - names.begin());
  std::vector<double> sum(n, 0.0);
  for (std::size_t k = 0; k < r.frame_count(); ++k) {
    const auto f = r.frame(k);
    for (std::size_t i = 0; i < n; ++i) sum[i] += f.stats(row, static_cast<Eigen::Index>(i));
  }
  return sum;
}

TEST(ZeroConfig, EveryShippedTraceAndPurposeMovesInTheReadableBand) {
  test::TempDir dir;
  for (const std::string name : {"pipeline8-flat", "farm8-fattree", "farm8-anytag", "halo2d-16-torus",
                                 "halo3d-27-torus-light", "halo3d-27-torus-heavy", "pipeline8-resources"}) {
    for (const auto& p : ingest::purposes()) {
      SCOPED_TRACE(name + " / " + p.name);
      const ZeroRun run = run_inferred(shipped(name), dir.path(), name + "-" + p.name, p.purpose);
      // Neither frozen (the picture would be the starting layout) nor flying apart.
      EXPECT_GT(run.summary.median_motion, 0.02);
      EXPECT_LT(run.summary.median_motion, 5.0);
      EXPECT_GE(run.summary.intervals, 200U);
      EXPECT_LE(run.summary.intervals, 1000U);
      EXPECT_GE(run.summary.frames, 100U);
      for (const auto& w : run.summary.warnings) ADD_FAILURE() << "unexpected warning: " << w;
    }
  }
}

TEST(ZeroConfig, ATraceStretchedByOneLateTimestampStaysAFewHundredSteps) {
  // One corrupted timestamp stretches a 20 ms exchange to 4.4e9 s: the calibrated step follows the
  // interval, so the run is still a few hundred steps (an absolute spring floor made it 10^7).
  test::TempDir dir;
  std::string t = "kntr 1\nnode 0 0\nnode 0 1\n";
  for (int i = 1; i <= 20; ++i) {
    t += "msg " + std::to_string(i * 0.001) + " 0 1 100\nmsg " + std::to_string(i * 0.001 + 0.0005) + " 1 0 100\n";
  }
  t += "msg 4402153692 0 1 100\nend 4402153693\n";
  test::write_text(dir / "t.kntr", t);
  const auto r = test::run_kanoko({"simulate", (dir / "t.kntr").string(), "-o", (dir / "r.kntj").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string all = r.out + r.err;
  const std::size_t at = all.find("rk4: ");
  ASSERT_NE(at, std::string::npos) << all;
  EXPECT_LE(std::stoull(all.substr(at + 5)), 2000U) << all.substr(at, 120);
}

TEST(ZeroConfig, LayoutDistancesFollowTheCommunicationGraph) {
  test::TempDir dir;
  for (const std::string name : {"halo2d-16-torus", "halo3d-27-torus-light", "pipeline8-flat", "farm8-fattree"}) {
    SCOPED_TRACE(name);
    const ZeroRun run = run_inferred(shipped(name), dir.path(), name);
    const trajectory::Reader r(run.path);
    std::vector<models::WeightedEdge> edges;
    for (const auto& e : r.meta().edges) edges.push_back({e[0], e[1], 1.0});
    ASSERT_FALSE(edges.empty());
    const std::size_t n = r.meta().body_count();
    const models::LayoutQuality q = models::layout_quality(n, edges, r.frame(0).positions);
    // A torus cannot lie flat in 3-D without long wrap-around springs, so the bound is modest;
    // random positions, the control, show no correlation at all.
    EXPECT_GT(q.spearman, 0.5) << "layout distance vs hops in the communication graph";
    std::srand(7);
    const Eigen::Matrix3Xd random = Eigen::Matrix3Xd::Random(3, static_cast<Eigen::Index>(n));
    EXPECT_LT(models::layout_quality(n, edges, random).spearman, 0.3);
  }
}

/// Each body's rank, mean mass and mean speed over a run, and the heaviest body.
struct BodyMotion {
  std::vector<long> rank;
  std::vector<double> mass, speed;
  std::size_t heaviest = 0;
};

BodyMotion body_motion(const ZeroRun& run) {
  const trajectory::Reader r(run.path);
  BodyMotion b{ranks_of(r), mean_mass(r), mean_speed(r), 0};
  b.heaviest = static_cast<std::size_t>(std::max_element(b.mass.begin(), b.mass.end()) - b.mass.begin());
  return b;
}

TEST(ZeroConfig, MostLoadedRankIsHeaviestAndMovesLeastUnderBalance) {
  // pipeline8-flat: rank 4 computes 3 ms per item, the others 1 ms.
  test::TempDir dir;
  const auto [rank, mass, speed, heaviest] = body_motion(run_inferred(shipped("pipeline8-flat"), dir.path(), "pipeline"));
  EXPECT_EQ(rank[heaviest], 4);
  for (std::size_t i = 0; i < rank.size(); ++i) {
    if (i != heaviest) {
      EXPECT_GT(mass[heaviest], 1.5 * mass[i]) << "rank " << rank[i];
    }
  }
  // The bottleneck is heavy and sluggish; the ranks that wait for it downstream are light and
  // restless.
  for (std::size_t i = 0; i < rank.size(); ++i) {
    if (rank[i] >= 5) {
      EXPECT_LT(speed[heaviest], 0.8 * speed[i]) << "rank " << rank[i];
    }
  }
}

TEST(ZeroConfig, OverloadedRankIsHeaviestAndLeastRestlessOfAllUnderBalance) {
  // halo2d-16-slow5: a 4 × 4 torus where every rank has the same neighbourhood and rank 5
  // computes three times the work of the others. Mass follows its load; its mean speed is the
  // lowest of all sixteen, not just below the ranks that wait for it.
  test::TempDir dir;
  const auto [rank, mass, speed, heaviest] = body_motion(run_inferred(shipped("halo2d-16-slow5"), dir.path(), "slow5"));
  const std::size_t slowest = static_cast<std::size_t>(std::min_element(speed.begin(), speed.end()) - speed.begin());
  EXPECT_EQ(rank[heaviest], 5);
  EXPECT_EQ(rank[slowest], 5);
  for (std::size_t i = 0; i < rank.size(); ++i) {
    if (i == heaviest) continue;
    EXPECT_GT(mass[heaviest], 1.5 * mass[i]) << "rank " << rank[i];
    EXPECT_LT(speed[heaviest], 0.8 * speed[i]) << "rank " << rank[i];
  }
}

TEST(ZeroConfig, SkewedAxisDeformsMoreThanTheOthers) {
  // halo3d: rank = x + 3y + 9z; messages along x carry 8× the bytes.
  test::TempDir dir;
  const ZeroRun run = run_inferred(shipped("halo3d-27-torus-light"), dir.path(), "halo3d");
  const trajectory::Reader r(run.path);
  const std::vector<long> rank = ranks_of(r);
  auto axis_of = [&](std::uint32_t a, std::uint32_t b) {
    const long ra = rank[a], rb = rank[b];
    const long dx = ra % 3 != rb % 3, dy = (ra / 3) % 3 != (rb / 3) % 3, dz = ra / 9 != rb / 9;
    return dx + dy + dz == 1 ? (dx != 0 ? 0 : dy != 0 ? 1 : 2) : -1;
  };
  double strain[3] = {0, 0, 0};
  int count[3] = {0, 0, 0};
  const auto f0 = r.frame(0);
  for (std::size_t k = 1; k < r.frame_count(); ++k) {
    const auto f = r.frame(k);
    for (const auto& e : r.meta().edges) {
      const int axis = axis_of(e[0], e[1]);
      if (axis < 0) continue;
      const auto a = static_cast<Eigen::Index>(e[0]), b = static_cast<Eigen::Index>(e[1]);
      const double l0 = (f0.positions.col(a) - f0.positions.col(b)).norm();
      strain[axis] += std::fabs((f.positions.col(a) - f.positions.col(b)).norm() - l0) / l0;
      ++count[axis];
    }
  }
  ASSERT_GT(count[0], 0);
  ASSERT_GT(count[1], 0);
  ASSERT_GT(count[2], 0);
  const double x = strain[0] / count[0], y = strain[1] / count[1], z = strain[2] / count[2];
  EXPECT_GT(x, 1.5 * y);
  EXPECT_GT(x, 1.5 * z);
}

TEST(ZeroConfig, HeavierRunDeformsLessThanLighterUnderOneCalibration) {
  // The same messages with 5× the computation, compared fairly: the heavy run shares the light
  // run's calibration (--calibrate-like), so the same traffic meets heavier bodies.
  test::TempDir dir;
  const ZeroRun light = run_inferred(shipped("halo3d-27-torus-light"), dir.path(), "light");
  const ZeroRun shared =
      run_inferred(shipped("halo3d-27-torus-heavy"), dir.path(), "heavy-like-light", ingest::Purpose::Balance, light.path);
  EXPECT_LT(shared.summary.median_motion, 0.8 * light.summary.median_motion);
}

TEST(ZeroConfig, HeavierRunIsLessRestlessUnderItsOwnCalibration) {
  // Each run calibrated on its own: calibration brings both runs' static deformation into the
  // readable band (a spring's stretch under a steady pull does not depend on mass), but it never
  // rescales mass, so the heavy run's bodies are heavier and travel a shorter path, in spacings,
  // over their run.
  test::TempDir dir;
  auto path_in_spacings = [](const ZeroRun& run) {
    const trajectory::Reader r(run.path);
    const std::vector<double> speed = mean_speed(r);
    const double mean = std::accumulate(speed.begin(), speed.end(), 0.0) / static_cast<double>(speed.size());
    return mean * (r.end_time() - r.begin_time()) / models::mean_spacing(r.frame(0).positions, 1.0);
  };
  auto mean_of = [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  const ZeroRun light = run_inferred(shipped("halo3d-27-torus-light"), dir.path(), "light-own");
  const ZeroRun heavy = run_inferred(shipped("halo3d-27-torus-heavy"), dir.path(), "heavy-own");
  EXPECT_GT(mean_of(mean_mass(trajectory::Reader(heavy.path))), 1.5 * mean_of(mean_mass(trajectory::Reader(light.path))));
  EXPECT_LT(path_in_spacings(heavy), 0.8 * path_in_spacings(light));
}

/// Radius of gyration of a frame, and the median motion: what the slower or bigger copies keep.
struct Shape {
  double median_motion = 0;
  std::vector<double> gyration;  ///< at 10 evenly spaced frames
};

Shape shape_of(const ZeroRun& run) {
  const trajectory::Reader r(run.path);
  Shape s;
  s.median_motion = run.summary.median_motion;
  for (int k = 0; k < 10; ++k) {
    const auto f = r.frame(static_cast<std::size_t>(k) * (r.frame_count() - 1) / 9);
    const Eigen::Vector3d c = f.positions.rowwise().mean();
    s.gyration.push_back(std::sqrt((f.positions.colwise() - c).colwise().squaredNorm().mean()));
  }
  return s;
}

TEST(ZeroConfig, SlowerOrBiggerCopyGivesTheSamePicture) {
  test::TempDir dir;
  const std::filesystem::path original = shipped("halo2d-16-torus");
  const std::filesystem::path slower = dir.path() / "slower.trace";
  const std::filesystem::path bigger = dir.path() / "bigger.trace";
  test::transform_paje(original, slower, {100.0, 1});
  test::transform_paje(original, bigger, {1.0, 10});
  const Shape a = shape_of(run_inferred(original, dir.path(), "original"));
  for (const auto& [copy, name] : {std::pair{slower, "slower"}, std::pair{bigger, "bigger"}}) {
    SCOPED_TRACE(name);
    const Shape b = shape_of(run_inferred(copy, dir.path(), name));
    EXPECT_NEAR(b.median_motion, a.median_motion, 0.03 * a.median_motion);
    for (std::size_t k = 0; k < a.gyration.size(); ++k) EXPECT_NEAR(b.gyration[k], a.gyration[k], 0.03 * a.gyration[k]);
  }
}

TEST(ZeroConfig, GeneratedLongRunAndNoSizesStillShowTheProgram) {
  KANOKO_REQUIRE_SMPI();
  test::TempDir dir;
  // A long run (tens of simulated seconds), without message sizes: counts pull, and the interval
  // follows the event count, not the duration.
  test::SmpiRun long_run;
  long_run.program = "halo2d";
  long_run.ranks = 16;
  long_run.platform = "torus";
  long_run.scale = "long";
  const ZeroRun run = run_inferred(test::smpi_trace(long_run), dir.path(), "long");
  EXPECT_GT(run.summary.median_motion, 0.02);
  EXPECT_LT(run.summary.median_motion, 5.0);
  EXPECT_GE(run.summary.intervals, 200U);
  EXPECT_LE(run.summary.intervals, 1000U);
}

/// The halo2d run with the inferred mapping, its communication lines replaced by `pull`: the
/// calibration keeps a written value, so the motion follows it.
sim::SimulateSummary halo2d_with_pull(const std::filesystem::path& dir, const std::string& pull) {
  std::string text = ingest::infer_mapping(shipped("halo2d-16-torus"), ingest::InferOptions{}).text;
  text.replace(text.find("quantity = \"bytes\""), 18, "quantity = \"bytes\"\n" + pull);
  sim::SimulateOptions so;
  so.trace = shipped("halo2d-16-torus");
  so.mapping_text = text;
  so.output = dir / "pull.kntj";
  so.progress = false;
  return sim::simulate(so);
}

TEST(ZeroConfig, AStillPictureIsSaid) {
  // A gain written far too small: the run says the picture is still (the healthy runs above say
  // nothing).
  test::TempDir dir;
  const sim::SimulateSummary s = halo2d_with_pull(dir.path(), "gain = 1e-12\nnormalize = \"max\"");
  ASSERT_EQ(s.warnings.size(), 1U);
  EXPECT_NE(s.warnings[0].find("the picture is almost still"), std::string::npos) << s.warnings[0];
  EXPECT_LT(s.median_motion, 0.02);
}

TEST(ZeroConfig, ALostShapeIsSaid) {
  // An absolute gain far too large: the bodies fly many spacings from their start.
  test::TempDir dir;
  const sim::SimulateSummary s = halo2d_with_pull(dir.path(), "gain = 1.0\nnormalize = \"none\"");
  ASSERT_EQ(s.warnings.size(), 1U);
  EXPECT_NE(s.warnings[0].find("the shape is lost"), std::string::npos) << s.warnings[0];
  EXPECT_GT(s.median_motion, 5.0);
}

TEST(ZeroConfig, AStepTooLongForTheMotionIsSaid) {
  // Velocity Verlet at one step per interval, four times the step calibration chooses: the
  // energy the run ends with is no longer what friction, forcing and mass changes account for
  // (15 % of what flowed, against 1 % at the calibrated step, which the healthy runs above keep
  // quiet about).
  test::TempDir dir;
  std::string text = ingest::infer_mapping(shipped("halo2d-16-torus"), ingest::InferOptions{}).text;
  text.replace(text.find("[simulation]"), 12, "[simulation]\ndt = 1.0\nintegrator = \"verlet\"");
  sim::SimulateOptions so;
  so.trace = shipped("halo2d-16-torus");
  so.mapping_text = text;
  so.output = dir.path() / "long-step.kntj";
  so.progress = false;
  const sim::SimulateSummary s = sim::simulate(so);
  ASSERT_EQ(s.warnings.size(), 1U);
  EXPECT_NE(s.warnings[0].find("the energy does not balance"), std::string::npos) << s.warnings[0];
  EXPECT_NE(s.warnings[0].find("lower [simulation] dt"), std::string::npos) << s.warnings[0];
}

TEST(ZeroConfig, ANaNFromAFormulaNamesTheFormulaThePairTheIntervalAndTheReason) {
  // A trace without message sizes, and a pull weight that divides by the peak bytes.
  test::TempDir dir;
  test::write_text(dir.path() / "t.kntr", "kntr 1\nnode 0 0\nnode 0 1\nmsg 0.05 0 1 0\nmsg 0.15 1 0 0\nend 0.3\n");
  test::write_text(dir.path() / "m.toml", "[simulation]\ninterval = 0.1\n[bodies]\nplacement = \"line\"\n"
                                          "[forces.communication]\nquantity = \"messages\"\n"
                                          "weight = \"bytes / peak_bytes\"\n");
  sim::SimulateOptions so;
  so.trace = dir.path() / "t.kntr";
  so.mapping = dir.path() / "m.toml";
  so.output = dir.path() / "r.kntj";
  so.progress = false;
  try {
    (void)sim::simulate(so);
    ADD_FAILURE() << "no error";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("m.toml:7:"), std::string::npos) << what;
    EXPECT_NE(what.find("bytes / peak_bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("node0"), std::string::npos) << what;
    EXPECT_NE(what.find("in interval 0"), std::string::npos) << what;
    EXPECT_NE(what.find("peak_bytes = 0"), std::string::npos) << what;
    EXPECT_NE(what.find("no message sizes"), std::string::npos) << what;
  }
  EXPECT_FALSE(std::filesystem::exists(so.output));
}

}  // namespace
}  // namespace kanoko
