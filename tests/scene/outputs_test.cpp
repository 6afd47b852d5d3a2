// Outputs never destroy, for `kanoko render`: a picture, a frame sequence or a video refuses to
// replace the run, a FIFO or a folder, appears whole or not at all (a frame sequence as a set),
// and a full disk (`ulimit -f`) is one line naming the file with nothing left behind.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

namespace fs = std::filesystem;
using test::TempDir;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// `needle` is said once on stderr, on a line that names `file`.
void expect_one_line(const test::CommandResult& r, const std::string& needle, const fs::path& file) {
  const std::size_t at = r.err.find(needle);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(needle, at + 1), std::string::npos) << "said twice: " << r.err;
  const std::size_t begin = r.err.rfind('\n', at) == std::string::npos ? 0 : r.err.rfind('\n', at) + 1;
  const std::string line = r.err.substr(begin, r.err.find('\n', at) - begin);
  EXPECT_TRUE(contains(line, file.filename().string())) << line;
}

// Four frames of the tiny run, 320x240 (each PNG is well over 1 KiB).
std::vector<std::string> sequence_args(const fs::path& run, const fs::path& pattern) {
  return {"render", run.string(), "-o", pattern.string(), "--size", "320x240",
          "--fps", "2", "--from", "4", "--to", "6", "--speed", "1"};
}

TEST(RenderOutputs, ThePictureRefusesTheRunAFifoAndAFolder) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  fs::create_hard_link(dir / "run.kntj", dir / "run.png");  // the run under an image's name
  ASSERT_EQ(::mkfifo((dir / "pipe.png").c_str(), 0600), 0);
  fs::create_directory(dir / "folder.png");
  const auto before = test::list_dir(dir.path());
  const std::string run_bytes = test::read_text(dir / "run.kntj");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run.png", "refusing to write: it is the input"},
      {"pipe.png", "refusing to write: it is a FIFO"},
      {"folder.png", "refusing to write: it is a folder"},
  };
  for (const auto& [name, message] : cases) {
    const auto r = test::run_kanoko({"render", (dir / "run.kntj").string(), "-o", (dir / name).string()});
    EXPECT_EQ(r.exit_code, 1) << name << ": " << r.err;
    expect_one_line(r, message, dir / name);
  }
  EXPECT_EQ(test::list_dir(dir.path()), before);
  EXPECT_EQ(test::read_text(dir / "run.kntj"), run_bytes);
}

TEST(RenderOutputs, AFrameSequenceAppearsAsASetOrNotAtAll) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  fs::create_directory(dir / "frames");
  test::write_text(dir / "frames" / "f000.png", "an earlier frame");
  fs::create_directory(dir / "frames" / "f002.png");  // the third frame cannot be written
  std::vector<std::string> args = sequence_args(dir / "run.kntj", dir / "frames" / "f%03d.png");
  args.insert(args.end(), {"--audio", (dir / "track.wav").string()});  // rendered before the frames
  const auto r = test::run_kanoko(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_line(r, "refusing to write: it is a folder", dir / "frames" / "f002.png");
  // The first two frames were written but not moved into place: the earlier frame is untouched,
  // and the sound track, written first, is gone with them.
  EXPECT_EQ(test::list_dir(dir / "frames"), (std::vector<std::string>{"f000.png", "f002.png"}));
  EXPECT_EQ(test::read_text(dir / "frames" / "f000.png"), "an earlier frame");
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"frames", "run.kntj"}));
}

TEST(RenderOutputs, AFullDiskFailsWithOneLineAndLeavesNothing) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  fs::create_directory(dir / "frames");
  const std::vector<std::string> before = {"frames", "run.kntj"};
  const auto png = test::run_kanoko_with_file_limit(2, {"render", (dir / "run.kntj").string(), "-o",
                                                         (dir / "shot.png").string()});
  EXPECT_EQ(png.exit_code, 1) << png.err;
  expect_one_line(png, "failed: File too large", dir / "shot.png");
  EXPECT_EQ(test::list_dir(dir.path()), before);

  const auto frames =
      test::run_kanoko_with_file_limit(2, sequence_args(dir / "run.kntj", dir / "frames" / "f%03d.png"));
  EXPECT_EQ(frames.exit_code, 1) << frames.err;
  expect_one_line(frames, "failed: File too large", dir / "frames" / "f000.png");
  EXPECT_TRUE(test::list_dir(dir / "frames").empty());

  // ffmpeg gets the same limit and says so; kanoko names the video and removes the temporary.
  const auto video = test::run_kanoko_with_file_limit(
      2, {"render", (dir / "run.kntj").string(), "-o", (dir / "run.mp4").string(), "--size", "320x240",
          "--fps", "10", "--speed", "1"});
  if (contains(video.err, "cannot run ffmpeg")) GTEST_SKIP() << "no ffmpeg";
  EXPECT_EQ(video.exit_code, 1) << video.err;
  expect_one_line(video, "failed: ffmpeg exited", dir / "run.mp4");
  EXPECT_TRUE(contains(video.err, "File too large")) << video.err;
  EXPECT_EQ(test::list_dir(dir.path()), before);
}

}  // namespace
}  // namespace kanoko::scene
