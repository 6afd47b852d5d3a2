// Compressed text traces (gzip, xz, zstd) read directly: every shipped and shared text trace reads
// to the same event stream through each compressor; concatenated members and frames; the batch
// reader's threads on a decompressed stream; truncated, corrupt and mutated compressed files give
// one-line located errors; an endless line stops at the readers' line limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/decompress.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/paje_reader.hpp"
#include "src/trace/readers.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/mutation.hpp"
#include "tests/trace/stream_recorder.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

namespace fs = std::filesystem;
using testing::StreamRecorder;

constexpr Compression kCompressors[] = {Compression::gzip, Compression::xz, Compression::zstd};

/// `plain` compressed by the gzip, xz or zstd command (fast levels: the content is what matters).
std::string compressed_file(const fs::path& plain, Compression c) {
  std::vector<std::string> argv;
  switch (c) {
    case Compression::gzip: argv = {"gzip", "-1", "-n", "-c", plain.string()}; break;
    case Compression::xz: argv = {"xz", "-0", "-c", plain.string()}; break;
    case Compression::zstd: argv = {"zstd", "-1", "-q", "-c", plain.string()}; break;
    case Compression::none: return test::read_text(plain);
  }
  const test::CommandResult r = test::run_program(argv);
  if (r.exit_code != 0) throw std::runtime_error(argv[0] + " failed: " + r.err);
  return r.out;
}

/// `text` compressed (through a file in `dir`).
std::string compressed_text(const test::TempDir& dir, const std::string& text, Compression c) {
  const fs::path p = dir / "to-compress";
  test::write_text(p, text);
  std::string out = compressed_file(p, c);
  fs::remove(p);
  return out;
}

/// Copies `from` (a file or a folder, recursively) to `to`, each file compressed under its own name.
void copy_compressed(const fs::path& from, const fs::path& to, Compression c) {
  if (fs::is_regular_file(from)) {
    test::write_text(to, compressed_file(from, c));
    return;
  }
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    if (e.is_regular_file()) copy_compressed(e.path(), to / e.path().lexically_relative(from), c);
  }
}

struct Read {
  StreamRecorder stream;
  ReadReport report;
};

Read read(const fs::path& p, const std::string& format = "auto", const ReaderOptions& o = {}) {
  Read r;
  r.report = read_trace(p, r.stream, format, o);
  return r;
}

/// The same events in the same order, field by field.
void expect_same_stream(const StreamRecorder& a, const StreamRecorder& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_TRUE(b.well_formed());
  ASSERT_EQ(a.entities.size(), b.entities.size());
  for (std::size_t i = 0; i < a.entities.size(); ++i) {
    const Entity &x = a.entities[i], &y = b.entities[i];
    EXPECT_TRUE(x.index == y.index && x.id == y.id && x.name == y.name && x.host == y.host && x.rank == y.rank) << i;
  }
  ASSERT_EQ(a.messages.size(), b.messages.size());
  for (std::size_t i = 0; i < a.messages.size(); ++i) {
    const Message &x = a.messages[i], &y = b.messages[i];
    EXPECT_TRUE(x.send_s == y.send_s && x.recv_s == y.recv_s && x.src == y.src && x.dst == y.dst &&
                x.bytes == y.bytes && x.tag == y.tag)
        << i;
  }
  ASSERT_EQ(a.loads.size(), b.loads.size());
  for (std::size_t i = 0; i < a.loads.size(); ++i) {
    const LoadSample &x = a.loads[i], &y = b.loads[i];
    EXPECT_TRUE(x.time_s == y.time_s && x.entity == y.entity && x.value == y.value) << i;
  }
  ASSERT_EQ(a.states.size(), b.states.size());
  for (std::size_t i = 0; i < a.states.size(); ++i) {
    const testing::RecordedState &x = a.states[i], &y = b.states[i];
    EXPECT_TRUE(x.begin_s == y.begin_s && x.end_s == y.end_s && x.entity == y.entity && x.name == y.name) << i;
  }
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (std::size_t i = 0; i < a.collectives.size(); ++i) {
    const testing::RecordedCollective &x = a.collectives[i], &y = b.collectives[i];
    EXPECT_TRUE(x.begin_s == y.begin_s && x.end_s == y.end_s && x.entity == y.entity && x.name == y.name &&
                x.bytes == y.bytes && x.root == y.root && x.group == y.group)
        << i;
  }
  EXPECT_EQ(a.end_s, b.end_s);
}

