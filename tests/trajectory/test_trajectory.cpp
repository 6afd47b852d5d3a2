// The trajectory file (.kntj): write → read round trips, seeking and interpolation, and every kind
// of damaged file, including ones whose hashes were recomputed after tampering.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/hash.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trajectory/reseal.hpp"

namespace kanoko::trajectory {
namespace KANOKO_UNITY_ID {

using testing::peek;
using testing::poke;
using testing::reseal;

Metadata sample_meta(std::size_t bodies, std::vector<std::string> stats) {
  Metadata m;
  for (std::size_t i = 0; i < bodies; ++i) {
    BodyInfo b;
    b.name = "pe" + std::to_string(i);
    b.host = i % 2 == 0 ? "host-" + std::to_string(i) : "";
    b.rank = static_cast<std::int64_t>(i) - 1;
    b.colour_rgb = {0.1F * static_cast<float>(i), 0.5F, 1.0F};
    b.radius = 0.05F + 0.01F * static_cast<float>(i);
    m.bodies.push_back(b);
  }
  for (std::uint32_t i = 0; i + 1 < bodies; ++i) m.edges.push_back({i, i + 1});
  m.stat_names = std::move(stats);
  m.dt_s = 0.005;
  m.steps_per_frame = 4;
  m.interval_s = 0.1;
  m.trace_begin_s = 0;
  m.trace_end_s = 3.2;
  m.input_hash = 0x0123456789abcdefULL;
  m.integrator = "rk4";
  m.source_trace = "traces/fib 22.kntr";
  m.source_mapping = "mappings/paper-fibonacci.toml";
  m.mapping_text = "[simulation]\ninterval = 0.1\n# ünïcödé\n";
  // Three intervals of traffic: the first with two pairs, the second empty, the third with one.
  if (bodies >= 2) {
    m.traffic = {{0, 1, 1024.5, 3}, {1, 0, 7, 1}, {static_cast<std::uint32_t>(bodies - 1), 0, 1e12, 2}};
    m.traffic_begin = {0, 2, 2, 3};
  }
  return m;
}


struct Frame {
  double t;
  Eigen::Matrix3Xd pos;
  Eigen::Matrix3Xd vel;
  Eigen::MatrixXd stats;
};

/// Frames of random doubles, including awkward ones, at increasing times.
std::vector<Frame> random_frames(std::size_t count, std::size_t bodies, std::size_t stats, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  const double awkward[] = {0.0, -0.0, 5e-324, -1.7976931348623157e308, 1e-300, 1.0 / 3.0};
  auto value = [&] { return rng() % 10 == 0 ? awkward[rng() % 6] : u(rng); };
  std::vector<Frame> frames;
  double t = 0.25;
  for (std::size_t k = 0; k < count; ++k) {
    Frame f{t, Eigen::Matrix3Xd(3, static_cast<Eigen::Index>(bodies)), Eigen::Matrix3Xd(3, static_cast<Eigen::Index>(bodies)),
            Eigen::MatrixXd(static_cast<Eigen::Index>(stats), static_cast<Eigen::Index>(bodies))};
    for (Eigen::Index i = 0; i < f.pos.size(); ++i) f.pos.data()[i] = value();
    for (Eigen::Index i = 0; i < f.vel.size(); ++i) f.vel.data()[i] = value();
    // Statistics are counts and masses here: the reader refuses negative ones.
    for (Eigen::Index i = 0; i < f.stats.size(); ++i) f.stats.data()[i] = std::abs(value());
    frames.push_back(f);
    t += 0.02 + 0.001 * static_cast<double>(rng() % 5);
  }
  return frames;
}

void write_file(const std::filesystem::path& path, const Metadata& meta, const std::vector<Frame>& frames) {
  Writer w(path, meta);
  for (const auto& f : frames) w.append_frame(f.t, f.pos, f.vel, f.stats);
  EXPECT_EQ(w.frame_count(), frames.size());
  w.commit();
}

bool bit_equal(const double* a, const double* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(double)) == 0; }

std::string bytes_of(const std::filesystem::path& p) { return test::read_text(p); }
void put_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// The message of the InputError that `action` throws ("" and a test failure otherwise); it must
/// be one line naming `p`.
template <class F>
std::string error_of(const std::filesystem::path& p, F action) {
  try {
    action();
    ADD_FAILURE() << "no error for " << p;
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1U);
    const std::string what = e.what();
    EXPECT_NE(what.find(p.string()), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-InputError: " << e.what();
  }
  return {};
}

/// The error opening `p` (and reading every frame, as the checks of a block are lazy).
std::string open_error(const std::filesystem::path& p, Open open = Open::complete) {
  return error_of(p, [&] {
    const Reader r(p, open);
    for (std::size_t k = 0; k < r.frame_count(); ++k) (void)r.frame(k);
  });
}

// ------------------------------------------------------------------------------------------------
// Round trips
// ------------------------------------------------------------------------------------------------

TEST(Trajectory, WriteReadRoundTripIsExact) {
  test::TempDir dir;
  const auto path = dir / "run.kntj";
  const std::vector<std::string> stats{stat::kLoad, stat::kMass, stat::kBytesSent, "custom stat"};
  const Metadata meta = sample_meta(5, stats);
  const auto frames = random_frames(37, 5, stats.size(), 1);
  write_file(path, meta, frames);
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"run.kntj"}));

  const Reader r(path);
  const Metadata& m = r.meta();
  ASSERT_EQ(m.body_count(), 5U);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(m.bodies[i].name, meta.bodies[i].name);
    EXPECT_EQ(m.bodies[i].host, meta.bodies[i].host);
    EXPECT_EQ(m.bodies[i].rank, meta.bodies[i].rank);
    EXPECT_EQ(m.bodies[i].colour_rgb, meta.bodies[i].colour_rgb);
    EXPECT_EQ(m.bodies[i].radius, meta.bodies[i].radius);
  }
  EXPECT_EQ(m.edges, meta.edges);
  EXPECT_EQ(m.stat_names, stats);
  EXPECT_EQ(m.stat_index("custom stat"), 3);
  EXPECT_EQ(m.stat_index(stat::kMass), 1);
  EXPECT_EQ(m.stat_index("nope"), -1);
  EXPECT_EQ(m.dt_s, meta.dt_s);
  EXPECT_EQ(m.steps_per_frame, meta.steps_per_frame);
  EXPECT_EQ(m.interval_s, meta.interval_s);
  EXPECT_EQ(m.trace_begin_s, meta.trace_begin_s);
  EXPECT_EQ(m.trace_end_s, meta.trace_end_s);
  EXPECT_EQ(m.input_hash, meta.input_hash);
  EXPECT_EQ(m.integrator, meta.integrator);
  EXPECT_EQ(m.source_trace, meta.source_trace);
  EXPECT_EQ(m.source_mapping, meta.source_mapping);
  EXPECT_EQ(m.mapping_text, meta.mapping_text);
  ASSERT_EQ(m.traffic_intervals(), 3U);
  ASSERT_EQ(m.traffic_in(0).size(), 2U);
  EXPECT_EQ(m.traffic_in(0)[0].bytes, 1024.5);
  EXPECT_EQ(m.traffic_in(0)[0].messages, 3);
  EXPECT_EQ(m.traffic_in(0)[1].src, 1U);
  EXPECT_TRUE(m.traffic_in(1).empty());
  ASSERT_EQ(m.traffic_in(2).size(), 1U);
  EXPECT_EQ(m.traffic_in(2)[0].src, 4U);
  EXPECT_EQ(m.traffic_in(2)[0].bytes, 1e12);
  EXPECT_TRUE(m.traffic_in(3).empty()) << "past the recorded intervals";
  EXPECT_EQ(m.interval_of(0.0), 0U);
  EXPECT_EQ(m.interval_of(0.25), 2U);
  EXPECT_EQ(m.interval_of(-1.0), 0U);

  ASSERT_EQ(r.frame_count(), frames.size());
  EXPECT_EQ(r.begin_time(), frames.front().t);
  EXPECT_EQ(r.end_time(), frames.back().t);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const FrameView f = r.frame(k);
    EXPECT_EQ(f.time_s, frames[k].t);
    EXPECT_EQ(r.frame_time(k), frames[k].t);
    ASSERT_EQ(f.positions.cols(), 5);
    ASSERT_EQ(f.stats.rows(), 4);
    ASSERT_EQ(f.stats.cols(), 5);
    EXPECT_TRUE(bit_equal(f.positions.data(), frames[k].pos.data(), 15)) << k;
    EXPECT_TRUE(bit_equal(f.velocities.data(), frames[k].vel.data(), 15)) << k;
    EXPECT_TRUE(bit_equal(f.stats.data(), frames[k].stats.data(), 20)) << k;
  }
}

