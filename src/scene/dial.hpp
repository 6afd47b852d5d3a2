// The paper's clock dial: a disc with one hand. 12 o'clock is the start of the run, the hand turns
// clockwise, 6 o'clock is half of the total time. This header is pure geometry (no OpenSceneGraph)
// so the layout and the hand angle can be tested without a display.
#pragma once

#include <string>

namespace kanoko::scene {

/// Where the dial sits in a window or image, in pixels with the origin at the bottom-left corner
/// (OpenGL window coordinates, y up).
struct DialLayout {
  double centre_x_px = 0;
  double centre_y_px = 0;
  double radius_px = 0;
  double label_x_px = 0;     ///< right end of the time label, which sits below the dial
  double label_y_px = 0;     ///< baseline of the first label line
  double label_size_px = 0;  ///< character height of the label
};

/// Layout of the dial for a window of the given size: bottom-right corner, radius ~9% of the
/// smaller side (clamped to 22..64 px), time label right-aligned below the disc.
[[nodiscard]] DialLayout dial_layout(int width_px, int height_px);

/// Fraction of the run elapsed at trace time t: (t − begin)/(end − begin), clamped to 0..1.
/// A run of zero length is at 0.
[[nodiscard]] double dial_fraction(double t_s, double begin_s, double end_s);

/// Hand angle in degrees for an elapsed fraction: 0 at 12 o'clock, growing clockwise, so 90 is
/// 3 o'clock, 180 is 6 o'clock and 360 is back at 12.
[[nodiscard]] double dial_hand_angle_deg(double fraction);

/// A direction in the window plane, y up.
struct Direction2 {
  double x = 0;
  double y = 0;
};

/// Unit vector from the dial centre along the hand (y up): (sin a, cos a) for angle a.
[[nodiscard]] Direction2 dial_hand_direction(double fraction);

/// True if the window point (pixels, y up) is on the dial disc.
[[nodiscard]] bool dial_contains(const DialLayout& layout, double x_px, double y_px);

/// Time label under the dial, e.g. "t = 12.50 s  (50%)". The number of decimals follows the
/// length of the run so that playback shows the time changing.
[[nodiscard]] std::string format_dial_time(double t_s, double begin_s, double end_s);

}  // namespace kanoko::scene
