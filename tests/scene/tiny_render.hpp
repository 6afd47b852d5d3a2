// The tiny run (tiny_run.hpp) written to a temporary folder and opened, with render options for a
// small EGL picture of it at a given time: the set-up of the pixel tests.
#pragma once

#include <cstdlib>
#include <memory>

#include "src/scene/render.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::test {

struct TinyRender {
  TempDir dir;
  std::unique_ptr<trajectory::Reader> reader;
  scene::RenderOptions options;

  explicit TinyRender(double time_s) {
    write_tiny_run(dir / "run.kntj");
    reader = std::make_unique<trajectory::Reader>(dir / "run.kntj");
    options.size = {320, 240};
    options.time_s = time_s;
    options.backend = scene::Backend::egl;
  }
  [[nodiscard]] scene::RenderResult render() const { return scene::render_image(*reader, options); }
};

/// Mean absolute difference (0..255) of two pictures' pixels within `r` pixels of where the
/// camera projects `at`.
inline double difference_near(const scene::RenderResult& a, const scene::RenderResult& b, const Eigen::Vector3d& at,
                              int r) {
  const osg::Vec3d w = a.camera.to_window(osg::Vec3d(at.x(), at.y(), at.z()));
  double sum = 0;
  int n = 0;
  for (int dy = -r; dy <= r; ++dy) {
    for (int dx = -r; dx <= r; ++dx) {
      const auto x = static_cast<unsigned>(w.x() + dx);
      const auto y = static_cast<unsigned>(w.y() + dy);
      for (int c = 0; c < 3; ++c) sum += std::abs(a.image->data(x, y)[c] - b.image->data(x, y)[c]);
      n += 3;
    }
  }
  return sum / n;
}

}  // namespace kanoko::test