/// `meta`'s traffic as a source for the writer that begins with it.
TrafficSource source_of(const Metadata& meta) {
  return {meta.traffic_begin, [&meta](std::uint64_t first, std::span<PairTraffic> out) {
            std::copy_n(meta.traffic.begin() + static_cast<std::ptrdiff_t>(first), out.size(), out.begin());
          }};
}

TEST(Trajectory, TrafficWrittenAheadMakesTheSameFile) {
  // A calibrated run's writer begins with the traffic section, written on a thread of its own
  // while the model is calibrated, and writes the rest at start(): the file is the one a writer
  // given the whole metadata makes, byte for byte. 150,000 pair records over 5 intervals: more
  // than two of the pieces the writer copies at a time.
  test::TempDir dir;
  Metadata meta = sample_meta(7, {stat::kMass});
  meta.traffic.clear();
  meta.traffic_begin = {0};
  std::mt19937_64 rng(5);
  for (std::size_t bin = 0; bin < 5; ++bin) {
    for (std::size_t k = 0; k < 30000; ++k) {
      meta.traffic.push_back({static_cast<std::uint32_t>(rng() % 7), static_cast<std::uint32_t>(rng() % 7),
                              static_cast<double>(rng() % 100000), static_cast<double>(1 + rng() % 9)});
    }
    meta.traffic_begin.push_back(meta.traffic.size());
  }
  const std::vector<Frame> frames = random_frames(70, 7, 1, 3);
  write_file(dir.path() / "whole.kntj", meta, frames);
  Metadata rest = meta;  // what start() takes: the traffic is the writer's already
  rest.traffic.clear();
  rest.traffic_begin.clear();
  {
    Writer w(dir.path() / "ahead.kntj", source_of(meta));
    // Until start() writes the header the file is no run, however far the traffic has got.
    EXPECT_THROW(Reader(w.temporary_path(), Open::partial), InputError);
    w.start(rest);
    for (const auto& f : frames) w.append_frame(f.t, f.pos, f.vel, f.stats);
    w.commit();
  }
  EXPECT_EQ(bytes_of(dir.path() / "ahead.kntj"), bytes_of(dir.path() / "whole.kntj"));
  const Reader r(dir.path() / "ahead.kntj");
  ASSERT_EQ(r.meta().traffic.size(), meta.traffic.size());
  EXPECT_EQ(std::memcmp(r.meta().traffic.data(), meta.traffic.data(), meta.traffic.size() * sizeof(PairTraffic)), 0);
  EXPECT_EQ(r.meta().traffic_begin, meta.traffic_begin);
  EXPECT_EQ(r.meta().bodies.size(), 7U);
}

TEST(Trajectory, TrafficIsReadInPlaceAndOutlivesItsReader) {
  // Opening a run does not copy its traffic (hundreds of MB for a long run of 10,000 ranks) into
  // memory of its own: the records are read in place from the file's mapping, which they keep,
  // through a reader's refreshes of a growing run and after the reader is gone.
  test::TempDir dir;
  Metadata meta = sample_meta(5, {stat::kMass});
  meta.traffic.clear();
  meta.traffic_begin = {0};
  for (std::uint32_t bin = 0; bin < 4; ++bin) {
    for (std::uint32_t k = 0; k < 1000; ++k) meta.traffic.push_back({k % 5, (k + bin) % 5, 1.0 + k, 1.0 + bin});
    meta.traffic_begin.push_back(meta.traffic.size());
  }
  const std::vector<Frame> frames = random_frames(256, 5, 1, 3);  // four blocks of 64 frames
  Metadata kept;
  {
    Writer w(dir.path() / "run.kntj", meta);
    std::optional<Reader> r;
    std::uint64_t first_bytes = 0;
    for (std::size_t k = 0; k < frames.size(); ++k) {
      w.append_frame(frames[k].t, frames[k].pos, frames[k].vel, frames[k].stats);
      if (k == 0) {
        r.emplace(w.temporary_path(), Open::partial);
        kept = r->meta();  // taken before the reader maps the file again
        EXPECT_TRUE(kept.traffic.in_place());
        first_bytes = r->file_bytes();
      } else if ((k + 1) % 64 == 0) {
        EXPECT_EQ(r->refresh(), k + 1);
      }
    }
    EXPECT_GT(r->file_bytes(), first_bytes);  // mapped again, grown
    r.reset();
    w.commit();
  }
  ASSERT_EQ(kept.traffic.size(), meta.traffic.size());
  EXPECT_EQ(std::memcmp(kept.traffic.data(), meta.traffic.data(), meta.traffic.size() * sizeof(PairTraffic)), 0);
  // Building onto records read in place copies them first; the copy then stands alone.
  kept.traffic.push_back({1, 2, 3, 4});
  EXPECT_FALSE(kept.traffic.in_place());
  ASSERT_EQ(kept.traffic.size(), meta.traffic.size() + 1);
  EXPECT_EQ(std::memcmp(kept.traffic.data(), meta.traffic.data(), meta.traffic.size() * sizeof(PairTraffic)), 0);
  EXPECT_EQ(kept.traffic[meta.traffic.size()].bytes, 3.0);
}

