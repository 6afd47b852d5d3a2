// Interactive modelling in the viewer: force parameters changed while paused re-simulate from the
// frame on screen in the background, the scene switches to the new run, and the changed mapping
// can be saved (and re-simulates whole with `kanoko simulate`).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <cstring>
#include <sstream>
#include <osgViewer/Viewer>

#include "src/mapping/mapping.hpp"
#include "src/scene/audio_link.hpp"
#include "src/scene/control_panel.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/resimulator.hpp"
#include "src/sim/resimulate.hpp"
#include "src/scene/scene.hpp"
#include "src/scene/view_panels.hpp"
#include "src/scene/viewer.hpp"
#include "src/sim/simulate.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/ring_mapping.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using mapping::tunables;
using sim::Resimulation;

using test::TempDir;
using test::write_text;

const std::string kMapping = [] {
  test::RingMapping r;
  r.gain = 0.5;
  return test::ring_mapping(r);
}();

std::string trace() {
  std::string s = "kntr 1\n";
  for (int i = 0; i < 6; ++i) s += "node 0 " + std::to_string(i) + "\n";
  for (int step = 0; step < 12; ++step) {
    s += "msg " + std::to_string(step * 0.05) + " " + std::to_string(step % 6) + " " +
         std::to_string((step + 3) % 6) + " 500\n";
  }
  return s + "end 0.6\n";
}

/// A simulated run in a temporary folder; the process works in that folder (the run names its
/// trace relative to it, as `kanoko simulate` does).
struct SimulatedRun {
  TempDir dir;
  std::filesystem::path old_cwd = std::filesystem::current_path();
  std::unique_ptr<trajectory::Reader> reader;
  SimulatedRun() {
    std::filesystem::current_path(dir.path());
    write_text(dir / "t.kntr", trace());
    write_text(dir / "ring.toml", kMapping);
    sim::SimulateOptions o;
    o.trace = "t.kntr";
    o.mapping = "ring.toml";
    o.output = "run.kntj";
    o.progress = false;
    sim::simulate(o);
    reader = std::make_unique<trajectory::Reader>("run.kntj");
  }
  ~SimulatedRun() { std::filesystem::current_path(old_cwd); }
  SimulatedRun(const SimulatedRun&) = delete;
  SimulatedRun& operator=(const SimulatedRun&) = delete;
};

bool same_positions(const trajectory::Reader& a, const trajectory::Reader& b, std::size_t k) {
  const auto fa = a.frame(k);
  const auto fb = b.frame(k);
  return std::memcmp(fa.positions.data(), fb.positions.data(),
                     static_cast<std::size_t>(fa.positions.size()) * sizeof(double)) == 0;
}

TEST(Tunables, ReadFromTheMappingText) {
  const auto p = tunables(kMapping, "ring.toml");
  ASSERT_EQ(p.size(), 4U);
  EXPECT_EQ(p[0].section + "." + p[0].key, "forces.repulsion.strength");
  EXPECT_EQ(p[0].value, 0.01);
  EXPECT_EQ(p[1].key, "k");
  EXPECT_EQ(p[1].value, 2.0);
  EXPECT_EQ(p[2].key, "beta");
  EXPECT_EQ(p[3].key, "gain");
  EXPECT_EQ(p[3].value, 0.5);
  // Only what the mapping uses: here the repulsion alone.
  const auto only = tunables("[bodies]\nplacement = \"ring\"\n[forces.repulsion]\nstrength = 0.5\n", "m.toml");
  ASSERT_EQ(only.size(), 1U);
  EXPECT_EQ(only[0].label, "repulsion R");
}

TEST(Resimulation, ContinuesFromTheFrameWithTheChangedParameterAndSavesIt) {
  SimulatedRun run;
  Resimulation resim(*run.reader, run.dir / "work");
  EXPECT_FALSE(resim.edited());
  resim.change(2, 4.0, *run.reader, 6);  // friction × 4 from frame 6
  resim.wait();
  ASSERT_EQ(resim.error(), "");
  const trajectory::Reader* tuned = resim.take_finished();
  ASSERT_NE(tuned, nullptr);
  EXPECT_EQ(resim.take_finished(), nullptr) << "handed out once";
  ASSERT_EQ(tuned->frame_count(), run.reader->frame_count());
  for (std::size_t k = 0; k <= 6; ++k) EXPECT_TRUE(same_positions(*run.reader, *tuned, k)) << k;
  EXPECT_FALSE(same_positions(*run.reader, *tuned, tuned->frame_count() - 1));
  EXPECT_TRUE(resim.edited());
  EXPECT_EQ(resim.parameters()[2].value, 4.0);
  // The text keeps its comments; only the value changed.
  const std::string& text = resim.mapping_text();
  EXPECT_NE(text.find("beta = 4.0"), std::string::npos) << text;
  EXPECT_NE(text.find("k = 2   # stiffness"), std::string::npos) << text;
  EXPECT_NE(text.find("# a ring of bodies"), std::string::npos) << text;

  const auto saved = resim.save_mapping(run.dir.path());
  EXPECT_EQ(saved.filename(), "ring-tuned-001.toml");
  EXPECT_EQ(resim.save_mapping(run.dir.path()).filename(), "ring-tuned-002.toml");
  EXPECT_EQ(test::read_text(saved), text);
  // The saved mapping simulates the whole run.
  sim::SimulateOptions o;
  o.trace = "t.kntr";
  o.mapping = saved;
  o.output = "whole.kntj";
  o.progress = false;
  EXPECT_NO_THROW(sim::simulate(o));
  EXPECT_EQ(mapping::parse_mapping_file(saved).friction->beta, 4.0);
}

