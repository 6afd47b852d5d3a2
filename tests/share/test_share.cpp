// `kanoko share`: the page's data (quantisation bound, decimation, statistics key frames), the
// size budget, and bad input (missing or damaged run, unwritable output, missing three.js), with
// nothing left behind. The page itself is tested in a real browser by test_page_browser.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/share/serve.hpp"
#include "src/share/share.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::share {
namespace KANOKO_UNITY_ID {

namespace fs = std::filesystem;
using test::run_kanoko;
using test::TempDir;

/// A run of `bodies` bodies wandering randomly, `frames` frames `dt` apart from t = 0.5; the
/// statistics load, mass, bytes_sent change every `stat_period` frames.
fs::path write_run(const fs::path& path, std::size_t bodies, std::size_t frames, double dt,
                   std::size_t stat_period = 10, std::uint64_t seed = 7,
                   const std::vector<std::vector<trajectory::PairTraffic>>& traffic = {}) {
  trajectory::Metadata meta;
  for (std::size_t i = 0; i < bodies; ++i) {
    trajectory::BodyInfo b;
    b.name = "pe" + std::to_string(i);
    b.host = "node" + std::to_string(i / 2);
    b.rank = static_cast<std::int64_t>(i);
    b.colour_rgb = {1.0F, 0.2F, 0.1F};
    b.radius = 0.1F;
    meta.bodies.push_back(b);
  }
  for (std::uint32_t i = 0; i + 1 < bodies; ++i) meta.edges.push_back({i, i + 1});
  meta.stat_names = {"load", "mass", "bytes_sent"};
  meta.dt_s = dt;
  meta.interval_s = dt * static_cast<double>(stat_period);
  meta.trace_begin_s = 0.5;
  meta.trace_end_s = 0.5 + dt * static_cast<double>(frames);
  if (!traffic.empty()) meta.traffic_begin.push_back(0);
  for (const auto& interval : traffic) {
    meta.traffic.append(interval);
    meta.traffic_begin.push_back(meta.traffic.size());
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> step(0.0, 0.05);
  const auto n = static_cast<Eigen::Index>(bodies);
  Eigen::Matrix3Xd pos = Eigen::Matrix3Xd::Zero(3, n);
  for (Eigen::Index i = 0; i < n; ++i) pos(0, i) = static_cast<double>(i);
  Eigen::MatrixXd stats = Eigen::MatrixXd::Zero(3, n);
  trajectory::Writer w(path, meta);
  for (std::size_t k = 0; k < frames; ++k) {
    Eigen::Matrix3Xd vel(3, n);
    for (Eigen::Index j = 0; j < vel.size(); ++j) vel.data()[j] = step(rng) / dt;
    if (k % stat_period == 0) {
      for (Eigen::Index i = 0; i < n; ++i) {
        stats(0, i) = static_cast<double>((k / stat_period + static_cast<std::size_t>(i)) % 3);
        stats(1, i) = 1.0 + stats(0, i);
        stats(2, i) = 1000.0 * static_cast<double>(k);
      }
    }
    w.append_frame(0.5 + dt * static_cast<double>(k), pos, vel, stats);
    pos += vel * dt;
  }
  w.commit();
  return path;
}

PageOptions options_with(double fps) {
  PageOptions o;
  o.fps = fps;
  return o;
}

TEST(Share, QuantisedPositionsAreWithinTheBoundOfTheBox) {
  TempDir dir;
  const trajectory::Reader reader(write_run(dir / "run.kntj", 6, 300, 0.01));
  const PageData d = collect_page_data(reader, "run.kntj", options_with(30));
  ASSERT_EQ(d.times.size(), 300U);  // 300 frames fit 30 fps × 20 s + 1: the run's own frames
  const std::size_t n = 6;
  double worst = 0;
  for (std::size_t k = 0; k < d.times.size(); ++k) {
    EXPECT_EQ(d.times[k], reader.frame_time(k));
    const trajectory::FrameView f = reader.frame(k);
    for (std::size_t i = 0; i < n; ++i) {
      for (int c = 0; c < 3; ++c) {
        const double exact = f.positions(c, static_cast<Eigen::Index>(i));
        const double back = dequantise(d.positions[(k * n + i) * 3 + static_cast<std::size_t>(c)], d.box_lo[c], d.box_extent[c]);
        ASSERT_GT(d.box_extent[c], 0);
        const double error = std::abs(back - exact) / d.box_extent[c];
        worst = std::max(worst, error);
        ASSERT_LE(error, 1.0 / 65535.0) << "frame " << k << " body " << i << " axis " << c;
      }
    }
  }
  // Rounding to the nearest step: the error is at most half a step, and some come close to it.
  EXPECT_LE(worst, 0.5 / 65535.0 + 1e-12);
  EXPECT_GT(worst, 0.3 / 65535.0);
}

TEST(Share, QuantiseRoundsToTheNearestStepAndHandlesAFlatBox) {
  EXPECT_EQ(quantise(0.0, 0.0, 1.0), 0);
  EXPECT_EQ(quantise(1.0, 0.0, 1.0), 65535);
  EXPECT_EQ(quantise(0.5, 0.0, 1.0), 32768);  // 32767.5 rounds up
  EXPECT_EQ(quantise(3.0, 3.0, 0.0), 0);
  EXPECT_EQ(dequantise(0, 3.0, 0.0), 3.0);
  EXPECT_EQ(dequantise(65535, -2.0, 4.0), 2.0);
}

TEST(Share, LongRunsAreDecimatedToEvenlySpacedFrames) {
  TempDir dir;
  const trajectory::Reader reader(write_run(dir / "run.kntj", 3, 2000, 0.005));
  const PageData d = collect_page_data(reader, "run.kntj", options_with(5));
  ASSERT_EQ(d.times.size(), 101U);  // 5 fps × 20 s, both ends
  EXPECT_EQ(d.times.front(), reader.begin_time());
  EXPECT_EQ(d.times.back(), reader.end_time());
  const double step = (reader.end_time() - reader.begin_time()) / 100.0;
  for (std::size_t k = 1; k < d.times.size(); ++k) EXPECT_NEAR(d.times[k] - d.times[k - 1], step, 1e-9);
  // Each stored frame is the run's (interpolated) position at its time, quantised.
  Eigen::Matrix3Xd p;
  for (std::size_t k = 0; k < d.times.size(); k += 7) {
    reader.positions_at(d.times[k], p);
    for (std::size_t i = 0; i < 3; ++i) {
      for (int c = 0; c < 3; ++c) {
        const double back = dequantise(d.positions[(k * 3 + i) * 3 + static_cast<std::size_t>(c)], d.box_lo[c], d.box_extent[c]);
        EXPECT_LE(std::abs(back - p(c, static_cast<Eigen::Index>(i))), d.box_extent[c] / 65535.0);
      }
    }
  }
  // A time range: the same number of frames between --from and --to.
  PageOptions range = options_with(5);
  range.from_s = 2.0;
  range.to_s = 3.0;
  const PageData r = collect_page_data(reader, "run.kntj", range);
  ASSERT_EQ(r.times.size(), 101U);
  EXPECT_EQ(r.times.front(), 2.0);
  EXPECT_EQ(r.times.back(), 3.0);
}

TEST(Share, StatisticsAreStoredWhereTheyChange) {
  TempDir dir;
  const trajectory::Reader reader(write_run(dir / "run.kntj", 4, 95, 0.01, 10));
  const PageData d = collect_page_data(reader, "run.kntj", options_with(30));
  ASSERT_EQ(d.stat_times.size(), 10U);  // frames 0, 10, …, 90
  ASSERT_EQ(d.stats.size(), 10U * 4U * 3U);
  for (std::size_t j = 0; j < d.stat_times.size(); ++j) {
    EXPECT_EQ(d.stat_times[j], reader.frame_time(10 * j));
    const trajectory::FrameView f = reader.frame(10 * j);
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t s = 0; s < 3; ++s) {
        EXPECT_EQ(d.stats[(j * 4 + i) * 3 + s],
                  static_cast<float>(f.stats(static_cast<Eigen::Index>(s), static_cast<Eigen::Index>(i))));
      }
    }
  }
  // The default cue (load rising faster than 1 per second) fires where load steps up.
  EXPECT_FALSE(d.cues.empty());
}

