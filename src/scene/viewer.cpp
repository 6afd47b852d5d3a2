#include "src/scene/viewer.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <osgViewer/GraphicsWindow>
#include <osgViewer/Viewer>
#include <osgViewer/ViewerEventHandlers>
#include <string>
#include <thread>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/scene/audio_link.hpp"
#include "src/scene/navigation.hpp"
#include "src/scene/offscreen.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/resimulate.hpp"
#include "src/scene/scene.hpp"

namespace kanoko::scene {

namespace {

// Frames are paced to at most this rate; llvmpipe rarely gets there, a GPU would spin without it.
constexpr std::chrono::milliseconds kMinFramePeriod{16};

std::string no_display_message(const std::string& what) {
  return what +
         "; 'kanoko view' needs a window. To get a picture without a display, use "
         "'kanoko render RUN.kntj -o out.png' (or run the viewer under xvfb-run)";
}

/// Key `p`: asks the main loop for a screenshot of the next frame.
class ScreenshotKey : public osgGA::GUIEventHandler {
 public:
  bool handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& /*aa*/) override {
    if (ea.getEventType() != osgGA::GUIEventAdapter::KEYDOWN || ea.getKey() != 'p') return false;
    requested = true;
    return true;
  }
  bool requested = false;
};

}  // namespace

std::filesystem::path next_screenshot_path(const std::filesystem::path& folder, const std::string& stem) {
  for (int k = 1; k < 100000; ++k) {
    char number[16];
    std::snprintf(number, sizeof number, "%03d", k);
    const std::filesystem::path candidate = folder / (stem + "-" + number + ".png");
    std::error_code ec;
    if (!std::filesystem::exists(candidate, ec) && !ec) return candidate;
  }
  throw RunError("no free screenshot name " + stem + "-NNN.png in " + folder.string());
}

void follow_resimulated_runs(ReplayUpdateCallback& replay, AudioLink* audio, ViewPanels* panels) {
  if (audio != nullptr) replay.add_run_follower([audio](const trajectory::Reader& run) { audio->set_run(run); });
  if (panels != nullptr) replay.add_run_follower([panels](const trajectory::Reader& run) { panels->set_run(run); });
}

void require_display() {
  if (!display_variable_set()) throw RunError(no_display_message("no display: DISPLAY is not set"));
}