/// Reads `plain` and `packed` (its compressed copy) and expects the same stream and report, but
/// for the report's leading "compression" row.
void expect_same_read(const fs::path& plain, const fs::path& packed, Compression c) {
  const std::string what = packed.string() + " (" + compression_name(c) + ")";
  const Read a = read(plain);
  const Read b = read(packed);
  expect_same_stream(a.stream, b.stream, what);
  EXPECT_EQ(a.report.format, b.report.format) << what;
  ASSERT_FALSE(b.report.details.empty()) << what;
  EXPECT_EQ(b.report.details.front(), (std::pair<std::string, std::string>{"compression", compression_name(c)})) << what;
  EXPECT_EQ(std::vector(b.report.details.begin() + 1, b.report.details.end()), a.report.details) << what;
  EXPECT_EQ(a.report.warnings.size(), b.report.warnings.size()) << what;
  EXPECT_EQ(a.report.paje.states, b.report.paje.states) << what;
}

/// The first line of an error; the error must be exactly one line naming `file`.
void expect_one_line_error(const std::string& err, const fs::path& file, const std::string& context) {
  ASSERT_FALSE(err.empty()) << context;
  EXPECT_EQ(err.find('\n'), std::string::npos) << context << ": " << err;
  EXPECT_EQ(err.rfind(file.string(), 0), 0U) << context << ": " << err;
}

TEST(CompressedTraces, MagicBytesDecideNotNames) {
  EXPECT_EQ(compression_of("\x1f\x8b\x08"), Compression::gzip);
  EXPECT_EQ(compression_of(std::string_view("\xfd" "7zXZ\0", 6)), Compression::xz);
  EXPECT_EQ(compression_of("\x28\xb5\x2f\xfd"), Compression::zstd);
  EXPECT_EQ(compression_of("\x50\x2a\x4d\x18"), Compression::zstd);  // a skippable frame
  EXPECT_EQ(compression_of("\xfd" "7zX"), Compression::none);
  EXPECT_EQ(compression_of("kntr 1\n"), Compression::none);
  EXPECT_EQ(compression_of(""), Compression::none);

  test::TempDir dir;
  const std::string text = "kntr 1\nnode 0 0\nend 1\n";
  test::write_text(dir / "plain.gz", text);  // a plain file whatever its name
  test::write_text(dir / "packed.kntr", compressed_text(dir, text, Compression::gzip));
  EXPECT_EQ(file_compression(dir / "plain.gz"), Compression::none);
  EXPECT_EQ(file_compression(dir / "packed.kntr"), Compression::gzip);
  EXPECT_EQ(detect_format(dir / "plain.gz"), "native");
  EXPECT_EQ(detect_format(dir / "packed.kntr"), "native");
  expect_same_read(dir / "plain.gz", dir / "packed.kntr", Compression::gzip);
}

TEST(CompressedTraces, EveryShippedAndSharedTextTraceReadsTheSameThroughEachCompressor) {
  const fs::path shared = test::shared_dir() / "traces";
  const fs::path shipped = test::source_dir() / "traces";
  // (the file or folder to copy, the trace inside it)
  std::vector<std::pair<fs::path, fs::path>> traces;
  for (const auto& e : fs::directory_iterator(shipped)) {
    if (e.path().extension() == ".kntr") traces.emplace_back(e.path(), "");
  }
  for (const char* f : {"ring5.trace", "torus8.trace"}) traces.emplace_back(shipped / "simgrid" / f, "");
  for (const auto& e : fs::directory_iterator(shared / "paje")) {
    if (e.path().extension() == ".trace") traces.emplace_back(e.path(), "");
  }
  for (const auto& e : fs::directory_iterator(shared / "chrome-json")) traces.emplace_back(e.path(), "");
  // Paraver with its .pcf and .row, TI with its index's rank files: the whole folder compressed.
  traces.emplace_back(shared / "paraver", "lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv");
  traces.emplace_back(shared / "paraver", "qsort_beo3.prv");
  traces.emplace_back(shared / "simgrid-ti", "smpi_replay.txt");
  traces.emplace_back(shared / "simgrid-ti", "actions_with_isend.txt");
  ASSERT_GE(traces.size(), 22U);

  test::TempDir dir;
  for (const Compression c : kCompressors) {
    int n = 0;
    for (const auto& [from, inside] : traces) {
      const fs::path to = dir / (std::string(compression_name(c)) + std::to_string(n++));
      copy_compressed(from, to, c);
      const fs::path plain = inside.empty() ? from : from / inside;
      const fs::path packed = inside.empty() ? to : to / inside;
      ASSERT_EQ(file_compression(packed), c) << packed;
      expect_same_read(plain, packed, c);
    }
    fs::remove_all(dir.path());
    fs::create_directories(dir.path());
  }
}

