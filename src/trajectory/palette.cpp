#include "src/trajectory/palette.hpp"

namespace kanoko::trajectory {

std::array<float, 3> palette_colour(std::size_t i) {
  static constexpr std::array<std::array<float, 3>, 8> kOkabeIto = {{
      {0.902F, 0.624F, 0.000F},  // orange
      {0.337F, 0.706F, 0.914F},  // sky blue
      {0.000F, 0.620F, 0.451F},  // bluish green
      {0.941F, 0.894F, 0.259F},  // yellow
      {0.000F, 0.447F, 0.698F},  // blue
      {0.835F, 0.369F, 0.000F},  // vermillion
      {0.800F, 0.475F, 0.655F},  // reddish purple
      {0.850F, 0.850F, 0.850F},  // light grey
  }};
  return kOkabeIto[i % kOkabeIto.size()];
}

}  // namespace kanoko::trajectory
