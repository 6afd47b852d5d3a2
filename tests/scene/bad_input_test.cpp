// Bad trajectories given to `kanoko view` and `kanoko render` (picture and video): a clear
// message and a non-zero exit, never a crash, and no output left behind.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <osg/Group>
#include <osgUtil/UpdateVisitor>

#include "src/base/error.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

std::vector<char> read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::filesystem::path& p, const std::vector<char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Each bad file, and the words its message must contain.
struct BadRun {
  const char* file;
  const char* message;
};

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_tiny_run(dir_ / "good.kntj");
    const std::vector<char> good = read_all(dir_ / "good.kntj");
    std::vector<char> newer = good;
    newer[8] = 9;  // version_major (u16, little-endian) at offset 8
    newer[9] = 0;
    write_all(dir_ / "newer.kntj", newer);
    write_all(dir_ / "truncated.kntj",
              std::vector<char>(good.begin(), good.begin() + static_cast<long>(good.size() / 2)));
    trajectory::Metadata empty;
    empty.dt_s = 0.1;
    empty.interval_s = 1.0;
    empty.trace_end_s = 1.0;
    empty.integrator = "rk4";
    bool written = true;
    try {
      trajectory::Writer w(dir_ / "empty.kntj", empty);
      w.append_frame(0.0, Eigen::Matrix3Xd(3, 0), Eigen::Matrix3Xd(3, 0), Eigen::MatrixXd(0, 0));
      w.commit();
    } catch (const std::exception&) {
      written = false;  // the writer refuses it: make one by hand below
    }
    if (!written) write_all(dir_ / "empty.kntj", std::vector<char>(good.begin(), good.begin() + 64));
    std::filesystem::remove(dir_ / "good.kntj");
  }
  static std::vector<BadRun> bad_runs() {
    return {{"newer.kntj", "newer"}, {"truncated.kntj", "truncated.kntj"},
            {"empty.kntj", "empty.kntj"}};
  }
  test::CommandResult run(std::vector<std::string> args) const {
    std::vector<std::string> argv{"env", "-u", "DISPLAY", test::kanoko_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_program(argv);
  }
  std::vector<std::string> listing() const { return test::list_dir(dir_.path()); }

  TempDir dir_;
};

TEST_F(BadInput, RenderPictureAndVideoSayWhatIsWrong) {
  const auto before = listing();
  for (const auto& bad : bad_runs()) {
    for (const char* out : {"out.png", "out.mp4", "f%03d.png"}) {
      const auto r = run({"render", (dir_ / bad.file).string(), "-o", (dir_ / out).string(),
                          "--size", "64x48"});
      EXPECT_EQ(r.exit_code, 1) << bad.file << " -> " << out << ": " << r.err;
      EXPECT_NE(r.err.find(bad.message), std::string::npos) << bad.file << ": " << r.err;
    }
  }
  EXPECT_EQ(listing(), before);
}

TEST_F(BadInput, ViewSaysWhatIsWrongBeforeNeedingADisplay) {
  for (const auto& bad : bad_runs()) {
    const auto r = run({"view", (dir_ / bad.file).string(), "--exit-after", "0"});
    EXPECT_EQ(r.exit_code, 1) << bad.file << ": " << r.err;
    EXPECT_NE(r.err.find(bad.message), std::string::npos) << bad.file << ": " << r.err;
  }
}

TEST(DamagedRun, PlaybackEndsBeforeTheDamagedFramesAndTheSessionGoesOn) {
  // 200 frames of three moving bodies (blocks of 64 frames), one byte flipped in a later block:
  // the viewer plays up to the last readable frame, says so in its status line and does not end.
  TempDir dir;
  trajectory::Metadata meta;
  for (const char* name : {"a", "b", "c"}) {
    trajectory::BodyInfo b;
    b.name = name;
    meta.bodies.push_back(b);
  }
  meta.dt_s = 0.1;
  meta.interval_s = 1.0;
  meta.trace_end_s = 19.9;
  meta.integrator = "rk4";
  {
    trajectory::Writer w(dir / "run.kntj", meta);
    for (int k = 0; k < 200; ++k) {
      Eigen::Matrix3Xd p = test::tiny_run_positions();
      p.row(0).array() += 0.01 * k;
      w.append_frame(0.1 * k, p, Eigen::Matrix3Xd::Constant(3, 3, 0.1), Eigen::MatrixXd(0, 3));
    }
    w.commit();
  }
  std::vector<char> bytes = read_all(dir / "run.kntj");
  bytes[bytes.size() * 3 / 4] ^= 0x5a;
  write_all(dir / "run.kntj", bytes);

  const trajectory::Reader run(dir / "run.kntj");
  std::size_t first_bad = 0;
  while (first_bad < run.frame_count() && run.frame_readable(first_bad)) ++first_bad;
  ASSERT_GT(first_bad, 1U);
  ASSERT_LT(first_bad, run.frame_count()) << "the flipped byte must damage a frame block";

  TrajectoryScene scene(run, 320, 240);
  ReplayClock clock(run.begin_time(), run.end_time(), 1.0);
  osg::ref_ptr<ReplayUpdateCallback> replay = new ReplayUpdateCallback(clock, scene);
  osgUtil::UpdateVisitor visitor;
  clock.seek(0.1 * static_cast<double>(first_bad) + 0.05);  // playing into the damaged block (frame k at 0.1 k s)
  EXPECT_NO_THROW((*replay)(scene.root(), &visitor));
  EXPECT_DOUBLE_EQ(clock.end_s(), run.frame_time(first_bad - 1));
  EXPECT_DOUBLE_EQ(scene.time_s(), run.frame_time(first_bad - 1));
  EXPECT_TRUE(clock.paused());
  clock.seek(run.begin_time());
  clock.play();
  clock.advance(1.0);
  EXPECT_NO_THROW((*replay)(scene.root(), &visitor)) << "earlier frames still play";
  EXPECT_DOUBLE_EQ(scene.time_s(), run.begin_time() + 1.0);
}

}  // namespace
}  // namespace kanoko::scene