TEST(Share, TopPartnersAndSpringTrafficAreStoredAtEachInterval) {
  // pe0 sends 100 (b + 1) bytes to pe1 in interval b, receives 50 from pe2 in each, and 1000 from
  // pe3 in interval 5 only; springs: pe0-pe1, pe1-pe2, pe2-pe3.
  std::vector<std::vector<trajectory::PairTraffic>> traffic(10);
  for (std::uint32_t b = 0; b < 10; ++b) {
    traffic[b].push_back({0, 1, 100.0 * (b + 1), 1});
    traffic[b].push_back({2, 0, 50.0, 1});
    if (b == 5) traffic[b].push_back({3, 0, 1000.0, 2});
  }
  TempDir dir;
  const trajectory::Reader reader(write_run(dir / "run.kntj", 4, 95, 0.01, 10, 7, traffic));
  const PageData d = collect_page_data(reader, "run.kntj", options_with(30));
  const std::size_t k_count = d.stat_times.size();
  ASSERT_GE(k_count, 10U);
  ASSERT_EQ(d.spring_bytes.size(), k_count * 3);
  ASSERT_EQ(d.max_spring_bytes.size(), k_count);
  ASSERT_EQ(d.partner_bodies.size(), k_count * 4 * kTopPartners);
  std::size_t bins_seen = 0;
  for (std::size_t j = 0; j < k_count; ++j) {
    const std::size_t bin = reader.meta().interval_of(d.stat_times[j]);
    bins_seen = std::max(bins_seen, bin + 1);
    EXPECT_EQ(d.spring_bytes[j * 3], 100.0F * static_cast<float>(bin + 1)) << "key frame " << j;
    EXPECT_EQ(d.spring_bytes[j * 3 + 1], 0.0F);
    EXPECT_EQ(d.max_spring_bytes[j], 100.0F * static_cast<float>(bin + 1));
    // pe0's partners so far, largest total first.
    const double to_pe1 = 100.0 * static_cast<double>((bin + 1) * (bin + 2) / 2);
    const double from_pe2 = 50.0 * static_cast<double>(bin + 1);
    const double from_pe3 = bin >= 5 ? 1000.0 : 0.0;
    std::vector<std::pair<double, std::uint32_t>> want{{to_pe1, 1}, {from_pe2, 2}};
    if (from_pe3 > 0) want.emplace_back(from_pe3, 3);
    std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const std::size_t at = j * 4 * kTopPartners;
    for (std::size_t p = 0; p < kTopPartners; ++p) {
      if (p >= want.size()) {
        EXPECT_EQ(d.partner_bodies[at + p], 0xffffffffU) << "key frame " << j;
        continue;
      }
      EXPECT_EQ(d.partner_bodies[at + p], want[p].second) << "key frame " << j << " partner " << p;
      EXPECT_EQ(d.partner_sent[at + p] + d.partner_received[at + p], static_cast<float>(want[p].first));
      EXPECT_EQ(d.partner_sent[at + p], want[p].second == 1 ? static_cast<float>(to_pe1) : 0.0F);
    }
  }
  EXPECT_EQ(bins_seen, 10U) << "a key frame in every interval";
  // Without a traffic section: no traffic arrays.
  const trajectory::Reader quiet(write_run(dir / "quiet.kntj", 4, 95, 0.01, 10));
  const PageData q = collect_page_data(quiet, "quiet.kntj", options_with(30));
  EXPECT_TRUE(q.spring_bytes.empty() && q.partner_bodies.empty());
}