TEST(Trajectory, AWriterThatNeverStartsLeavesNothing) {
  // A calibration that fails or is interrupted ends the writer before start(): its traffic
  // thread stops and the temporary file goes, as for any unfinished writer.
  test::TempDir dir;
  Metadata meta = sample_meta(3, {});
  std::filesystem::path temporary;
  {
    Writer w(dir.path() / "run.kntj", source_of(meta));
    temporary = w.temporary_path();
    EXPECT_TRUE(std::filesystem::exists(temporary));
  }
  EXPECT_FALSE(std::filesystem::exists(temporary));
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

TEST(Trajectory, TrafficThatFailsToWriteFailsTheStart) {
  // What the traffic's thread meets (here its source failing; a full disk alike) is thrown by
  // start(), on the caller's thread, and the temporary file goes with the writer.
  test::TempDir dir;
  Metadata meta = sample_meta(3, {});
  TrafficSource failing = source_of(meta);
  failing.fill = [](std::uint64_t, std::span<PairTraffic>) { throw RunError("no space left on device"); };
  std::optional<Writer> w;
  w.emplace(dir.path() / "run.kntj", std::move(failing));
  meta.traffic.clear();
  meta.traffic_begin.clear();
  try {
    w->start(meta);
    ADD_FAILURE() << "start() did not throw";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("no space left"), std::string::npos) << e.what();
  }
  w.reset();
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

TEST(Trajectory, ExactMetaDoublesAndOddStrings) {
  test::TempDir dir;
  Metadata meta = sample_meta(2, {});
  meta.interval_s = 1.0 / 3.0;
  meta.trace_begin_s = 5e-324;
  meta.trace_end_s = 1.7976931348623157e308;
  meta.dt_s = 0.1 + 0.2;
  meta.integrator = "name=with=equals";
  meta.source_trace = "two\nlines";  // meta values are single-line: the break becomes a space
  meta.source_mapping = "";
  meta.mapping_text = std::string("binary\0text\n", 12);
  meta.bodies[0].name = std::string(1000, 'n');
  meta.bodies[1].name = "";
  meta.edges.clear();
  write_file(dir / "a.kntj", meta, random_frames(2, 2, 0, 2));
  const Reader r(dir / "a.kntj");
  EXPECT_EQ(r.meta().interval_s, 1.0 / 3.0);
  EXPECT_EQ(r.meta().trace_begin_s, 5e-324);
  EXPECT_EQ(r.meta().trace_end_s, 1.7976931348623157e308);
  EXPECT_EQ(r.meta().dt_s, 0.1 + 0.2);
  EXPECT_EQ(r.meta().integrator, "name=with=equals");
  EXPECT_EQ(r.meta().source_trace, "two lines");
  EXPECT_EQ(r.meta().source_mapping, "");
  EXPECT_EQ(r.meta().mapping_text, meta.mapping_text);
  EXPECT_EQ(r.meta().bodies[0].name, meta.bodies[0].name);
  EXPECT_EQ(r.meta().bodies[1].name, "");
  EXPECT_TRUE(r.meta().edges.empty());
  EXPECT_EQ(r.frame(0).stats.size(), 0);
}

TEST(Trajectory, NoBodiesAndSingleFrame) {
  test::TempDir dir;
  Metadata meta = sample_meta(0, {});
  write_file(dir / "a.kntj", meta, random_frames(1, 0, 0, 3));
  const Reader r(dir / "a.kntj");
  EXPECT_EQ(r.frame_count(), 1U);
  EXPECT_EQ(r.begin_time(), r.end_time());
  Eigen::Matrix3Xd p;
  r.positions_at(99, p);
  EXPECT_EQ(p.cols(), 0);
}

TEST(Trajectory, FrameAtOrBefore) {
  test::TempDir dir;
  const std::vector<double> times{0.0, 0.5, 1.0, 2.0};
  Metadata meta = sample_meta(1, {"s"});
  {
    Writer w(dir / "a.kntj", meta);
    for (double t : times) {
      Eigen::MatrixXd s(1, 1);
      s(0, 0) = t * 10;
      w.append_frame(t, Eigen::Matrix3Xd::Zero(3, 1), Eigen::Matrix3Xd::Zero(3, 1), s);
    }
    w.commit();
  }
  const Reader r(dir / "a.kntj");
  EXPECT_EQ(r.frame_at_or_before(-1), 0U);
  EXPECT_EQ(r.frame_at_or_before(0), 0U);
  EXPECT_EQ(r.frame_at_or_before(0.49), 0U);
  EXPECT_EQ(r.frame_at_or_before(0.5), 1U);
  EXPECT_EQ(r.frame_at_or_before(0.999), 1U);
  EXPECT_EQ(r.frame_at_or_before(1.0), 2U);
  EXPECT_EQ(r.frame_at_or_before(1.99), 2U);
  EXPECT_EQ(r.frame_at_or_before(2.0), 3U);
  EXPECT_EQ(r.frame_at_or_before(1e300), 3U);
  EXPECT_EQ(r.frame_at_or_before(std::numeric_limits<double>::infinity()), 3U);
  EXPECT_EQ(r.frame_at_or_before(std::nan("")), 0U);
  Eigen::MatrixXd s;
  r.stats_at(0.75, s);
  EXPECT_EQ(s(0, 0), 5.0);
  r.stats_at(-3, s);
  EXPECT_EQ(s(0, 0), 0.0);
  r.stats_at(7, s);
  EXPECT_EQ(s(0, 0), 20.0);
}

TEST(Trajectory, PositionsAtFrameTimesAreTheFramesExactly) {
  test::TempDir dir;
  const auto frames = random_frames(20, 4, 0, 4);
  write_file(dir / "a.kntj", sample_meta(4, {}), frames);
  const Reader r(dir / "a.kntj");
  Eigen::Matrix3Xd p;
  for (std::size_t k = 0; k < frames.size(); ++k) {
    r.positions_at(frames[k].t, p);
    EXPECT_TRUE(bit_equal(p.data(), frames[k].pos.data(), 12)) << k;
  }
  // Clamped outside the stored range.
  r.positions_at(frames.front().t - 5, p);
  EXPECT_TRUE(bit_equal(p.data(), frames.front().pos.data(), 12));
  r.positions_at(frames.back().t + 5, p);
  EXPECT_TRUE(bit_equal(p.data(), frames.back().pos.data(), 12));
}

TEST(Trajectory, HermiteInterpolationReproducesACubic) {
  // x(t) = t³, y(t) = 2t³ − t + 1, z(t) = 4 with exact velocities: a cubic Hermite spline through
  // positions and velocities is the cubic itself.
  test::TempDir dir;
  auto x = [](double t) { return Eigen::Vector3d(t * t * t, 2 * t * t * t - t + 1, 4); };
  auto v = [](double t) { return Eigen::Vector3d(3 * t * t, 6 * t * t - 1, 0); };
  {
    Writer w(dir / "cubic.kntj", sample_meta(1, {}));
    for (double t : {0.0, 1.0, 2.0, 3.5}) {
      w.append_frame(t, x(t), v(t), Eigen::MatrixXd(0, 1));
    }
    w.commit();
  }
  const Reader r(dir / "cubic.kntj");
  Eigen::Matrix3Xd p;
  // Dyadic times: every operation is exact, so the result must be too.
  for (double t : {0.5, 0.25, 1.5, 1.125, 2.75}) {
    r.positions_at(t, p);
    EXPECT_EQ(p.col(0), x(t)) << "t = " << t << ": " << p.col(0).transpose();
  }
  for (double t : {0.1, 0.7, 1.3, 2.2, 3.4}) {
    r.positions_at(t, p);
    EXPECT_NEAR((p.col(0) - x(t)).norm(), 0.0, 1e-12) << "t = " << t;
  }
}

// ------------------------------------------------------------------------------------------------
// Damaged files
// ------------------------------------------------------------------------------------------------

/// Offset of the data of section `name` in a file's bytes (npos if absent).
std::size_t section_data(const std::string& b, const std::string& name) {
  std::size_t pos = 144;
  const auto count = peek<std::uint32_t>(b, 28);
  for (std::uint32_t s = 0; s < count; ++s) {
    const std::string sname = b.substr(pos, 16).c_str();
    std::uint64_t size = 0;
    std::memcpy(&size, b.data() + pos + 16, 8);
    if (sname == name) return pos + 24;
    pos += 24 + static_cast<std::size_t>(size);
  }
  return std::string::npos;
}


/// A good file (good_) and a place for damaged copies of it (bad_).
class TrajectoryFileTest : public ::testing::Test {
 protected:
  /// Writes `bytes` as bad.kntj and returns the error opening it and reading every frame.
  std::string error_for(const std::string& bytes, Open open = Open::complete) {
    put_bytes(bad_, bytes);
    return open_error(bad_, open);
  }
  test::TempDir dir_;
  std::filesystem::path bad_ = dir_ / "bad.kntj";
  std::string good_;
};

/// A good format 2 file of 150 frames of 3 bodies: blocks of 64, 64 and 22 frames.
class DamagedTrajectory : public TrajectoryFileTest {
 protected:
  void SetUp() override {
    path_ = dir_ / "good.kntj";
    write_file(path_, sample_meta(3, {stat::kLoad, stat::kMass}), random_frames(150, 3, 2, 5));
    good_ = bytes_of(path_);
  }
  std::size_t frames_offset() const { return static_cast<std::size_t>(peek<std::uint64_t>(good_, 32)); }
  std::size_t stride() const { return static_cast<std::size_t>(peek<std::uint64_t>(good_, 40)); }
  /// Byte offset of frame k (blocks of 64 frames, each followed by a 48-byte footer).
  std::size_t frame_at(std::size_t k) const { return frames_offset() + (k / 64) * (64 * stride() + 48) + (k % 64) * stride(); }

  std::filesystem::path path_;
};

TEST_F(DamagedTrajectory, TheGoodFileOpensWithoutReadingFrames) {
  const Reader r(path_);
  EXPECT_EQ(r.version(), 3U);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.frame_count(), 150U);
  EXPECT_EQ(r.frames_verified(), 0U) << "opening reads no frame";
  (void)r.frame(70);
  EXPECT_EQ(r.frames_verified(), 64U) << "only the block of frame 70";
  (void)r.frame(149);
  EXPECT_EQ(r.frames_verified(), 86U);
  r.verify_all();
  EXPECT_EQ(r.frames_verified(), 150U);
  EXPECT_EQ(good_.substr(0, 8), "KANOKOTJ");
  EXPECT_EQ(good_.substr(96, 8), "KNTJDONE");
  EXPECT_EQ(peek<std::uint32_t>(good_, 24), 64U);
  EXPECT_EQ(good_.size(), frames_offset() + 150 * stride() + 3 * 48);
  EXPECT_EQ(reuse_problem(path_), "");
}