TEST(Resimulation, AMissingTraceIsReportedNotFatal) {
  SimulatedRun run;
  std::filesystem::rename("t.kntr", "moved.kntr");
  Resimulation resim(*run.reader, run.dir / "work");
  resim.change(1, 1.25, *run.reader, 2);
  resim.wait();
  EXPECT_EQ(resim.take_finished(), nullptr);
  EXPECT_NE(resim.error().find("t.kntr"), std::string::npos) << resim.error();
  EXPECT_NE(resim.status().find("re-simulation failed"), std::string::npos) << resim.status();
}

TEST(Resimulation, ANewChangeCancelsTheRunningOne) {
  SimulatedRun run;
  Resimulation resim(*run.reader, run.dir / "work");
  resim.change(0, 1.25, *run.reader, 0);
  resim.change(0, 1.25, *run.reader, 0);  // joins or cancels the first
  resim.wait();
  ASSERT_NE(resim.take_finished(), nullptr);
  EXPECT_NEAR(resim.parameters()[0].value, 0.01 * 1.25 * 1.25, 1e-15);
  EXPECT_NE(resim.mapping_text().find("strength = 0.015625"), std::string::npos) << resim.mapping_text();
}

constexpr int kW = 480;
constexpr int kH = 480;

TEST(Resimulation, PanelButtonsChangeParametersAndTheSceneShowsTheNewRun) {
  SimulatedRun run;
  Resimulation resim(*run.reader, run.dir / "work");
  ResimulatorOf<Resimulation> driver(resim);
  TrajectoryScene scene(*run.reader, kW, kH);
  ReplayClock clock(run.reader->begin_time(), run.reader->end_time(), 1.0);
  ControlPanel panel(clock, scene);
  panel.set_resimulation(&driver, run.dir.path());
  osgViewer::Viewer viewer;
  osg::ref_ptr<osgViewer::GraphicsWindowEmbedded> window = viewer.setUpViewerAsEmbeddedInWindow(0, 0, kW, kH);
  osg::ref_ptr<ReplayUpdateCallback> replay = new ReplayUpdateCallback(clock, scene);
  replay->set_control_panel(&panel);
  replay->set_resimulation(&driver);
  scene.root()->setUpdateCallback(replay.get());
  viewer.setSceneData(scene.root());
  osg::ref_ptr<PlaybackHandler> handler = new PlaybackHandler(clock, scene, {});
  handler->set_control_panel(&panel);
  viewer.addEventHandler(handler.get());
  const auto step = [&] {
    viewer.advance();
    viewer.eventTraversal();
    viewer.updateTraversal();
  };
  const auto click = [&](const osg::Vec2d& at) {
    window->getEventQueue()->mouseButtonPress(static_cast<float>(at.x()), static_cast<float>(kH - at.y()), 1);
    window->getEventQueue()->mouseButtonRelease(static_cast<float>(at.x()), static_cast<float>(kH - at.y()), 1);
    step();
  };
  clock.seek(0.2);
  clock.pause();
  step();
  ASSERT_TRUE(panel.visible());
  EXPECT_NE(panel.text().find("springs k  2"), std::string::npos) << panel.text();
  click(panel.parameter_button_centre(1, true));  // springs k × 1.25
  resim.wait();
  EXPECT_NE(panel.text().find("springs k  2.5"), std::string::npos) << panel.text();
  EXPECT_NE(panel.text().find("mapping  changed"), std::string::npos) << panel.text();
  step();  // the update picks up the finished run
  EXPECT_NE(&scene.reader(), run.reader.get()) << "the scene shows the re-simulated run";
  const Eigen::Matrix3Xd at_pause = scene.positions();
  Eigen::Matrix3Xd before;
  run.reader->positions_at(0.2, before);
  EXPECT_LT((at_pause - before).norm(), 1e-12) << "nothing changes before the paused frame";
  clock.seek(run.reader->end_time());
  step();
  Eigen::Matrix3Xd old_end;
  run.reader->positions_at(run.reader->end_time(), old_end);
  EXPECT_GT((scene.positions() - old_end).norm(), 1e-9) << "later frames follow the stiffer springs";
  clock.pause();
  step();
  click(panel.save_button_centre());
  EXPECT_NE(panel.save_message().find("ring-tuned-001.toml"), std::string::npos) << panel.save_message();
  EXPECT_TRUE(std::filesystem::exists(run.dir / "ring-tuned-001.toml"));
}

