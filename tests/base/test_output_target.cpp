// Outputs never destroy: what AtomicOutputFile refuses to replace (FIFOs, devices, folders, the
// command's inputs), how it writes through a symbolic link, and a write past `ulimit -f`.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/output_target.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

namespace fs = std::filesystem;

// The message of the InputError that opening `target` throws ("" if it opens).
std::string refusal(const fs::path& target) {
  try {
    AtomicOutputFile f(target);
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).loc.file, target.string());
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class OutputTarget : public ::testing::Test {
 protected:
  void TearDown() override { forget_command_inputs(); }
  test::TempDir dir;
};

TEST_F(OutputTarget, ASymbolicLinkIsWrittenThroughAndStays) {
  test::write_text(dir / "real.txt", "old");
  fs::create_symlink("real.txt", dir / "link.txt");
  {
    AtomicOutputFile f(dir / "link.txt");
    EXPECT_EQ(f.target(), dir / "link.txt");
    EXPECT_EQ(f.destination(), fs::canonical(dir / "real.txt"));
    f.write("new");
    f.commit();
  }
  EXPECT_TRUE(fs::is_symlink(dir / "link.txt"));
  EXPECT_EQ(test::read_text(dir / "real.txt"), "new");
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"link.txt", "real.txt"}));
  // Through a link into another folder: the temporary sits beside the file it replaces.
  fs::create_directory(dir / "sub");
  test::write_text(dir / "sub" / "deep.txt", "old");
  fs::create_symlink("sub/deep.txt", dir / "deep-link.txt");
  write_file_atomically(dir / "deep-link.txt", "newer");
  EXPECT_TRUE(fs::is_symlink(dir / "deep-link.txt"));
  EXPECT_EQ(test::read_text(dir / "sub" / "deep.txt"), "newer");
  EXPECT_EQ(test::list_dir(dir / "sub"), (std::vector<std::string>{"deep.txt"}));
}

TEST_F(OutputTarget, ADanglingSymbolicLinkIsRefused) {
  fs::create_symlink("nowhere.txt", dir / "link.txt");
  const std::string why = refusal(dir / "link.txt");
  EXPECT_TRUE(contains(why, "refusing to write: it is a symbolic link to nowhere.txt, which leads to no file (No such file or directory)")) << why;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"link.txt"}));
}

TEST_F(OutputTarget, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  // Opening a FIFO for writing would block until a reader comes: the check must not open it.
  const std::string why = refusal(dir / "pipe");
  EXPECT_TRUE(contains(why, "pipe: error: refusing to write: it is a FIFO (named pipe)")) << why;
  EXPECT_THROW(write_file_atomically(dir / "pipe", "x"), InputError);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "pipe").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO is still there";
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"pipe"}));
}

TEST_F(OutputTarget, DevicesAreRefusedDirectlyAndThroughALink) {
  const std::string why = refusal("/dev/null");
  EXPECT_TRUE(contains(why, "/dev/null: error: refusing to write: it is a character device")) << why;
  fs::create_symlink("/dev/null", dir / "null-link");
  const std::string through = refusal(dir / "null-link");
  EXPECT_TRUE(contains(through, "it is a character device (through a symbolic link)")) << through;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"null-link"}));
}

TEST_F(OutputTarget, AFolderIsRefused) {
  fs::create_directory(dir / "occupied");
  test::write_text(dir / "occupied" / "keep", "x");
  const std::string why = refusal(dir / "occupied");
  EXPECT_TRUE(contains(why, "refusing to write: it is a folder")) << why;
  EXPECT_EQ(test::list_dir(dir / "occupied"), (std::vector<std::string>{"keep"}));
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"occupied"}));
}

TEST_F(OutputTarget, AnInputIsRefusedByAnyNameAndOthersAreNot) {
  test::write_text(dir / "in.txt", "input");
  test::write_text(dir / "other.txt", "other");
  EXPECT_EQ(refusal(dir / "in.txt"), "") << "not an input yet";
  note_command_input(dir / "in.txt");
  note_command_input(dir / "missing.txt");  // ignored: nothing to compare with
  const std::string why = refusal(dir / "in.txt");
  EXPECT_TRUE(contains(why, "refusing to write: it is an input of this command")) << why;
  fs::create_hard_link(dir / "in.txt", dir / "hard.txt");
  EXPECT_TRUE(contains(refusal(dir / "hard.txt"), "it is the input " + (dir / "in.txt").string() + " of this command"));
  fs::create_symlink("in.txt", dir / "soft.txt");
  EXPECT_TRUE(contains(refusal(dir / "soft.txt"), "of this command"));
  EXPECT_TRUE(contains(refusal(dir / "." / "in.txt"), "of this command"));
  EXPECT_EQ(refusal(dir / "other.txt"), "");
  EXPECT_EQ(test::read_text(dir / "in.txt"), "input");
  forget_command_inputs();
  EXPECT_EQ(refusal(dir / "in.txt"), "");
}

TEST_F(OutputTarget, CloseThenCommitMovesIntoPlace) {
  AtomicOutputFile f(dir / "out.bin");
  f.write("data");
  f.close();
  EXPECT_TRUE(fs::exists(f.temporary()));
  EXPECT_FALSE(fs::exists(dir / "out.bin"));
  f.commit();
  EXPECT_EQ(test::read_text(dir / "out.bin"), "data");
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"out.bin"}));
}

// In a child process (the limit must not reach the other tests): ignores SIGXFSZ as `kanoko`
// does, limits files to 4 KiB, writes 20 KB and reports on stderr what happened.
[[noreturn]] void write_past_the_file_size_limit(const fs::path& target) {
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit{};
  limit.rlim_cur = 4096;
  limit.rlim_max = 4096;
  ::setrlimit(RLIMIT_FSIZE, &limit);
  std::string message;
  try {
    AtomicOutputFile f(target);
    const std::string block(1000, 'x');
    for (int i = 0; i < 20; ++i) f.write(block);  // buffered: the error may show only at commit
    f.commit();
  } catch (const RunError& e) {
    message = e.what();
  }
  const bool clean = test::list_dir(target.parent_path()).empty();
  std::fprintf(stderr, "%s|%s\n", message.c_str(), clean ? "clean" : "left files");
  std::_Exit(message.empty() ? 2 : 0);
}

// Past RLIMIT_FSIZE (`ulimit -f`) a write fails with EFBIG: a RunError naming the file and the
// cause, and no temporary left.
TEST_F(OutputTarget, AWritePastTheFileSizeLimitFailsAndLeavesNothing) {
  EXPECT_EXIT(write_past_the_file_size_limit(dir / "big.bin"), ::testing::ExitedWithCode(0),
              "writing .*big.bin failed: File too large[|]clean");
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

}  // namespace
}  // namespace kanoko