TEST_F(DamagedTrajectory, EmptyAndShort) {
  EXPECT_NE(error_for("").find("0 bytes, shorter than the 96-byte header"), std::string::npos);
  EXPECT_NE(error_for(good_.substr(0, 50)).find("50 bytes"), std::string::npos);
  EXPECT_NE(error_for(good_.substr(0, 120)).find("shorter than the header and completion record"), std::string::npos);
  EXPECT_NE(error_for(std::string(200, 'x')).find("bad magic"), std::string::npos);
}

TEST_F(DamagedTrajectory, Format3ChecksumsAreXxh3) {
  // docs/trajectory-format.md: every checksum of format 3 is XXH3-64 (FNV-1a 64 took 1.4 s of a
  // 10,000-body run's traffic section, written and read again).
  const auto xxh3 = [&](std::size_t begin, std::size_t end) {
    Xxh3_64 h;
    h.update(good_.data() + begin, end - begin);
    return h.digest();
  };
  EXPECT_EQ(peek<std::uint16_t>(good_, 8), 3U);
  EXPECT_EQ(peek<std::uint64_t>(good_, 88), xxh3(0, 88)) << "header hash";
  EXPECT_EQ(peek<std::uint64_t>(good_, 80), xxh3(144, frames_offset())) << "sections hash";
  const std::size_t footer = frame_at(64) - 48;
  EXPECT_EQ(peek<std::uint64_t>(good_, footer + 32), xxh3(frames_offset(), footer)) << "block 0's checksum";
  EXPECT_EQ(peek<std::uint64_t>(good_, footer + 40), xxh3(footer, footer + 40)) << "block 0's footer hash";
  EXPECT_EQ(peek<std::uint64_t>(good_, 136), xxh3(96, 136)) << "completion record hash";
}

TEST_F(DamagedTrajectory, NewerMajorVersionSaysNewer) {
  std::string b = good_;
  poke<std::uint16_t>(b, 8, 4);
  const std::string e = error_for(b);
  EXPECT_NE(e.find("newer"), std::string::npos) << e;
  EXPECT_NE(e.find("format 4."), std::string::npos) << e;
  poke<std::uint16_t>(b, 8, 0);
  EXPECT_NE(error_for(b).find("version 0"), std::string::npos);
  // A newer minor version of the same major is read (its extra sections would be skipped).
  b = good_;
  poke<std::uint16_t>(b, 10, 7);
  reseal(b);
  put_bytes(bad_, b);
  EXPECT_NO_THROW(Reader{bad_});
}

TEST_F(DamagedTrajectory, EveryHeaderByteIsCovered) {
  // Bytes 88–95 included (format 1 covered them by nothing).
  for (std::size_t offset = 0; offset < 96; ++offset) {
    std::string b = good_;
    b[offset] = static_cast<char>(b[offset] ^ 0x10);
    const std::string e = error_for(b);
    EXPECT_FALSE(e.empty()) << offset;
    if (offset >= 14) {
      EXPECT_NE(e.find("header is corrupt"), std::string::npos) << offset << ": " << e;
    }
  }
}

TEST_F(DamagedTrajectory, EveryCompletionRecordByteIsCovered) {
  for (std::size_t offset = 96; offset < 144; ++offset) {
    std::string b = good_;
    b[offset] = static_cast<char>(b[offset] ^ 0x04);
    const std::string e = error_for(b);
    EXPECT_NE(e.find("completion record"), std::string::npos) << offset << ": " << e;
    EXPECT_NE(e.find("byte 96"), std::string::npos) << e;
  }
}

TEST_F(DamagedTrajectory, AnErasedCompletionRecordIsAnIncompleteRun) {
  std::string b = good_;
  std::memset(b.data() + 96, 0, 48);
  const std::string e = error_for(b);
  EXPECT_NE(e.find("is incomplete (still being written, or killed at frame 150)"), std::string::npos) << e;
  EXPECT_EQ(reuse_problem(bad_), "is incomplete (still being written, or killed at frame 150)");
  // Read as a partial run: the whole blocks (the short last one is not whole).
  const Reader r(bad_, Open::partial);
  EXPECT_FALSE(r.complete());
  EXPECT_EQ(r.frame_count(), 128U);
  EXPECT_EQ(r.frame(127).time_s, Reader(path_).frame(127).time_s);
}

TEST_F(DamagedTrajectory, AFlippedFrameByteIsALocatedChecksumError) {
  std::string b = good_;
  const std::size_t at = frame_at(70) + 8 * 5 + 3;  // inside frame 70's positions
  b[at] = static_cast<char>(b[at] ^ 1);
  put_bytes(bad_, b);
  const Reader r(bad_);  // opening reads no frame: it succeeds
  EXPECT_NO_THROW((void)r.frame(10));
  const std::string block1 = "block 1, frames 64–127, bytes " + std::to_string(frame_at(64)) + "–" +
                             std::to_string(frame_at(64) + 64 * stride() - 1);
  for (int attempt = 0; attempt < 2; ++attempt) {  // a bad block stays bad
    const std::string e = error_of(bad_, [&] { (void)r.frame(100); });
    EXPECT_NE(e.find(block1), std::string::npos) << e;
    EXPECT_NE(e.find("fails its checksum"), std::string::npos) << e;
  }
  EXPECT_FALSE(error_of(bad_, [&] { (void)r.frame_time(64); }).empty());
  EXPECT_FALSE(error_of(bad_, [&] { r.verify_all(); }).empty());
  EXPECT_NO_THROW((void)r.frame(130));
  EXPECT_EQ(reuse_problem(bad_), "fails its checksum in " + block1);
}

TEST_F(DamagedTrajectory, AFlippedSectionOrFooterByteIsAnError) {
  std::string b = good_;
  b[150] = static_cast<char>(b[150] ^ 4);
  EXPECT_NE(error_for(b).find("sections are corrupt"), std::string::npos);
  for (std::size_t footer : {frame_at(64) - 48, frame_at(128) - 48, good_.size() - 48}) {
    for (std::size_t i = 0; i < 48; i += 5) {
      b = good_;
      b[footer + i] = static_cast<char>(b[footer + i] ^ 2);
      const std::string e = error_for(b);
      EXPECT_NE(e.find("footer"), std::string::npos) << footer + i << ": " << e;
    }
  }
}

TEST_F(DamagedTrajectory, TruncatedAnywhere) {
  for (std::size_t cut = 0; cut < good_.size(); cut += 61) {
    const std::string e = error_for(good_.substr(0, cut));
    EXPECT_FALSE(e.empty()) << cut;
    if (HasFailure()) return;
  }
  const std::string e = error_for(good_.substr(0, good_.size() - 1));
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  EXPECT_NE(reuse_problem(bad_).find("cannot be read (truncated"), std::string::npos) << reuse_problem(bad_);
  EXPECT_NE(error_for(good_ + "extra").find("extended"), std::string::npos);
}

TEST_F(DamagedTrajectory, ZeroFrames) {
  {
    Writer w(bad_, sample_meta(3, {}));
    w.commit();
  }
  EXPECT_NE(open_error(bad_).find("no frames"), std::string::npos);
}

