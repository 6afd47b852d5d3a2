// The tiny run (tiny_run.hpp) written to a temporary folder and opened, with render options for a
// small EGL picture of it at a given time: the set-up of the pixel tests.
#pragma once

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

}  // namespace kanoko::test
