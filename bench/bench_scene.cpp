// Frames per second of the viewer's scene for 1k, 10k and 100k bodies (a benchmark, not a test):
// a synthetic run (bodies on a jittered cubic lattice drifting over 11 frames, springs to lattice
// neighbours, 16 bodies per host) played in an osgViewer window, as `kanoko view` does. Needs a
// display; run it under Xvfb:
//   xvfb-run -a -s '-screen 0 1280x720x24 -noreset' build/bench/kanoko_bench_scene
//   ... kanoko_bench_scene --bodies 10000 --style impostors --seconds 5 --size 1280x720
// Prints FPS and CPU milliseconds per frame (getrusage; less sensitive to other load on the
// machine than FPS). The scene picks its body style from the count unless --style says otherwise.
// --visual adds [visual] colour and scale formulas (src/scene/mapping_visual.hpp), evaluated per
// stored frame, and prints how long opening them took (every interval once).
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <osgDB/WriteFile>
#include <osgViewer/Viewer>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "src/mapping/mapping.hpp"
#include "src/scene/navigation.hpp"
#include "src/scene/offscreen.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/render.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"
#include "src/trajectory/trajectory.hpp"

namespace {

using kanoko::scene::BodyStyle;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Bodies on a jittered n×n×n lattice (the first `bodies` of it), moving on slow circles.
void write_synthetic_run(const std::filesystem::path& path, std::size_t bodies) {
  namespace tj = kanoko::trajectory;
  const auto side = static_cast<std::size_t>(std::ceil(std::cbrt(static_cast<double>(bodies))));
  tj::Metadata meta;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> unit(0.0F, 1.0F);
  for (std::size_t i = 0; i < bodies; ++i) {
    tj::BodyInfo b;
    b.name = "b" + std::to_string(i);
    b.host = "host" + std::to_string(i / 16);
    b.rank = static_cast<std::int64_t>(i);
    b.colour_rgb = {0.3F + 0.7F * unit(rng), 0.3F + 0.7F * unit(rng), 0.3F + 0.7F * unit(rng)};
    b.radius = 0.3F;
    meta.bodies.push_back(b);
  }
  const auto index = [&](std::size_t x, std::size_t y, std::size_t z) {
    return (z * side + y) * side + x;
  };
  for (std::size_t z = 0; z < side; ++z) {
    for (std::size_t y = 0; y < side; ++y) {
      for (std::size_t x = 0; x < side; ++x) {
        const std::size_t i = index(x, y, z);
        if (i >= bodies) continue;
        const auto link = [&](bool inside, std::size_t j) {
          if (inside && j < bodies) {
            meta.edges.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)});
          }
        };
        link(x + 1 < side, index(x + 1, y, z));
        link(y + 1 < side, index(x, y + 1, z));
        link(z + 1 < side, index(x, y, z + 1));
      }
    }
  }
  meta.stat_names = {tj::stat::kLoad, tj::stat::kMass};
  meta.dt_s = 0.1;
  meta.interval_s = 1.0;
  meta.trace_end_s = 10.0;
  meta.integrator = "rk4";
  tj::Writer writer(path, meta);
  Eigen::Matrix3Xd base(3, static_cast<Eigen::Index>(bodies));
  for (std::size_t i = 0; i < bodies; ++i) {
    const auto c = static_cast<Eigen::Index>(i);
    base(0, c) = static_cast<double>(i % side) + 0.2 * static_cast<double>(unit(rng));
    base(1, c) = static_cast<double>((i / side) % side) + 0.2 * static_cast<double>(unit(rng));
    base(2, c) = static_cast<double>(i / (side * side)) + 0.2 * static_cast<double>(unit(rng));
  }
  const Eigen::MatrixXd stats = Eigen::MatrixXd::Ones(2, static_cast<Eigen::Index>(bodies));
  for (int k = 0; k <= 10; ++k) {
    const double a = 0.6 * k;
    Eigen::Matrix3Xd p = base;
    Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, static_cast<Eigen::Index>(bodies));
    p.row(0).array() += 0.3 * std::cos(a);
    p.row(1).array() += 0.3 * std::sin(a);
    v.row(0).setConstant(-0.18 * std::sin(a));
    v.row(1).setConstant(0.18 * std::cos(a));
    writer.append_frame(k, p, v, stats);
  }
  writer.commit();
}

struct Result {
  double fps = 0;
  double cpu_ms_per_frame = 0;
  std::size_t frames = 0;
  double formulas_ms = 0;  ///< opening the [visual] formulas (--visual)
};

// The [visual] section --visual uses: colours and sizes from formulas over the frame statistics.
const char* const kVisualMapping = R"toml([forces.friction]
beta = 1
[visual]
colour_map = "viridis"
colour = "load * (2 + sin(index))"
scale = "0.75 + 0.5 * abs(sin(index))"
)toml";