TEST_F(DamagedTrajectory, FrameTimesMustIncrease) {
  auto frames = random_frames(150, 3, 0, 6);
  frames[70].t = frames[69].t;  // inside a block: found when the block is read
  write_file(bad_, sample_meta(3, {}), frames);
  std::string e = open_error(bad_);
  EXPECT_NE(e.find("frame 70, byte"), std::string::npos) << e;
  EXPECT_NE(e.find("frame times that do not increase"), std::string::npos) << e;
  frames = random_frames(150, 3, 0, 6);
  frames[64].t = frames[63].t;  // across blocks: found in the index on open
  write_file(bad_, sample_meta(3, {}), frames);
  e = error_of(bad_, [&] { Reader r(bad_); });
  EXPECT_NE(e.find("block 1 footer"), std::string::npos) << e;
  frames = random_frames(4, 3, 0, 6);
  frames[0].t = std::nan("");
  write_file(bad_, sample_meta(3, {}), frames);
  EXPECT_NE(open_error(bad_).find("block 0"), std::string::npos);
}

TEST_F(DamagedTrajectory, NonFiniteOrOutOfRangeValuesAreRefusedWithFrameAndBody) {
  const std::vector<std::string> stats{stat::kLoad, stat::kMass, stat::kBusy};
  struct Case {
    const char* what;
    std::function<void(Frame&)> damage;
    std::size_t value_index;  ///< index of the damaged double in frame 100 of body 2
    const char* message;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const Case cases[] = {
      {"nan velocity", [&](Frame& f) { f.vel(1, 2) = nan; }, 1 + 9 + 6 + 1, "non-finite velocity (nan)"},
      {"inf position", [&](Frame& f) { f.pos(0, 2) = -inf; }, 1 + 6, "non-finite position (-inf)"},
      {"negative mass", [&](Frame& f) { f.stats(1, 2) = -1; }, 1 + 18 + 6 + 1, "statistic 'mass' = -1, not a finite value ≥ 0"},
      // busy may pass 1 (summed over a grouped body's members), not go below 0.
      {"negative busy", [&](Frame& f) { f.stats(2, 2) = -0.5; }, 1 + 18 + 6 + 2, "statistic 'busy' = -0.5, not a finite value ≥ 0"},
      {"nan load", [&](Frame& f) { f.stats(0, 2) = nan; }, 1 + 18 + 6, "statistic 'load' = nan, not finite"},
  };
  for (const Case& c : cases) {
    auto frames = random_frames(150, 3, stats.size(), 8);
    for (auto& f : frames) f.stats.row(2) = f.stats.row(2).cwiseMin(1.0);
    c.damage(frames[100]);
    write_file(bad_, sample_meta(3, stats), frames);
    const Reader r(bad_);
    EXPECT_NO_THROW((void)r.frame(50)) << c.what;
    const std::uint64_t stride_bytes = peek<std::uint64_t>(bytes_of(bad_), 40);
    const std::uint64_t offset = peek<std::uint64_t>(bytes_of(bad_), 32) + (64 * stride_bytes + 48) + 36 * stride_bytes;
    const std::string e = error_of(bad_, [&] { (void)r.frame(110); });
    EXPECT_NE(e.find("frame 100, body 2, byte " + std::to_string(offset + 8 * c.value_index)), std::string::npos)
        << c.what << ": " << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << c.what << ": " << e;
  }
}

TEST_F(DamagedTrajectory, MissingFileAndDirectory) {
  EXPECT_NE(open_error(dir_ / "missing.kntj").find("cannot open"), std::string::npos);
  EXPECT_NE(open_error(dir_.path()).find("not a regular file"), std::string::npos);
}

TEST_F(DamagedTrajectory, ResealedTamperingIsStillCaught) {
  // Header fields changed and every hash recomputed: the structure checks must hold alone.
  struct Case {
    const char* what;
    std::size_t offset;
    std::uint64_t value;
    int bytes;
  };
  const Case cases[] = {
      {"body_count + 1", 16, 4, 4},
      {"body_count huge", 16, 0xFFFFFFFFU, 4},
      {"stat_count huge", 20, 0xFFFFFFFFU, 4},
      {"block_frames 0", 24, 0, 4},
      {"block_frames 63", 24, 63, 4},
      {"block_frames huge", 24, 0xFFFFFFFFU, 4},
      {"section_count 0", 28, 0, 4},
      {"section_count huge", 28, 0xFFFFFFFFU, 4},
      {"frames_offset odd", 32, 145, 8},
      {"frames_offset past the end", 32, 1U << 30U, 8},
      {"frames_offset into the header", 32, 8, 8},
      {"stride 0", 40, 0, 8},
      {"stride huge", 40, ~std::uint64_t{0}, 8},
      {"dt 0", 56, 0, 8},
      {"steps_per_frame 0", 64, 0, 4},
      {"little_endian 0", 12, 0, 1},
      {"double_bytes 4", 13, 4, 1},
      {"frame_count + 1", 104, 151, 8},
      {"frame_count - 1", 104, 149, 8},
      {"frame_count huge", 104, ~std::uint64_t{0}, 8},
  };
  for (const Case& c : cases) {
    std::string b = good_;
    if (c.bytes == 1) poke<std::uint8_t>(b, c.offset, static_cast<std::uint8_t>(c.value));
    if (c.bytes == 4) poke<std::uint32_t>(b, c.offset, static_cast<std::uint32_t>(c.value));
    if (c.bytes == 8) poke<std::uint64_t>(b, c.offset, c.value);
    reseal(b);
    EXPECT_FALSE(error_for(b).empty()) << c.what;
  }
  // A frame changed and its block resealed: the footer's times no longer match the frames.
  std::string b = good_;
  poke<double>(b, frame_at(64), peek<double>(b, frame_at(64)) + 1e-3);
  reseal(b);
  EXPECT_NE(error_for(b).find("times do not match"), std::string::npos);
}

TEST_F(DamagedTrajectory, CountsThatOverflowTheStrideAreRefused) {
  // body_count = 2^31 and stat_count = 2^30 − 6 make 8 (1 + 6N + S·N) wrap around to 8, the
  // stride of a file without bodies: a reader that trusts the arithmetic then allocates 2^31
  // bodies or maps 2^33 doubles per frame.
  test::TempDir dir;
  write_file(dir / "empty.kntj", sample_meta(0, {}), random_frames(3, 0, 0, 7));
  std::string b = bytes_of(dir / "empty.kntj");
  ASSERT_EQ(peek<std::uint64_t>(b, 40), 8U);
  poke<std::uint32_t>(b, 16, 1U << 31U);
  poke<std::uint32_t>(b, 20, (1U << 30U) - 6U);
  reseal(b);
  const std::string e = error_for(b);
  EXPECT_NE(e.find("header"), std::string::npos) << e;
  // Huge stat count with no bodies keeps the stride at 8: the stats section must bound it.
  b = bytes_of(dir / "empty.kntj");
  poke<std::uint32_t>(b, 20, 0xFFFFFFFFU);
  reseal(b);
  EXPECT_FALSE(error_for(b).empty());
}

TEST_F(DamagedTrajectory, TrafficNamingAMissingBodyOrMisorderedIsRefused) {
  const std::size_t at = section_data(good_, "traffic");
  ASSERT_NE(at, std::string::npos);
  // Layout: intervals u64, pairs u64, (intervals + 1) u64 offsets, then 24-byte records.
  const auto intervals = static_cast<std::size_t>(peek<std::uint64_t>(good_, at));
  const std::size_t records = at + 16 + 8 * (intervals + 1);
  std::string b = good_;
  poke<std::uint32_t>(b, records + 4, 3U);  // dst of the first pair: body 3 of 3
  reseal(b);
  std::string e = error_for(b);
  EXPECT_NE(e.find("section 'traffic'"), std::string::npos) << e;
  EXPECT_NE(e.find("pair record 0 names a missing body"), std::string::npos) << e;
  b = good_;
  poke<double>(b, records + 8, -1.0);  // negative bytes
  reseal(b);
  EXPECT_NE(error_for(b).find("negative or non-finite"), std::string::npos);
  // The last record: its messages not a number, its bytes infinite.
  const auto pairs = static_cast<std::size_t>(peek<std::uint64_t>(good_, at + 8));
  ASSERT_GE(pairs, 2U);
  for (const std::size_t field : {std::size_t{16}, std::size_t{8}}) {
    b = good_;
    poke<double>(b, records + 24 * (pairs - 1) + field,
                 field == 16 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity());
    reseal(b);
    e = error_for(b);
    EXPECT_NE(e.find("pair record " + std::to_string(pairs - 1) + " has a negative or non-finite amount"),
              std::string::npos) << e;
  }
  b = good_;
  poke<std::uint64_t>(b, at + 16 + 8, 3U);  // offsets 0, 3, 2, 3: not increasing
  reseal(b);
  EXPECT_NE(error_for(b).find("offsets are not increasing"), std::string::npos);
  b = good_;
  poke<std::uint64_t>(b, at + 8, ~std::uint64_t{0});  // a pair count beyond the section
  reseal(b);
  EXPECT_NE(error_for(b).find("counts exceed the section"), std::string::npos);
}

TEST(Trajectory, FilesWithoutTrafficReadAsNoTraffic) {
  // Format 1.0 files have no traffic section; nor does a run without intervals.
  test::TempDir dir;
  Metadata meta = sample_meta(3, {stat::kLoad});
  meta.traffic.clear();
  meta.traffic_begin.clear();
  write_file(dir / "a.kntj", meta, random_frames(2, 3, 1, 9));
  const Reader r(dir / "a.kntj");
  EXPECT_EQ(r.meta().traffic_intervals(), 0U);
  EXPECT_TRUE(r.meta().traffic_in(0).empty());
}

TEST_F(DamagedTrajectory, SectionsLyingAboutTheirSize) {
  // The first section's size field, made huge, resealed.
  std::string b = good_;
  poke<std::uint64_t>(b, 144 + 16, ~std::uint64_t{0} - 3);
  reseal(b);
  EXPECT_NE(error_for(b).find("section"), std::string::npos);
  // A string length inside 'bodies' made huge.
  b = good_;
  poke<std::uint32_t>(b, section_data(b, "bodies"), 0x7FFFFFFFU);
  reseal(b);
  EXPECT_NE(error_for(b).find("section 'bodies'"), std::string::npos);
}

/// Damages `good` at random (bytes, header words, inserted runs, cuts), reseals half of the
/// results, and checks that each opens and reads (complete or partial) or is an InputError.
void mutation_fuzz(const std::string& good, const std::filesystem::path& bad, std::uint64_t seed, int min_refused,
                   int min_opened) {
  std::mt19937_64 rng(seed);
  int opened = 0, refused = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::string b = good;
    const int ops = 1 + static_cast<int>(rng() % 3);
    for (int op = 0; op < ops; ++op) {
      const std::size_t pos = rng() % (b.size() + 1);
      switch (rng() % 5) {
        case 0:
        case 1:
          if (pos < b.size()) b[pos] = static_cast<char>(rng() % 256);
          break;
        case 2:  // a header or completion record word
          if (b.size() >= 144) poke<std::uint32_t>(b, 4 * (rng() % 36), static_cast<std::uint32_t>(rng() >> (rng() % 32)));
          break;
        case 3:
          b.insert(pos, std::string(1 + rng() % 16, static_cast<char>(rng() % 256)));
          break;
        default:
          b.resize(pos);
      }
    }
    if (rng() % 2 == 0) reseal(b);
    put_bytes(bad, b);
    try {
      const Reader r(bad, rng() % 2 == 0 ? Open::complete : Open::partial);
      double sum = 0;
      for (std::size_t k = 0; k < r.frame_count(); ++k) {
        const FrameView f = r.frame(k);
        sum += f.positions.sum() + f.velocities.sum() + f.stats.sum();
      }
      if (r.frame_count() > 0) {
        Eigen::Matrix3Xd p;
        r.positions_at(0.5 * (r.begin_time() + r.end_time()), p);
      }
      (void)sum;
      ++opened;
    } catch (const InputError&) {
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << iter << ": non-InputError " << e.what();
      return;
    }
  }
  EXPECT_GT(refused, min_refused);
  EXPECT_GT(opened, min_opened);
}