void run_viewer(const trajectory::Reader& reader, const ViewOptions& options) {
  require_display();
  if (!options.screenshot.empty()) check_image_output(options.screenshot);

  const int w = options.size.width_px;
  const int h = options.size.height_px;
  // Before the scene, so that the runs it hands to the scene outlive it.
  Resimulation resim(reader, std::filesystem::temp_directory_path() /
                                 ("kanoko-view-" + std::to_string(::getpid())));
  TrajectoryScene scene(reader, w, h);
  if (options.mapping) scene.use_mapping_formulas(*options.mapping, options.run_name);
  VisualOptions visual = options.visual;
  visual.grid = true;  // orientation while flying around; renders stay uncluttered
  scene.set_visual(visual);
  ReplayClock clock(
      reader.begin_time(), reader.end_time(),
      options.speed.value_or(ReplayClock::default_speed(reader.begin_time(), reader.end_time())));
  if (!options.select.empty()) {
    scene.select(Pick{Pick::Kind::body, find_body(reader, options.select, "--select"), 0.0});
  }
  if (options.start_paused) clock.pause();
  std::vector<double> frame_times(reader.frame_count());
  for (std::size_t k = 0; k < frame_times.size(); ++k) frame_times[k] = reader.frame_time(k);

  ControlPanel panel(clock, scene);
  panel.set_resimulation(&resim, options.screenshot_folder);
  // Companion views (src/views) as HUD panels, linked to the scene by selection and time.
  const std::unique_ptr<ViewPanels> view_panels = make_view_panels(reader, scene, clock, options.panels);
  // Sound before the window opens, so that a bad [audio] section fails early.
  osg::ref_ptr<AudioLink> audio;
  if (options.sound) {
    audio = new AudioLink(reader, options.mapping ? options.mapping->audio : mapping::AudioSpec{}, scene, "",
                          std::cerr);
  }

  // Declared after the clock, scene and panel it refers to, so it is destroyed first.
  osgViewer::Viewer viewer;
  // Single-threaded: the update callback edits geometry that the draw reads.
  viewer.setThreadingModel(osgViewer::Viewer::SingleThreaded);
  viewer.setUpViewInWindow(48, 48, w, h);
  viewer.realize();
  if (!viewer.isRealized()) {
    const char* d = std::getenv("DISPLAY");
    throw RunError(no_display_message(std::string("cannot open a window on display '") +
                                      (d != nullptr ? d : "") + "'"));
  }
  auto* window = dynamic_cast<osgViewer::GraphicsWindow*>(viewer.getCamera()->getGraphicsContext());
  if (window != nullptr) {
    window->setWindowName(options.title);
    const osg::GraphicsContext::Traits* traits = window->getTraits();
    if (traits != nullptr) scene.set_window_size(traits->width, traits->height);
  }

  const HomeView home =
      home_view(scene.bound(), static_cast<double>(scene.width_px()) / scene.height_px());
  osg::Camera* camera = viewer.getCamera();
  camera->setClearColor(background_colour());
  camera->setProjectionMatrixAsPerspective(
      home.fovy_deg, static_cast<double>(scene.width_px()) / scene.height_px(), home.near_m,
      home.far_m);
  // Always installed: --screenshot and the `p` key both read the last drawn frame back.
  osg::ref_ptr<CaptureCallback> capture = new CaptureCallback;
  camera->setFinalDrawCallback(capture.get());
  osg::ref_ptr<ScreenshotKey> screenshot_key = new ScreenshotKey;

  osg::ref_ptr<osgGA::KeySwitchMatrixManipulator> manipulators = make_manipulators(home);
  osg::ref_ptr<NavigationHandler> navigation = new NavigationHandler(*manipulators, scene);
  osg::ref_ptr<ReplayUpdateCallback> replay = new ReplayUpdateCallback(clock, scene);
  // Nested, so the camera follows the body after the scene moved to the new time.
  replay->addNestedCallback(new FollowCallback(*navigation));
  scene.root()->setUpdateCallback(replay.get());
  viewer.setSceneData(scene.root());
  viewer.setCameraManipulator(manipulators.get());
  replay->set_control_panel(&panel);
  replay->set_resimulation(&resim);
  // After a re-simulation the sound cues and the companion views follow the new run too.
  follow_resimulated_runs(*replay, audio.get(), view_panels.get());
  osg::ref_ptr<PlaybackHandler> playback = new PlaybackHandler(clock, scene, frame_times);
  playback->set_control_panel(&panel);
  if (view_panels) viewer.addEventHandler(view_panels->handler());
  viewer.addEventHandler(playback.get());
  viewer.addEventHandler(navigation.get());
  if (audio.valid()) viewer.addEventHandler(audio.get());
  viewer.addEventHandler(screenshot_key.get());
  osg::ref_ptr<osg::ApplicationUsage> usage = new osg::ApplicationUsage;
  usage->setDescription("Kanoko: " + options.title);
  viewer.addEventHandler(new osgViewer::HelpHandler(usage.get()));
  viewer.addEventHandler(new osgViewer::StatsHandler);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto last = start;
  bool first_frame = true;
  while (!viewer.done()) {
    const auto now = Clock::now();
    const double wall_dt_s = std::chrono::duration<double>(now - last).count();
    clock.advance(wall_dt_s);
    last = now;
    const bool shot = screenshot_key->requested;
    screenshot_key->requested = false;
    if (!options.screenshot.empty() || shot) capture->arm();
    if (view_panels) view_panels->refresh();
    viewer.frame(clock.time_s());
    // After the frame: its update traversal may have ended the run early at damaged frames.
    if (audio.valid()) audio->update(clock, wall_dt_s, viewer.getCamera()->getViewMatrix());
    if (shot && capture->image() != nullptr && capture->image()->data() != nullptr) {
      try {
        const auto path = next_screenshot_path(options.screenshot_folder, options.screenshot_stem);
        write_image_atomically(*capture->image(), path);
        std::printf("kanoko view: screenshot %s\n", path.string().c_str());
        std::fflush(stdout);
      } catch (const std::exception& e) {
        // A full disk or a read-only folder must not end the session.
        std::fprintf(stderr, "kanoko view: screenshot failed: %s\n", e.what());
      }
    }
    if (first_frame) keep_gl_driver_loaded();
    first_frame = false;
    check_interrupt();
    if (options.exit_after_s &&
        std::chrono::duration<double>(Clock::now() - start).count() >= *options.exit_after_s) {
      break;
    }
    const auto spent = Clock::now() - now;
    if (spent < kMinFramePeriod) std::this_thread::sleep_for(kMinFramePeriod - spent);
  }

  if (!options.screenshot.empty()) {
    if (capture->image() == nullptr || capture->image()->data() == nullptr) {
      throw RunError("no frame was drawn, so there is no screenshot for " +
                     options.screenshot.string());
    }
    write_image_atomically(*capture->image(), options.screenshot);
  }
}

}  // namespace kanoko::scene