TEST(Share, APageThatFitsOnlyWithoutItsTrafficIsWrittenWithoutItAndSaysSo) {
  std::vector<std::vector<trajectory::PairTraffic>> traffic(10);
  for (std::uint32_t b = 0; b < 10; ++b) traffic[b].push_back({0, 1, 100.0 * (b + 1), 1});
  TempDir dir;
  const fs::path run = write_run(dir / "run.kntj", 60, 95, 0.01, 10, 7, traffic);
  const trajectory::Reader reader(run);
  PageOptions o = options_with(30);
  o.title = "run.kntj";  // as the command names the page
  const PageData d = collect_page_data(reader, run.string(), o);
  const std::size_t with = build_page(reader, d, o, run.string()).size();
  PageData without = d;
  drop_traffic(without);
  const std::size_t bare = build_page(reader, without, o, run.string()).size();
  ASSERT_GT(with, bare + 20000);
  const std::string budget = std::to_string((with + bare) / 2);
  const auto r = run_kanoko({"share", run.string(), "-o", (dir / "run.html").string(), "--max-size", budget});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the top partners and spring traffic colours are left out"), std::string::npos) << r.err;
  const std::string page = test::read_text(dir / "run.html");
  EXPECT_EQ(page.size(), bare);
  EXPECT_NE(page.find("\"traffic\":false"), std::string::npos);
  // With room for them, no warning and the traffic is in.
  const auto full = run_kanoko({"share", run.string(), "-o", (dir / "full.html").string()});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(full.err.find("warning"), std::string::npos) << full.err;
  EXPECT_NE(test::read_text(dir / "full.html").find("\"traffic\":true"), std::string::npos);
}