TEST_F(DamagedTrajectory, MutationFuzz) { mutation_fuzz(good_, bad_, 77, 700, 50); }

TEST(Format1Files, MutationFuzz) {
  test::TempDir dir;
  mutation_fuzz(bytes_of(test::source_dir() / "tests/trajectory/data/format1.kntj"), dir / "bad.kntj", 78, 700, 50);
}

// ------------------------------------------------------------------------------------------------
// Format 1 files (written by earlier versions; tests/trajectory/data/format1.kntj)
// ------------------------------------------------------------------------------------------------

/// A fixture written by an earlier format (tests/trajectory/data/NAME) as good_.
class LegacyFile : public TrajectoryFileTest {
 protected:
  explicit LegacyFile(const char* name) : fixture_(test::source_dir() / "tests/trajectory/data" / name) {}
  void SetUp() override { good_ = bytes_of(fixture_); }
  std::filesystem::path fixture_;
};

/// What both fixtures' generators wrote: 3 bodies (rank2 on node1), 2 springs, the statistics
/// load, mass and busy, input hash 0x1122334455667788, 2 steps a frame, and `frames` frames, frame
/// k at t = 0.02 k with body i at (cos(i + t), sin(i + t), 0.1 i), velocity y cos(i + t) and mass
/// 1 + i. Reading every frame checks every block.
void expect_generated_contents(const Reader& r, const std::filesystem::path& path, std::size_t frames) {
  EXPECT_TRUE(r.complete());
  ASSERT_EQ(r.frame_count(), frames);
  ASSERT_EQ(r.meta().body_count(), 3U);
  EXPECT_EQ(r.meta().bodies[2].name, "rank2");
  EXPECT_EQ(r.meta().bodies[2].host, "node1");
  EXPECT_EQ(r.meta().edges.size(), 2U);
  EXPECT_EQ(r.meta().stat_names, (std::vector<std::string>{"load", "mass", "busy"}));
  EXPECT_EQ(r.meta().input_hash, 0x1122334455667788ULL);
  EXPECT_EQ(r.meta().steps_per_frame, 2U);
  for (std::size_t k = 0; k < frames; ++k) {
    const FrameView f = r.frame(k);
    const double t = 0.02 * static_cast<double>(k);
    EXPECT_EQ(f.time_s, t);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(f.positions(0, i), std::cos(i + t));
      EXPECT_EQ(f.velocities(1, i), std::cos(i + t));
      EXPECT_EQ(f.stats(1, i), 1.0 + i);
    }
  }
  EXPECT_EQ(r.frames_verified(), frames);
  std::uint64_t h = 0;
  EXPECT_TRUE(read_input_hash(path, h));
  EXPECT_EQ(h, 0x1122334455667788ULL);
  EXPECT_EQ(reuse_problem(path), "");
}

class Format1 : public LegacyFile {
 protected:
  Format1() : LegacyFile("format1.kntj") {}
};

TEST_F(Format1, OpensAndReadsEverything) {
  const Reader r(fixture_);
  EXPECT_EQ(r.version(), 1U);
  EXPECT_EQ(r.frames_verified(), 10U) << "format 1 is checked whole on open";
  EXPECT_EQ(r.meta().dt_s, 0.01);
  EXPECT_EQ(r.meta().mapping_text, "[simulation]\ninterval = 0.1\n");
  EXPECT_EQ(r.meta().planned_frames, 0U);
  ASSERT_EQ(r.meta().traffic_in(0).size(), 2U);
  EXPECT_EQ(r.meta().traffic_in(0)[1].bytes, 64.0);
  expect_generated_contents(r, fixture_, 10);
  EXPECT_EQ(r.frame_at_or_before(0.05), 2U);
}

