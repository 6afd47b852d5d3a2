#include "sonify/loudness.hpp"

#include <ebur128.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/base/check.hpp"
#include "src/base/error.hpp"

namespace kanoko::sonify {

struct LoudnessMeter::Impl {
  ebur128_state* state = nullptr;
};

LoudnessMeter::LoudnessMeter(int sample_rate_hz) : impl_(std::make_unique<Impl>()) {
  impl_->state = ebur128_init(2, static_cast<unsigned long>(sample_rate_hz), EBUR128_MODE_I | EBUR128_MODE_TRUE_PEAK);
  if (impl_->state == nullptr) throw RunError("cannot start the loudness measurement (libebur128)");
}

LoudnessMeter::~LoudnessMeter() { ebur128_destroy(&impl_->state); }

void LoudnessMeter::add(std::span<const float> interleaved_stereo) {
  KANOKO_ASSERT(interleaved_stereo.size() % 2 == 0, "stereo samples come in pairs");
  if (interleaved_stereo.empty()) return;
  if (ebur128_add_frames_float(impl_->state, interleaved_stereo.data(), interleaved_stereo.size() / 2) !=
      EBUR128_SUCCESS) {
    throw RunError("the loudness measurement (libebur128) failed");
  }
}

double LoudnessMeter::integrated_lufs() const {
  double lufs = -std::numeric_limits<double>::infinity();
  if (ebur128_loudness_global(impl_->state, &lufs) != EBUR128_SUCCESS) {
    throw RunError("the loudness measurement (libebur128) failed");
  }
  return lufs;
}

double LoudnessMeter::true_peak_dbtp() const {
  double peak = 0;
  for (unsigned c = 0; c < 2; ++c) {
    double p = 0;
    if (ebur128_true_peak(impl_->state, c, &p) != EBUR128_SUCCESS) {
      throw RunError("the loudness measurement (libebur128) failed");
    }
    peak = std::max(peak, p);
  }
  return peak > 0 ? 20 * std::log10(peak) : -std::numeric_limits<double>::infinity();
}

double LoudnessGain::linear() const { return std::pow(10.0, gain_db / 20); }

LoudnessGain loudness_gain(double integrated_lufs, double true_peak_dbtp, double target_lufs, double ceiling_dbtp) {
  LoudnessGain g;
  g.loudness_lufs = integrated_lufs;
  g.true_peak_dbtp = true_peak_dbtp;
  if (!std::isfinite(integrated_lufs)) return g;  // silence: nothing to bring up
  g.gain_db = target_lufs - integrated_lufs;
  if (std::isfinite(true_peak_dbtp) && true_peak_dbtp + g.gain_db > ceiling_dbtp) {
    g.gain_db = ceiling_dbtp - true_peak_dbtp;
    g.peak_limited = true;
  }
  g.loudness_lufs = integrated_lufs + g.gain_db;
  g.true_peak_dbtp = true_peak_dbtp + g.gain_db;
  return g;
}

}  // namespace kanoko::sonify