TEST(Share, APageSizesBodiesAgainstTheMassOfTheRunsFirstFrameAsTheDesktopDoes) {
  TempDir dir;
  const trajectory::Reader reader(write_run(dir / "run.kntj", 4, 95, 0.01, 10));
  PageOptions o = options_with(30);
  o.from_s = reader.frame_time(45);  // the masses there differ from frame 0's
  const std::string page = build_page(reader, collect_page_data(reader, "run.kntj", o), o, "run.kntj");
  const trajectory::FrameView f0 = reader.frame(0);
  const trajectory::FrameView from = reader.frame(45);
  std::size_t at = 0;
  for (Eigen::Index i = 0; i < 4; ++i) {
    ASSERT_NE(f0.stats(1, i), from.stats(1, i)) << "body " << i;
    at = page.find("\"mass0\":", at);
    ASSERT_NE(at, std::string::npos) << "body " << i;
    at += 8;
    EXPECT_EQ(std::stod(page.substr(at, 24)), f0.stats(1, i)) << "body " << i;
  }
  EXPECT_NE(page.find("\"mass_ratio_range\":[0.001,1000]"), std::string::npos);
}

TEST(Share, Base64MatchesTheRfcVectors) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},   {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};  // RFC 4648, section 10
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64(reinterpret_cast<const std::uint8_t*>(plain.data()), plain.size()), encoded) << plain;
  }
}

TEST(Share, MissingThreeJsNamesThePackage) {
  TempDir dir;
  const trajectory::Reader reader(write_run(dir / "run.kntj", 2, 20, 0.01));
  PageOptions o = options_with(30);
  o.three_dir = dir / "no-three";
  const PageData d = collect_page_data(reader, "run.kntj", o);
  try {
    (void)build_page(reader, d, o, "run.kntj");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("libjs-three"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("three.min.js"), std::string::npos) << e.what();
  }
}

TEST(Share, WritesAPageAndReportsItsSizeAndBudget) {
  TempDir dir;
  write_run(dir / "run.kntj", 5, 200, 0.01);
  const auto r = run_kanoko({"share", (dir / "run.kntj").string(), "-o", (dir / "run.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("of the 25 MiB budget"), std::string::npos) << r.err;
  const std::string page = test::read_text(dir / "run.html");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0U);
  const std::string three = test::read_text(fs::path(kThreeDir) / "build" / "three.min.js");
  EXPECT_NE(page.find(three.substr(0, 4000)), std::string::npos);  // three.js inlined
  EXPECT_NE(page.find("\"name\":\"pe4\""), std::string::npos);
  EXPECT_EQ(page.find("<!--KANOKO_"), std::string::npos);
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"run.html", "run.kntj"}));
}