TEST_F(Format1, DamageIsCaughtOnOpen) {
  std::string b = good_;
  const auto frames_offset = static_cast<std::size_t>(peek<std::uint64_t>(good_, 32));
  b[frames_offset + 8 * 17 + 3] = static_cast<char>(b[frames_offset + 8 * 17 + 3] ^ 1);
  EXPECT_NE(error_for(b).find("checksum mismatch"), std::string::npos);
  b = good_;
  b[20] = static_cast<char>(b[20] ^ 1);
  EXPECT_NE(error_for(b).find("header is corrupt"), std::string::npos);
  EXPECT_NE(error_for(good_.substr(0, good_.size() - 1)).find("truncated"), std::string::npos);
  b = good_;
  b[b.size() - 3] = 'x';
  EXPECT_NE(error_for(b).find("end marker"), std::string::npos);
  // A NaN resealed into a frame: refused with its frame and body.
  b = good_;
  const auto stride = static_cast<std::size_t>(peek<std::uint64_t>(good_, 40));
  poke<double>(b, frames_offset + 4 * stride + 8 * (1 + 9 + 3 * 1), std::numeric_limits<double>::quiet_NaN());
  reseal(b);
  const std::string e = error_for(b);
  EXPECT_NE(e.find("frame 4, body 1"), std::string::npos) << e;
  EXPECT_NE(e.find("non-finite velocity"), std::string::npos) << e;
}

// ------------------------------------------------------------------------------------------------
// Format 2 files (FNV-1a checksums, written before format 3; tests/trajectory/data/format2.kntj:
// 3 bodies, 70 frames in blocks of 64 and 6, written by the format 2 writer)
// ------------------------------------------------------------------------------------------------

class Format2 : public LegacyFile {
 protected:
  Format2() : LegacyFile("format2.kntj") {}
};

TEST_F(Format2, OpensAndReadsEverything) {
  const Reader r(fixture_);
  EXPECT_EQ(r.version(), 2U);
  EXPECT_EQ(r.frames_verified(), 0U) << "format 2 checks a block when it is first read";
  EXPECT_EQ(r.meta().planned_frames, 70U);
  ASSERT_EQ(r.meta().traffic_in(1).size(), 1U);
  EXPECT_EQ(r.meta().traffic_in(1)[0].bytes, 16.0);
  expect_generated_contents(r, fixture_, 70);
  EXPECT_EQ(r.frame(69).stats(2, 1), 0.02 * 69) << "busy: the frame's time";
}

TEST_F(Format2, ItsChecksumsAreFnv1aAndDamageIsLocated) {
  // A flipped bit in frame 65 (block 1): found by block 1's FNV-1a checksum, not on open.
  std::string b = good_;
  const auto frames_offset = static_cast<std::size_t>(peek<std::uint64_t>(good_, 32));
  const auto stride = static_cast<std::size_t>(peek<std::uint64_t>(good_, 40));
  const std::size_t at = frames_offset + 64 * stride + 48 + stride + 8 * 2 + 5;
  b[at] = static_cast<char>(b[at] ^ 1);
  std::string e = error_for(b);
  EXPECT_NE(e.find("block 1, frames 64–69"), std::string::npos) << e;
  EXPECT_NE(e.find("fails its checksum"), std::string::npos) << e;
  // Resealed with FNV-1a the file is whole again (with XXH3-64 it would not be).
  reseal(b);
  put_bytes(bad_, b);
  EXPECT_NO_THROW(Reader(bad_).verify_all());
  b = good_;
  b[20] = static_cast<char>(b[20] ^ 1);
  EXPECT_NE(error_for(b).find("header is corrupt"), std::string::npos);
}

TEST_F(Format2, MutationFuzz) { mutation_fuzz(good_, bad_, 79, 700, 50); }

// ------------------------------------------------------------------------------------------------
// Appending and following a run being written
// ------------------------------------------------------------------------------------------------

TEST(TrajectoryLive, AReaderFollowsTheTemporaryFileBlockByBlock) {
  test::TempDir dir;
  Metadata meta = sample_meta(2, {stat::kLoad});
  meta.planned_frames = 200;
  const auto frames = random_frames(200, 2, 1, 20);
  Writer w(dir / "run.kntj", meta);
  Reader live(w.temporary_path(), Open::partial);
  EXPECT_FALSE(live.complete());
  EXPECT_EQ(live.frame_count(), 0U);
  EXPECT_EQ(live.meta().planned_frames, 200U);
  EXPECT_FALSE(error_of(w.temporary_path(), [&] { Reader r(w.temporary_path()); }).empty());
  for (std::size_t k = 0; k < 150; ++k) {
    w.append_frame(frames[k].t, frames[k].pos, frames[k].vel, frames[k].stats);
    // A block appears whole, when its last frame is written, and not before.
    EXPECT_EQ(live.refresh(), (k + 1) / 64 * 64) << k;
  }
  EXPECT_EQ(live.frame(127).time_s, frames[127].t);
  EXPECT_EQ(reuse_problem(w.temporary_path()), "is incomplete (still being written, or killed at frame 128 of 200)")
      << "the frames after the last whole block are still in the writer's buffer";
  for (std::size_t k = 150; k < 200; ++k) w.append_frame(frames[k].t, frames[k].pos, frames[k].vel, frames[k].stats);
  w.commit();
  EXPECT_EQ(live.refresh(), 200U) << "the renamed file is the same file";
  EXPECT_TRUE(live.complete());
  EXPECT_EQ(live.frame(199).time_s, frames[199].t);
  live.verify_all();
  EXPECT_EQ(bytes_of(dir / "run.kntj").substr(96, 8), "KNTJDONE");
}

TEST(TrajectoryLive, AKilledRunSaysHowFarItGot) {
  test::TempDir dir;
  Metadata meta = sample_meta(2, {stat::kLoad});
  meta.planned_frames = 2000;
  const auto frames = random_frames(812, 2, 1, 21);
  std::string snapshot;
  {
    Writer w(dir / "run.kntj", meta);
    for (const Frame& f : frames) w.append_frame(f.t, f.pos, f.vel, f.stats);
    snapshot = bytes_of(w.temporary_path());  // what a killed process leaves
  }
  EXPECT_TRUE(test::list_dir(dir.path()).empty()) << "an uncommitted writer removes its file";
  const auto stride = 8 * (1 + 12 + 2);
  // 12 whole blocks (768 frames); the last 44 frames partly flushed: cut after 20 of them.
  snapshot.resize(static_cast<std::size_t>(peek<std::uint64_t>(snapshot, 32)) + 12 * (64 * stride + 48) + 20 * stride + 5);
  put_bytes(dir / "killed.kntj", snapshot);
  const std::string e = open_error(dir / "killed.kntj");
  EXPECT_NE(e.find("is incomplete (still being written, or killed at frame 788 of 2000)"), std::string::npos) << e;
  EXPECT_EQ(reuse_problem(dir / "killed.kntj"), "is incomplete (still being written, or killed at frame 788 of 2000)");
  const Reader r(dir / "killed.kntj", Open::partial);
  EXPECT_EQ(r.frame_count(), 768U);
  EXPECT_EQ(r.frame(767).time_s, frames[767].t);
  EXPECT_EQ(r.end_time(), frames[767].t);
}

// ------------------------------------------------------------------------------------------------
// Cache key and atomic writing
// ------------------------------------------------------------------------------------------------

TEST(TrajectoryInputHash, ReadsTheHashOrSaysNo) {
  test::TempDir dir;
  write_file(dir / "a.kntj", sample_meta(2, {}), random_frames(3, 2, 0, 8));
  std::uint64_t h = 0;
  EXPECT_TRUE(read_input_hash(dir / "a.kntj", h));
  EXPECT_EQ(h, 0x0123456789abcdefULL);
  h = 42;
  EXPECT_FALSE(read_input_hash(dir / "missing.kntj", h));
  EXPECT_EQ(h, 42U);  // untouched
  EXPECT_FALSE(read_input_hash(dir.path(), h));
  std::string b = bytes_of(dir / "a.kntj");
  put_bytes(dir / "short.kntj", b.substr(0, 60));
  EXPECT_FALSE(read_input_hash(dir / "short.kntj", h));
  std::string newer = b;
  poke<std::uint16_t>(newer, 8, 9);
  put_bytes(dir / "newer.kntj", newer);
  EXPECT_FALSE(read_input_hash(dir / "newer.kntj", h));
  std::string flipped = b;
  flipped[90] = static_cast<char>(flipped[90] ^ 1);
  put_bytes(dir / "flipped.kntj", flipped);
  EXPECT_FALSE(read_input_hash(dir / "flipped.kntj", h));
  put_bytes(dir / "empty.kntj", "");
  EXPECT_FALSE(read_input_hash(dir / "empty.kntj", h));
  EXPECT_EQ(h, 42U);
}