TEST(CompressedTraces, ParaverCompanionsMayBeCompressedUnderSuffixedNames) {
  const fs::path from = test::shared_dir() / "traces" / "paraver";
  const std::string stem = "lulesh_4+4_with_uncores_sockets1+2.chop_5it";
  test::TempDir dir;
  test::write_text(dir / (stem + ".prv.gz"), compressed_file(from / (stem + ".prv"), Compression::gzip));
  test::write_text(dir / (stem + ".pcf.xz"), compressed_file(from / (stem + ".pcf"), Compression::xz));
  fs::copy_file(from / (stem + ".row"), dir / (stem + ".row"));
  const Read a = read(from / (stem + ".prv"));
  const Read b = read(dir / (stem + ".prv.gz"));
  expect_same_stream(a.stream, b.stream, "suffixed");
  EXPECT_EQ(b.report.details.back().second, ".pcf read, .row read");
  // The cache key hashes the files as stored.
  EXPECT_EQ(trace_files(dir / (stem + ".prv.gz")),
            (std::vector<fs::path>{dir / (stem + ".prv.gz"), dir / (stem + ".pcf.xz"), dir / (stem + ".row")}));
}

TEST(CompressedTraces, TraceFilesOfACompressedTiIndexAreItsStoredRankFiles) {
  test::TempDir dir;
  copy_compressed(test::shared_dir() / "traces" / "simgrid-ti", dir / "ti", Compression::zstd);
  const std::vector<fs::path> files = trace_files(dir / "ti" / "smpi_replay.txt");
  ASSERT_EQ(files.size(), 33U);
  EXPECT_EQ(files[1], dir / "ti" / "ti_traces_32_1" / "ti_trace0.txt");
  for (const fs::path& f : files) EXPECT_EQ(file_compression(f), Compression::zstd) << f;
}

TEST(CompressedTraces, ConcatenatedMembersStreamsAndFramesReadAsOneText) {
  const fs::path plain = test::source_dir() / "traces" / "mesh-uniform-light.kntr";
  const std::string text = test::read_text(plain);
  test::TempDir dir;
  for (const Compression c : kCompressors) {
    // Three parts cut inside lines.
    const std::size_t a = text.size() / 3 + 7;
    const std::size_t b = 2 * text.size() / 3 + 3;
    const std::string packed = compressed_text(dir, text.substr(0, a), c) + compressed_text(dir, text.substr(a, b - a), c) +
                               compressed_text(dir, text.substr(b), c);
    const fs::path p = dir / (std::string("parts-") + compression_name(c));
    test::write_text(p, packed);
    expect_same_read(plain, p, c);
  }
}

TEST(CompressedTraces, BatchReaderThreadsWorkOnADecompressedStream) {
  test::TempDir dir;
  const fs::path native = test::source_dir() / "traces" / "fib22-ring.kntr";
  const fs::path paje = test::shared_dir() / "traces" / "paje" / "g5k.trace";
  test::write_text(dir / "n.zst", compressed_file(native, Compression::zstd));
  test::write_text(dir / "p.gz", compressed_file(paje, Compression::gzip));
  StreamRecorder native_plain, paje_plain;
  read_native_trace(native, native_plain);
  read_paje_trace(paje, paje_plain);
  for (const int threads : {1, 2, 4}) {
    for (const std::size_t batch : {std::size_t{4096}, std::size_t{1} << 20U}) {
      StreamRecorder n, p;
      read_native_trace(dir / "n.zst", n, TextReadOptions{threads, batch});
      PajeOptions o;
      o.read = TextReadOptions{threads, batch};
      read_paje_trace(dir / "p.gz", p, o);
      const std::string what = std::to_string(threads) + " threads, batches of " + std::to_string(batch);
      expect_same_stream(native_plain, n, "native, " + what);
      expect_same_stream(paje_plain, p, "Pajé, " + what);
    }
  }
}

