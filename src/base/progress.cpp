#include "src/base/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <limits>

namespace kanoko {

std::string format_duration(double seconds) {
  char buf[64];
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  } else if (seconds < 3600) {
    const auto s = static_cast<long>(seconds);
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  } else {
    const auto s = static_cast<long>(seconds);
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, (s / 60) % 60);
  }
  return buf;
}

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  const double a = std::fabs(seconds);
  const char* unit = "s";
  double v = seconds;
  if (a > 0 && a < 1e-6) {
    v = seconds * 1e9;
    unit = "ns";
  } else if (a > 0 && a < 1e-3) {
    v = seconds * 1e6;
    unit = "µs";
  } else if (a > 0 && a < 1) {
    v = seconds * 1e3;
    unit = "ms";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s", v, unit);
  return buf;
}

ProgressBar::ProgressBar(std::string label, std::uint64_t total, std::string unit, bool enabled,
                         std::chrono::milliseconds log_every)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(enabled),
      tty_(::isatty(STDERR_FILENO) == 1),
      log_every_(log_every),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (enabled_ && tty_ && !finished_ && drawn_) std::fputc('\n', stderr);
}

void ProgressBar::update(std::uint64_t done) {
  done_ = done;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  // Work that finishes within half a second needs no bar.
  if (!drawn_ && now - start_ < std::chrono::milliseconds(500)) return;
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    draw(false);
  } else {
    const int decile = total_ == 0 ? 10 : static_cast<int>(10 * done_ / total_);
    if (decile != last_decile_ || now - last_draw_ >= log_every_) {
      last_decile_ = decile;
      last_draw_ = now;
      draw(false);
    }
  }
}

void ProgressBar::finish() {
  if (finished_) return;
  done_ = total_;
  if (enabled_ && drawn_) draw(true);
  finished_ = true;
}

void ProgressBar::draw(bool final) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fraction = total_ == 0 ? 1.0 : static_cast<double>(done_) / static_cast<double>(total_);
  const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0;
  const double remaining = rate > 0 ? static_cast<double>(total_ - done_) / rate : std::numeric_limits<double>::quiet_NaN();
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  char bar[kWidth + 1];
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '.';
  bar[kWidth] = '\0';
  char line[256];
  if (final) {
    std::snprintf(line, sizeof line, "%s [%s] 100%% %llu %s in %s (%.3g %s/s)", label_.c_str(), bar,
                  static_cast<unsigned long long>(done_), unit_.c_str(),
                  format_duration(elapsed).c_str(), rate, unit_.c_str());
  } else {
    std::snprintf(line, sizeof line, "%s [%s] %3d%% %.3g %s/s, %s left", label_.c_str(), bar,
                  static_cast<int>(fraction * 100), rate, unit_.c_str(),
                  format_duration(remaining).c_str());
  }
  drawn_ = true;
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s%s", line, final ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

}  // namespace kanoko