TEST(Resimulation, SoundCuesAndViewPanelsFollowTheNewRun) {
  SimulatedRun run;
  Resimulation resim(*run.reader, run.dir / "work");
  ResimulatorOf<Resimulation> driver(resim);
  TrajectoryScene scene(*run.reader, kW, kH);
  ReplayClock clock(run.reader->begin_time(), run.reader->end_time(), 1.0);
  // Sound through OpenAL Soft's null backend (ALSOFT_DRIVERS=null in the suite; silent without).
  std::ostringstream messages;
  osg::ref_ptr<AudioLink> audio = new AudioLink(*run.reader, mapping::AudioSpec{}, scene, "", messages);
  ViewPanelOptions views;
  views.views = {"matrix", "spacetime"};
  views.trace = run.dir / "t.kntr";
  const std::unique_ptr<ViewPanels> panels = make_view_panels(*run.reader, scene, clock, views);
  ASSERT_TRUE(panels);
  // The index builds in the background.
  for (int k = 0; k < 3000 && !panels->ready(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(panels->ready()) << panels->status();
  ASSERT_NE(panels, nullptr);
  osgViewer::Viewer viewer;
  viewer.setUpViewerAsEmbeddedInWindow(0, 0, kW, kH);
  osg::ref_ptr<ReplayUpdateCallback> replay = new ReplayUpdateCallback(clock, scene);
  replay->set_resimulation(&driver);
  follow_resimulated_runs(*replay, audio.get(), panels.get());
  scene.root()->setUpdateCallback(replay.get());
  viewer.setSceneData(scene.root());
  const osg::Matrixd view = osg::Matrixd::lookAt(osg::Vec3d(0, 0, 5), osg::Vec3d(0, 0, 0), osg::Vec3d(0, 1, 0));
  const auto step = [&] {
    viewer.advance();
    viewer.eventTraversal();
    viewer.updateTraversal();
    audio->update(clock, 0.01, view);
    panels->refresh();
    panels->finish_drawing();
  };
  clock.seek(0.2);
  clock.pause();
  step();
  const std::size_t draws = panels->draw_count(0);
  const std::size_t draws1 = panels->draw_count(1);
  EXPECT_EQ(&audio->run(), run.reader.get());
  EXPECT_EQ(&panels->run(), run.reader.get());
  resim.change(1, Resimulator::kStep, *run.reader, run.reader->frame_at_or_before(0.2));
  resim.wait();
  step();  // the update picks up the finished run
  const trajectory::Reader* now = &scene.reader();
  ASSERT_NE(now, run.reader.get()) << resim.error();
  EXPECT_EQ(&audio->run(), now) << "the cues are rebuilt from the new run";
  EXPECT_EQ(&panels->run(), now) << "the panels link to the new run";
  EXPECT_GT(panels->draw_count(0), draws) << "and are redrawn for it at once";
  EXPECT_GT(panels->draw_count(1), draws1);
  // Playing on works with the new run: a click in the scene's selection still reaches the panels.
  scene.select(Pick{Pick::Kind::body, 2, 0.0});
  step();
  EXPECT_EQ(panels->hub().current().entity, 2) << "bodies and entities still match";
}

/// The tiny run with the green body's load 0 until frame 5 and 5 from then on (one cue of the
/// default rule, load rising faster than 1 per second), or constant (no cue).
void write_load_run(const std::filesystem::path& path, bool rising) {
  test::TinyRunOptions o;
  o.load = [rising](std::size_t body, int frame) { return rising && body == 1 && frame < 5 ? 0.0 : 5.0; };
  test::write_tiny_run(path, o);
}

TEST(AudioLink, SetRunRebuildsTheCueScheduleFromTheNewRun) {
  TempDir dir;
  write_load_run(dir / "flat.kntj", false);
  write_load_run(dir / "rising.kntj", true);
  const trajectory::Reader flat(dir / "flat.kntj");
  const trajectory::Reader rising(dir / "rising.kntj");
  TrajectoryScene scene(flat, 320, 240);
  std::ostringstream messages;
  osg::ref_ptr<AudioLink> link = new AudioLink(flat, mapping::AudioSpec{}, scene, "", messages);
  EXPECT_TRUE(link->player().cues().empty());
  scene.set_reader(rising);
  link->set_run(rising);
  ASSERT_EQ(link->player().cues().size(), 1U);
  EXPECT_EQ(link->player().cues()[0].body, 1U);
  EXPECT_NEAR(link->player().cues()[0].time_s, 5.0, 1.0);
  // Playing through the cue starts it (on the null device; nothing starts when silent).
  ReplayClock clock(0, test::kTinyRunEnd_s, 1);
  const osg::Matrixd view = osg::Matrixd::lookAt(osg::Vec3d(0, 0, 5), osg::Vec3d(0, 0, 0), osg::Vec3d(0, 1, 0));
  link->update(clock, 0, view);
  for (int k = 0; k < 100; ++k) {
    clock.advance(0.1);
    link->update(clock, 0.1, view);
  }
  EXPECT_EQ(link->player().started(), link->engine().silent() ? 0U : 1U);
}

}  // namespace
}  // namespace kanoko::scene