TEST(CompressedTraces, InfoNamesTheFormatAndTheCompression) {
  test::TempDir dir;
  test::write_text(dir / "ring5.trace.gz",
                   compressed_file(test::source_dir() / "traces" / "simgrid" / "ring5.trace", Compression::gzip));
  const test::CommandResult r = test::run_kanoko({"info", (dir / "ring5.trace.gz").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("format:      paje\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compression: gzip\n"), std::string::npos) << r.out;
  const test::CommandResult j = test::run_kanoko({"info", (dir / "ring5.trace.gz").string(), "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("\"compression\":\"gzip\""), std::string::npos) << j.out;
}

/// Small traces of every text format, as (file or folder to copy, trace inside it).
std::vector<std::pair<fs::path, std::string>> small_traces() {
  const fs::path shared = test::shared_dir() / "traces";
  return {{test::source_dir() / "traces" / "simgrid" / "ring5.trace", ""},
          {shared / "chrome-json" / "stable-diffusion.json", ""},
          {shared / "simgrid-ti" / "actions_with_isend.txt", ""},
          {shared / "paraver" / "qsort_beo3.prv", ""},
          {shared / "paje" / "ms.trace", ""}};
}

TEST(CompressedTraces, TruncatedFilesGiveOneLineErrorsWithTheCompressedOffset) {
  test::TempDir dir;
  const std::string native = test::read_text(test::source_dir() / "traces" / "mesh-uniform-light.kntr");
  for (const Compression c : kCompressors) {
    const std::string packed = compressed_text(dir, native, c);
    const fs::path p = dir / (std::string("cut.") + compression_name(c));
    int later_lines = 0;
    for (std::size_t cut = 6; cut < packed.size(); cut += std::max<std::size_t>(1, packed.size() / 60)) {
      test::write_text(p, packed.substr(0, cut));
      const std::string err = test::input_error_of([&] { read(p); });
      const std::string context = std::string(compression_name(c)) + " cut at " + std::to_string(cut);
      expect_one_line_error(err, p, context);
      EXPECT_NE(err.find(std::string("truncated ") + compression_name(c) + " data: the compressed file ends at byte " +
                         std::to_string(cut)),
                std::string::npos)
          << context << ": " << err;
      if (err.rfind(p.string() + ":1:", 0) != 0) ++later_lines;  // the line reached is named
    }
    EXPECT_GT(later_lines, 20) << compression_name(c);
  }
  // Every format, cut in the middle.
  for (const auto& [from, inside] : small_traces()) {
    for (const Compression c : kCompressors) {
      const fs::path p = dir / (std::string("half-") + compression_name(c));
      const std::string packed = compressed_file(from, c);
      test::write_text(p, packed.substr(0, packed.size() / 2));
      const std::string err = test::input_error_of([&] { read(p); });
      expect_one_line_error(err, p, from.string());
      EXPECT_NE(err.find("truncated"), std::string::npos) << from << ": " << err;
    }
  }
}

TEST(CompressedTraces, CorruptDataIsLocatedAtItsCompressedByte) {
  test::TempDir dir;
  const std::string text = test::read_text(test::source_dir() / "traces" / "mesh-uniform-light.kntr");
  for (const Compression c : kCompressors) {
    std::string packed = compressed_text(dir, text, c);
    // Bytes overwritten in the middle of the compressed data (past the headers).
    const std::size_t from = packed.size() / 2;
    for (std::size_t i = from; i < from + 64; ++i) packed[i] = static_cast<char>(0xa5U ^ i);
    const fs::path p = dir / (std::string("corrupt.") + compression_name(c));
    test::write_text(p, packed);
    // The decompressor finds it (a reader may meet garbage text first: then its own located error).
    DecompressedInput in(p);
    std::vector<char> buffer(std::size_t{1} << 16U);
    const std::string err = test::input_error_of([&] {
      while (in.read(buffer.data(), buffer.size()) > 0) {
      }
    });
    expect_one_line_error(err, p, compression_name(c));
    const std::string at = std::string("corrupt ") + compression_name(c) + " data at byte ";
    const std::size_t k = err.find(at);
    ASSERT_NE(k, std::string::npos) << err;
    const std::size_t offset = std::stoull(err.substr(k + at.size()));
    // zstd names the start of the damaged block (at most 128 KiB), the others the damage or later.
    EXPECT_GE(offset + (c == Compression::zstd ? std::size_t{128} << 10U : 0), from) << err;
    EXPECT_LE(offset, packed.size()) << err;
    EXPECT_EQ(err.rfind(p.string() + ":1:", 0), std::string::npos) << "the line reached is named: " << err;
    // Through a reader: one located line.
    expect_one_line_error(test::input_error_of([&] { read(p); }), p, compression_name(c));
  }
  // A bad gzip check sum: found after the whole text decoded (in one step), at the line reached.
  const fs::path small = test::source_dir() / "traces" / "simgrid" / "ring5.trace";
  const std::string small_text = test::read_text(small);
  std::string packed = compressed_file(small, Compression::gzip);
  packed[packed.size() - 8] = static_cast<char>(packed[packed.size() - 8] ^ 1);  // the trailer's CRC-32
  test::write_text(dir / "crc.gz", packed);
  const std::string lines = std::to_string(std::count(small_text.begin(), small_text.end(), '\n') + 1);
  EXPECT_EQ(test::input_error_of([&] { read(dir / "crc.gz"); }),
            (dir / "crc.gz").string() + ":" + lines + ": error: corrupt gzip data at byte " +
                std::to_string(packed.size() - 4) + " of the compressed file: incorrect data check");
}

TEST(CompressedTraces, MutatedCompressedFilesGiveOneLineErrorsOrTheirText) {
  test::TempDir dir;
  const std::vector<std::string> tokens{std::string(1, '\0'), "\xff", "\x1f\x8b", "\x28\xb5\x2f\xfd", "\n", "0000"};
  std::mt19937_64 rng(20261125);
  int refused = 0, accepted = 0;
  for (const auto& [from, inside] : small_traces()) {
    for (const Compression c : kCompressors) {
      const std::string packed = compressed_file(from, c);
      const fs::path p = dir / (std::string("m.") + compression_name(c));
      for (int iter = 0; iter < 60; ++iter) {
        std::string s = packed;
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; ++e) testing::mutate_once(s, rng, tokens);
        test::write_text(p, s);
        const std::string err = test::input_error_of([&] { read(p); });
        if (err.empty()) {
          ++accepted;
          continue;
        }
        ++refused;
        expect_one_line_error(err, p, from.string() + " mutation " + std::to_string(iter));
      }
    }
  }
  EXPECT_GT(refused, 500);
  EXPECT_GT(accepted, 0);  // a changed header field (gzip's time stamp) leaves the text
}