Result run_window(const kanoko::trajectory::Reader& reader, std::optional<BodyStyle> style,
                  int w, int h, double seconds, const std::string& screenshot, bool visual) {
  using namespace kanoko::scene;
  TrajectoryScene scene(reader, w, h, style);
  // Every body in the chosen style: above 50 000 the scene would draw hosts instead
  // (bench_viewer --levels compares the levels).
  scene.set_level(0);
  Result r;
  if (visual) {
    const double cpu_start = cpu_seconds();
    scene.use_mapping_formulas(kanoko::mapping::parse_mapping_text(kVisualMapping, "bench-visual.toml"), "bench");
    r.formulas_ms = 1e3 * (cpu_seconds() - cpu_start);
  }
  ReplayClock clock(reader.begin_time(), reader.end_time(), 2.0);
  osgViewer::Viewer viewer;
  viewer.setThreadingModel(osgViewer::Viewer::SingleThreaded);
  viewer.setUpViewInWindow(0, 0, w, h);
  viewer.realize();
  if (!viewer.isRealized()) {
    std::cerr << "cannot open a window; run under xvfb-run\n";
    std::exit(1);
  }
  const HomeView home = home_view(scene.bound(), static_cast<double>(w) / h);
  viewer.getCamera()->setClearColor(background_colour());
  viewer.getCamera()->setProjectionMatrixAsPerspective(home.fovy_deg, static_cast<double>(w) / h,
                                                       home.near_m, home.far_m);
  scene.root()->setUpdateCallback(new ReplayUpdateCallback(clock, scene));
  viewer.setSceneData(scene.root());
  viewer.setCameraManipulator(make_manipulators(home).get());
  osg::ref_ptr<CaptureCallback> capture = new CaptureCallback;
  viewer.getCamera()->setFinalDrawCallback(capture.get());

  using Clock = std::chrono::steady_clock;
  viewer.frame(clock.time_s());  // warm-up: shader compilation, buffer uploads
  const double cpu0 = cpu_seconds();
  const auto start = Clock::now();
  auto last = start;
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    const auto now = Clock::now();
    clock.advance(std::chrono::duration<double>(now - last).count());
    if (clock.paused()) clock.play();  // loop the run
    last = now;
    viewer.frame(clock.time_s());
    ++r.frames;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  r.fps = static_cast<double>(r.frames) / wall;
  r.cpu_ms_per_frame = 1e3 * (cpu_seconds() - cpu0) / static_cast<double>(r.frames);
  if (!screenshot.empty()) {
    capture->arm();
    viewer.frame(clock.time_s());
    osgDB::writeImageFile(*capture->image(), screenshot);
  }
  return r;
}

const char* style_name(BodyStyle s) {
  switch (s) {
    case BodyStyle::meshes:
      return "meshes";
    case BodyStyle::impostors:
      return "impostors";
    case BodyStyle::cloud:
      return "cloud";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> counts{1000, 10000, 100000};
  std::optional<BodyStyle> style;
  double seconds = 4.0;
  int w = 1280;
  int h = 720;
  std::string screenshot;
  bool visual = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--bodies") {
      counts = {static_cast<std::size_t>(std::stoul(next()))};
    } else if (a == "--style") {
      const std::string s = next();
      if (s == "meshes") style = BodyStyle::meshes;
      else if (s == "impostors") style = BodyStyle::impostors;
      else if (s == "cloud") style = BodyStyle::cloud;
      else if (s != "auto") {
        std::cerr << "--style: auto, meshes, impostors or cloud\n";
        return 2;
      }
    } else if (a == "--seconds") {
      seconds = std::stod(next());
    } else if (a == "--size") {
      const auto size = kanoko::scene::parse_image_size(next(), "--size");
      w = size.width_px;
      h = size.height_px;
    } else if (a == "--screenshot") {
      screenshot = next();
    } else if (a == "--visual") {
      visual = true;
    } else {
      std::cerr << "usage: kanoko_bench_scene [--bodies N] [--style auto|meshes|impostors|cloud] "
                   "[--seconds S] [--size WxH] [--screenshot shot.png] [--visual]\n";
      return 2;
    }
  }
  if (!kanoko::scene::display_variable_set()) {
    std::cerr << "needs an X display: run under xvfb-run -a -s '-screen 0 1280x720x24 -noreset'\n";
    return 1;
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 1) load[0] = -1;
  std::printf("window %dx%d, %.1f s per case, load average %.2f at start\n", w, h, seconds,
              load[0]);
  std::printf("%10s %10s %8s %8s %14s%s\n", "bodies", "style", "frames", "FPS", "CPU ms/frame",
              visual ? "   formulas: open ms" : "");
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kanoko_bench_scene_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const std::size_t n : counts) {
    const auto path = dir / ("run" + std::to_string(n) + ".kntj");
    write_synthetic_run(path, n);
    const kanoko::trajectory::Reader reader(path);
    const BodyStyle used = style.value_or(kanoko::scene::body_style_for(n));
    const Result r = run_window(reader, style, w, h, seconds, screenshot, visual);
    std::printf("%10zu %10s %8zu %8.1f %14.1f", n, style_name(used), r.frames, r.fps, r.cpu_ms_per_frame);
    if (visual) std::printf("   %19.1f", r.formulas_ms);
    std::printf("\n");
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
