// Clock dial geometry: 12 o'clock is the start, clockwise, 6 o'clock is half-way. No display.
#include "src/scene/dial.hpp"

#include <gtest/gtest.h>

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

TEST(Dial, FractionOfTheRun) {
  EXPECT_DOUBLE_EQ(dial_fraction(0.0, 0.0, 10.0), 0.0);
  EXPECT_DOUBLE_EQ(dial_fraction(2.5, 0.0, 10.0), 0.25);
  EXPECT_DOUBLE_EQ(dial_fraction(7.0, 2.0, 12.0), 0.5);
  EXPECT_DOUBLE_EQ(dial_fraction(-1.0, 0.0, 10.0), 0.0);  // clamped
  EXPECT_DOUBLE_EQ(dial_fraction(11.0, 0.0, 10.0), 1.0);
  EXPECT_DOUBLE_EQ(dial_fraction(4.0, 4.0, 4.0), 0.0);  // empty run
}

TEST(Dial, HandAngleIsClockwiseFromNoon) {
  EXPECT_DOUBLE_EQ(dial_hand_angle_deg(0.0), 0.0);
  EXPECT_DOUBLE_EQ(dial_hand_angle_deg(0.25), 90.0);
  EXPECT_DOUBLE_EQ(dial_hand_angle_deg(0.5), 180.0);
  EXPECT_DOUBLE_EQ(dial_hand_angle_deg(1.0), 360.0);
}

TEST(Dial, HandDirectionPointsUpRightDown) {
  constexpr double kTol = 1e-12;
  const Direction2 noon = dial_hand_direction(0.0);
  EXPECT_NEAR(noon.x, 0.0, kTol);
  EXPECT_NEAR(noon.y, 1.0, kTol);
  const Direction2 three = dial_hand_direction(0.25);  // 3 o'clock: to the right
  EXPECT_NEAR(three.x, 1.0, kTol);
  EXPECT_NEAR(three.y, 0.0, kTol);
  const Direction2 six = dial_hand_direction(0.5);  // 6 o'clock: straight down (y is up)
  EXPECT_NEAR(six.x, 0.0, kTol);
  EXPECT_NEAR(six.y, -1.0, kTol);
  const Direction2 nine = dial_hand_direction(0.75);
  EXPECT_NEAR(nine.x, -1.0, kTol);
  EXPECT_NEAR(nine.y, 0.0, kTol);
}

TEST(Dial, LayoutSitsInTheBottomRightCornerInsideTheWindow) {
  for (const auto& [w, h] : {std::pair{320, 240}, std::pair{800, 600}, std::pair{1920, 1080}}) {
    const DialLayout d = dial_layout(w, h);
    EXPECT_GE(d.radius_px, 22.0);
    EXPECT_LE(d.radius_px, 64.0);
    EXPECT_GT(d.centre_x_px - d.radius_px, 0.5 * w) << w << 'x' << h;
    EXPECT_LT(d.centre_x_px + d.radius_px, w);
    EXPECT_LT(d.centre_y_px + d.radius_px, 0.5 * h);
    EXPECT_GT(d.label_y_px, 0.0);
    EXPECT_LT(d.label_y_px + d.label_size_px, d.centre_y_px - d.radius_px);  // label below the disc
  }
}

TEST(Dial, ContainsIsTheDisc) {
  const DialLayout d = dial_layout(800, 600);
  EXPECT_TRUE(dial_contains(d, d.centre_x_px, d.centre_y_px));
  EXPECT_TRUE(dial_contains(d, d.centre_x_px + 0.99 * d.radius_px, d.centre_y_px));
  EXPECT_FALSE(
      dial_contains(d, d.centre_x_px + 0.72 * d.radius_px, d.centre_y_px + 0.72 * d.radius_px));
  EXPECT_FALSE(dial_contains(d, 10.0, 10.0));
}

TEST(Dial, TimeLabelShowsTimeAndPercent) {
  EXPECT_EQ(format_dial_time(5.0, 0.0, 10.0), "t = 5.00 s  (50%)");
  EXPECT_EQ(format_dial_time(0.0125, 0.0, 0.05), "t = 0.01250 s  (25%)");
  EXPECT_EQ(format_dial_time(1500.0, 0.0, 2000.0), "t = 1500 s  (75%)");
}

}  // namespace
}  // namespace kanoko::scene