TEST(Share, APageOverTheBudgetIsRefusedWithTheFixAndNothingIsWritten) {
  TempDir dir;
  write_run(dir / "run.kntj", 400, 700, 0.01);
  // The frames alone (601 × 400 bodies × 8 bytes, base64) pass 1 MiB: refused before reading them.
  auto r = run_kanoko({"share", (dir / "run.kntj").string(), "-o", (dir / "run.html").string(), "--max-size", "1M"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("over its 1.0 MiB budget (--max-size)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lower --fps to"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--from/--to"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // With three.js inlined (about 600 KiB) a page of few frames passes 700k: refused after building.
  r = run_kanoko({"share", (dir / "run.kntj").string(), "-o", (dir / "run.html").string(), "--max-size", "700k",
                  "--fps", "0.05"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("budget (--max-size)"), std::string::npos) << r.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"run.kntj"}));
  // The suggested rate fits.
  const auto at = r.err.find("lower --fps to ");
  if (at != std::string::npos) {
    const std::string fps = r.err.substr(at + 15, r.err.find(' ', at + 15) - at - 15);
    r = run_kanoko({"share", (dir / "run.kntj").string(), "-o", (dir / "run.html").string(), "--max-size", "700k",
                    "--fps", fps});
    EXPECT_EQ(r.exit_code, 0) << fps << ": " << r.err;
  }
}

TEST(Share, BadInputIsOneLineNamingTheFileAndLeavesNothing) {
  TempDir dir;
  const fs::path run = write_run(dir / "run.kntj", 3, 100, 0.01);
  const std::string out = (dir / "page.html").string();
  // A missing run.
  auto r = run_kanoko({"share", (dir / "missing.kntj").string(), "-o", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("missing.kntj"), std::string::npos) << r.err;
  // A damaged run: a byte of the frames flipped.
  {
    std::fstream f(dir / "bad.kntj", std::ios::in | std::ios::out | std::ios::binary | std::ios::trunc);
    f << test::read_text(run);
  }
  {
    std::string bytes = test::read_text(dir / "bad.kntj");
    bytes[bytes.size() - 200] = static_cast<char>(bytes[bytes.size() - 200] ^ 0x55);
    std::ofstream f(dir / "bad.kntj", std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  r = run_kanoko({"share", (dir / "bad.kntj").string(), "-o", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.kntj"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("checksum"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // An output that cannot be written: a folder, then a folder that does not exist.
  fs::create_directory(dir / "folder.html");
  r = run_kanoko({"share", run.string(), "-o", (dir / "folder.html").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("folder.html"), std::string::npos) << r.err;
  r = run_kanoko({"share", run.string(), "-o", (dir / "nowhere" / "page.html").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("page.html"), std::string::npos) << r.err;
  // The run itself as the output.
  r = run_kanoko({"share", run.string(), "-o", run.string()});
  EXPECT_EQ(r.exit_code, 1);
  // Bad options.
  r = run_kanoko({"share", run.string(), "-o", out, "--fps", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--fps"), std::string::npos) << r.err;
  r = run_kanoko({"share", run.string(), "-o", out, "--from", "99"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("outside the run"), std::string::npos) << r.err;
  r = run_kanoko({"share", run.string(), "-o", out, "--hrtf", "maybe"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"bad.kntj", "folder.html", "run.kntj"}));
  EXPECT_EQ(test::read_text(run).size(), fs::file_size(dir / "bad.kntj"));
}

TEST(Share, ARunWhoseStoredMappingNoLongerParsesGetsAPageWithoutSound) {
  // A format 1 run whose stored mapping predates today's rules (it defines no force).
  TempDir dir;
  const auto r = run_kanoko({"share", (test::source_dir() / "tests/trajectory/data/format1.kntj").string(), "-o",
                             (dir / "old.html").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the page has no sound cues: mappings/tiny.toml"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir / "old.html"));
}

TEST(Share, AnUnfinishedRunIsRefused) {
  TempDir dir;
  trajectory::Metadata meta;
  meta.bodies.resize(2);
  meta.stat_names = {"load"};
  meta.dt_s = 0.01;
  trajectory::Writer w(dir / "run.kntj", meta);
  for (int k = 0; k < 200; ++k) {
    w.append_frame(k * 0.01, Eigen::Matrix3Xd::Zero(3, 2), Eigen::Matrix3Xd::Zero(3, 2), Eigen::MatrixXd::Zero(1, 2));
  }
  // The writer has flushed whole blocks to its temporary file, which is a partial run.
  const auto r = run_kanoko({"share", w.temporary_path().string(), "-o", (dir / "p.html").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("incomplete"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "p.html"));
}

TEST(Serve, ServesTheRunOrTheNewestRunBeingSimulatedIntoIt) {
  TempDir dir;
  const fs::path run = dir / "run.kntj";
  EXPECT_THROW((void)run_being_served(run), InputError);
  test::write_text(dir / "run.kntj.tmp-11", "older");
  test::write_text(dir / "other.kntj.tmp-13", "another run");
  fs::last_write_time(dir / "run.kntj.tmp-11", fs::file_time_type::clock::now() - std::chrono::seconds(60));
  test::write_text(dir / "run.kntj.tmp-12", "newer");
  EXPECT_EQ(run_being_served(run), dir / "run.kntj.tmp-12");
  write_run(run, 2, 10, 0.01);
  EXPECT_EQ(run_being_served(run), run);
}

TEST(Serve, APortInUseIsRefusedWithTheFix) {
  TempDir dir;
  const fs::path run = write_run(dir / "run.kntj", 2, 70, 0.01);
  ServeOptions options;
  options.port = 0;
  const RunServer first(run, options);
  options.port = first.port();
  try {
    const RunServer second(run, options);
    FAIL() << "two servers on port " << options.port;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--port"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kanoko::share