TEST(TrajectoryWriter, UncommittedWriterLeavesNothing) {
  test::TempDir dir;
  {
    Writer w(dir / "a.kntj", sample_meta(2, {}));
    const auto f = random_frames(3, 2, 0, 9);
    for (const auto& fr : f) w.append_frame(fr.t, fr.pos, fr.vel, fr.stats);
    EXPECT_EQ(test::list_dir(dir.path()).size(), 1U);  // the temporary file
    EXPECT_NE(test::list_dir(dir.path())[0].find("a.kntj.tmp-"), std::string::npos);
    EXPECT_EQ(w.temporary_path().filename().string(), test::list_dir(dir.path())[0]);
  }
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

TEST(TrajectoryWriter, CommitLeavesOnlyTheFile) {
  test::TempDir dir;
  write_file(dir / "a.kntj", sample_meta(2, {}), random_frames(3, 2, 0, 10));
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"a.kntj"}));
}

TEST(TrajectoryWriter, AnUncommittedRewriteKeepsThePreviousFile) {
  test::TempDir dir;
  write_file(dir / "a.kntj", sample_meta(2, {}), random_frames(3, 2, 0, 11));
  const std::string before = bytes_of(dir / "a.kntj");
  {
    Writer w(dir / "a.kntj", sample_meta(4, {}));
    const auto f = random_frames(2, 4, 0, 12);
    w.append_frame(f[0].t, f[0].pos, f[0].vel, f[0].stats);
  }
  EXPECT_EQ(bytes_of(dir / "a.kntj"), before);
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"a.kntj"}));
  // A committed rewrite replaces it.
  write_file(dir / "a.kntj", sample_meta(4, {}), random_frames(2, 4, 0, 12));
  EXPECT_EQ(Reader(dir / "a.kntj").meta().body_count(), 4U);
}

TEST(TrajectoryWriter, UnwritableFolderIsAnInputError) {
  EXPECT_THROW(Writer("/nonexistent-folder/x/a.kntj", sample_meta(1, {})), InputError);
}

TEST(TrajectoryWriter, BlocksShrinkForLargeFrames) {
  // 4 000 bodies: 8 (1 + 6 · 4 000) = 192 008 bytes a frame; blocks stay under 1 MiB (5 frames),
  // so that a watched run's first block is written soon.
  test::TempDir dir;
  Metadata meta = sample_meta(4000, {});
  meta.edges.clear();
  meta.traffic.clear();
  meta.traffic_begin.clear();
  const Eigen::Matrix3Xd zero = Eigen::Matrix3Xd::Zero(3, 4000);
  {
    Writer w(dir / "big.kntj", meta);
    for (int k = 0; k < 11; ++k) w.append_frame(k, zero, zero, Eigen::MatrixXd(0, 4000));
    w.commit();
  }
  const std::string head = bytes_of(dir / "big.kntj").substr(0, 96);
  EXPECT_EQ(peek<std::uint32_t>(head, 24), 5U);
  const Reader r(dir / "big.kntj");
  EXPECT_EQ(r.frame_count(), 11U);
  EXPECT_EQ(r.frame(10).time_s, 10.0);
  EXPECT_EQ(r.frames_verified(), 1U) << "the last block holds one frame";
}

TEST(TrajectoryReader, MovedReaderStillWorks) {
  test::TempDir dir;
  const auto frames = random_frames(3, 2, 0, 13);
  write_file(dir / "a.kntj", sample_meta(2, {}), frames);
  Reader a(dir / "a.kntj");
  Reader b = std::move(a);
  EXPECT_EQ(b.frame_count(), 3U);
  EXPECT_EQ(b.frame(2).time_s, frames[2].t);
}

// ------------------------------------------------------------------------------------------------
// Section `groups` (2.1): the trace's containers above the hosts
// ------------------------------------------------------------------------------------------------

/// Four bodies: pe0, pe1 under zone "ca" in zone "room-a"; pe2 under "cb" in "room-a"; pe3 none.
Metadata grouped_meta() {
  Metadata m = sample_meta(4, {stat::kLoad});
  m.bodies[0].above_host = {{"L2", "ca"}, {"L1", "room-a"}};
  m.bodies[1].above_host = {{"L2", "ca"}, {"L1", "room-a"}};
  m.bodies[2].above_host = {{"L2", "cb"}, {"L1", "room-a"}};
  return m;
}

TEST(Trajectory, GroupsRoundTrip) {
  test::TempDir dir;
  const Metadata meta = grouped_meta();
  write_file(dir / "g.kntj", meta, random_frames(3, 4, 1, 11));
  const Reader r(dir / "g.kntj");
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(r.meta().bodies[i].above_host, meta.bodies[i].above_host) << "body " << i;
  const std::string b = bytes_of(dir / "g.kntj");
  EXPECT_EQ(peek<std::uint16_t>(b, 10), 1U) << "format 2.1";
  const std::size_t at = section_data(b, "groups");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(peek<std::uint32_t>(b, at), 3U) << "room-a, ca, cb: each container once";
}

TEST(Trajectory, FilesWithoutGroupsReadAsNoContainers) {
  // A run whose trace has no container above its hosts writes no section (and a 2.0 file has none).
  test::TempDir dir;
  write_file(dir / "a.kntj", sample_meta(3, {stat::kLoad}), random_frames(2, 3, 1, 9));
  const std::string b = bytes_of(dir / "a.kntj");
  EXPECT_EQ(section_data(b, "groups"), std::string::npos);
  const Reader r(dir / "a.kntj");
  for (const BodyInfo& body : r.meta().bodies) EXPECT_TRUE(body.above_host.empty());
  const Reader old(test::source_dir() / "tests/trajectory/data/format1.kntj");
  for (const BodyInfo& body : old.meta().bodies) EXPECT_TRUE(body.above_host.empty());
}

class DamagedGroups : public TrajectoryFileTest {
 protected:
  void SetUp() override {
    write_file(dir_ / "good.kntj", grouped_meta(), random_frames(3, 4, 1, 12));
    good_ = bytes_of(dir_ / "good.kntj");
    at_ = section_data(good_, "groups");
  }
  std::size_t at_ = 0;
};

TEST_F(DamagedGroups, ABodyNamingAMissingContainerIsALocatedError) {
  ASSERT_NE(at_, std::string::npos);
  std::string b = good_;
  // The section ends with the four bodies' innermost containers (u32 each).
  const std::size_t bodies = at_ + static_cast<std::size_t>(peek<std::uint64_t>(good_, at_ - 8)) - 16;
  ASSERT_EQ(peek<std::uint32_t>(b, bodies + 12), 0xFFFFFFFFU) << "pe3 has no container";
  poke<std::uint32_t>(b, bodies + 4, 3U);  // pe1: container 3 of 3
  reseal(b);
  const std::string e = error_for(b);
  EXPECT_NE(e.find("section 'groups'"), std::string::npos) << e;
  EXPECT_NE(e.find("body 1 names container 3 of 3"), std::string::npos) << e;
}

TEST_F(DamagedGroups, AParentAfterItsChildIsAnError) {
  ASSERT_NE(at_, std::string::npos);
  std::string b = good_;
  // Container 0 (room-a): type "L1" (4 + 2 bytes), name "room-a" (4 + 6), then its parent.
  const std::size_t parent0 = at_ + 4 + 6 + 10;
  ASSERT_EQ(peek<std::uint32_t>(b, parent0), 0xFFFFFFFFU);
  poke<std::uint32_t>(b, parent0, 1U);  // a cycle: room-a inside ca
  reseal(b);
  const std::string e = error_for(b);
  EXPECT_NE(e.find("container 0 names a parent that does not come before it"), std::string::npos) << e;
}

}  // namespace
}  // namespace kanoko::trajectory