TEST(CompressedTraces, AnEndlessLineStopsAtTheLineLimit) {
  test::TempDir dir;
  // setenv: the TI reader's decompressed copies go to the temp folder; none may be left behind.
  const fs::path tmp = dir / "tmp";
  fs::create_directories(tmp);
  const char* old_tmp = std::getenv("TMPDIR");
  const std::string saved = old_tmp != nullptr ? old_tmp : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const std::string endless(std::size_t{40} << 20U, 'x');  // no '\n' in 40 MiB
  const std::vector<std::pair<std::string, std::string>> cases{
      {"native", "kntr 1\n"}, {"paje", "%EventDef PajeDefineContainerType 0\n"}, {"paraver", ""}, {"simgrid-ti", "0 init\n"}};
  for (const auto& [format, first] : cases) {
    const std::string packed = compressed_text(dir, first + endless, Compression::zstd);
    EXPECT_LT(packed.size(), std::size_t{64} << 10U) << "a small file";
    const fs::path p = dir / ("bomb-" + format);
    test::write_text(p, packed);
    const std::string err = test::input_error_of([&] { read(p, format); });
    expect_one_line_error(err, p, format);
    const std::string line = first.empty() ? "1" : "2";
    EXPECT_EQ(err.rfind(p.string() + ":" + line + ":1: error: line is longer than 16 MiB", 0), 0U) << err;
    EXPECT_TRUE(test::list_dir(tmp).empty()) << format;
  }
  // The decompressed copy itself stops at the limit (it writes no endless file).
  const std::string err = test::input_error_of([&] { const PlainFile copy(dir / "bomb-simgrid-ti", 16 << 20, "TI trace"); });
  EXPECT_EQ(err.rfind((dir / "bomb-simgrid-ti").string() + ":2:1: error: line is longer than 16 MiB: not a TI trace", 0), 0U)
      << err;
  EXPECT_TRUE(test::list_dir(tmp).empty());
  // A compressed TI action file read whole leaves no copy either.
  test::write_text(dir / "ti", compressed_file(test::shared_dir() / "traces" / "simgrid-ti" / "actions_with_isend.txt",
                                               Compression::xz));
  EXPECT_FALSE(read(dir / "ti").stream.entities.empty());
  EXPECT_TRUE(test::list_dir(tmp).empty());
  if (old_tmp != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
}

TEST(CompressedTraces, ACompressedOtf2AnchorIsRefusedClearly) {
  test::TempDir dir;
  const fs::path anchor = test::shared_dir() / "traces" / "otf2" / "ping-pong-otf2" / "traces.otf2";
  test::write_text(dir / "traces.otf2", compressed_file(anchor, Compression::gzip));
  const std::string err = test::input_error_of([&] { read(dir / "traces.otf2"); });
  expect_one_line_error(err, dir / "traces.otf2", "otf2");
  EXPECT_NE(err.find("libotf2 reads OTF2 archives uncompressed only"), std::string::npos) << err;
}

}  // namespace
}  // namespace kanoko::trace
