// Bad trajectories given to `kanoko view` and `kanoko render` (picture and video): a clear
// message and a non-zero exit, never a crash, and no output left behind.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace {

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

}  // namespace
}  // namespace kanoko::scene
