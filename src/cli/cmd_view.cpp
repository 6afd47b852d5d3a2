// kanoko view: the interactive 3-D viewer on a simulated run.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/output_target.hpp"
#include "src/base/progress.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/options.hpp"
#include "src/cli/run_setup.hpp"
#include "src/sim/resimulate.hpp"
#include "src/sim/simulate_job.hpp"
#include "src/mapping/mapping.hpp"
#include "src/profile/source_lines.hpp"
#include "src/scene/audio_link.hpp"
#include "src/scene/mapping_visual.hpp"
#include "src/scene/navigation.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/viewer.hpp"
#include "src/scene/viewer_ui.hpp"
#include "src/trajectory/follow.hpp"
#include "src/trajectory/trajectory.hpp"
#include "src/views/run_source.hpp"
#include "src/views/view.hpp"

namespace kanoko::cli {

namespace {
std::string key_help() {
  std::string text = "Keys and mouse (also shown by 'h' in the window):\n";
  for (const auto* group :
       {&scene::interface_bindings(), &scene::playback_bindings(), &scene::navigation_bindings(),
        &scene::audio_bindings()}) {
    for (const auto& b : *group) {
      std::string key = b.key;
      key.resize(std::max<std::size_t>(key.size(), 38), ' ');
      text += "  " + key + b.action + '\n';
    }
  }
  return text;
}
/// Seconds since `start`.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Waits until the run at `path`, still being written, has a whole block of frames (true), or
/// `writer_problem` says its writer stopped first (false). Ctrl-C ends the wait. With `opened`,
/// the run as it was opened to wait is handed over (true only), to be read without opening it again.
bool wait_for_frames(const std::filesystem::path& path, const std::function<std::string()>& writer_problem,
                     std::unique_ptr<trajectory::Reader>* opened = nullptr) {
  std::unique_ptr<trajectory::Reader> run;
  for (;;) {
    check_interrupt();
    const std::string problem = writer_problem();
    try {
      if (!run) run = std::make_unique<trajectory::Reader>(path, trajectory::Open::partial);
      run->refresh();
      if (run->frame_count() > 0) {
        if (opened != nullptr) *opened = std::move(run);
        return true;
      }
    } catch (const InputError&) {
      // The header or sections not on disk yet; a writer that died leaves them so: said below.
      if (!problem.empty()) throw;
    }
    if (!problem.empty()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// Why the writer of `path` (a temporary named after its process) stopped, or "" while it runs.
std::function<std::string()> temporary_writer_problem(const std::filesystem::path& path) {
  const int pid = temporary_writer(path);
  if (pid <= 0) return {};
  return [pid] {
    return process_running(pid) ? std::string() : "its writer, process " + std::to_string(pid) + ", no longer runs";
  };
}

}  // namespace

int cmd_view(const Args& args) {
  const auto command_start = std::chrono::steady_clock::now();
  const CommandSpec spec{
      "view", "RUN.kntj | TRACE [--mapping MAP | --purpose P] [--size WxH] [--speed X]",
      "Given a trace instead of a run, simulates it (with --mapping, or a mapping inferred for\n"
      "--purpose, docs/zero-configuration.md) into the cache folder $XDG_CACHE_HOME/kanoko (never\n"
      "beside the trace; reused while trace and mapping are unchanged) and plays the frames as soon\n"
      "as they are integrated: the timeline shades what is not simulated yet, playback waits at the\n"
      "edge, and a seek beyond it waits there until the simulation gets there. Closing the window\n"
      "before the end lets the simulation finish into the cache (Ctrl-C cancels it, leaving nothing).\n"
      "The same happens for a RUN that another 'kanoko simulate' is writing, or an incomplete RUN:\n"
      "if it stops growing (its writer died), the viewer says so (after --stall-timeout, or at once\n"
      "when its writer is known to be gone) and the frames so far still play. A script waits for\n"
      "frames with 'wait-run SECONDS|end' (docs/viewer.md, \"Watching a simulation\").\n"
      "Opens a window on the run and plays it: bodies as lit spheres, springs as cylinders coloured\n"
      "by tension (blue shorter, red longer than at the start), the clock dial in the corner\n"
      "(12 o'clock = start, clockwise, 6 o'clock = half-way). By default the whole run plays in\n"
      "about 20 s. Click a body or spring to see its statistics (top partners, a spring's pair\n"
      "traffic). Pause for the settings panel: speed, visual parameters and the force parameters\n"
      "(R, k, friction, communication gain); changing one re-simulates from the paused frame in the\n"
      "background (run from the folder where you ran 'kanoko simulate', so the trace is found),\n"
      "playback goes on with the new run, and 'save' writes MAPPING-tuned-NNN.toml.\n"
      "Above 2000 bodies they are drawn as sphere impostors, above 50000 as a cloud of dots with\n"
      "one wire sphere per host. The [visual] section of the run's mapping (docs/mapping-language.md)\n"
      "sets body colours (a formula through a colour map), sizes, a texture image, label text and\n"
      "trails; --labels, --trail and --textures override it. Needs a display; without one, use\n"
      "'kanoko render'.\n"
      "The side panel's Code locations section lists where in the code the trace's time goes (the\n"
      "profile of 'kanoko profile', by line, function or call path); a selected body shows its own\n"
      "top locations; choosing one highlights the bodies and marks the times where it dominates and\n"
      "shows its source lines from the --source-path folders (docs/profile.md, \"In the viewer\").\n\n" +
          key_help(),
      "  kanoko view traces/smpi/halo2d-16-torus.trace\n"
      "  kanoko view run.trace --purpose waiting\n"
      "  kanoko view ring.kntj\n"
      "  kanoko view ring.kntj --speed 0.5 --size 1280x720\n"
      "  kanoko view mesh.kntj --springs traffic --flashes\n"
      "  xvfb-run -a kanoko view ring.kntj --exit-after 2 --screenshot shot.png\n"
      "  xvfb-run -a kanoko view ring.kntj --script demo.txt\n"
      "  kanoko simulate big.trace --purpose balance -o big.kntj & kanoko view big.kntj\n"
      "  kanoko view traces/smpi/late4-locations.trace --source-path traces/smpi\n"};

  std::string run;
  std::string size_text;
  std::string screenshot;
  std::string select;
  std::string level;
  bool paused = false;
  std::string labels;
  bool no_sound = false;
  std::string views_text;
  std::string view_group;
  std::string view_groups;
  std::string views_trace;
  bool flashes = false;
  std::string springs;
  std::string textures;
  std::string script;
  std::string help_window;
  std::string session;
  std::string frame_stats;
  std::vector<std::string> source_paths;
  po::options_description options("Options");
  add_mapping_options(options, true);
  options.add_options()("run", po::value<std::string>(&run)->required(),
                        "trajectory file from 'kanoko simulate', or a trace to simulate first (the first argument)")(
      "format", po::value<std::string>(), "with a trace: its format, auto or a reader name")(
      "size", po::value<std::string>(&size_text),
      "window size in pixels, WIDTHxHEIGHT (default: 1280x800, shrunk to fit the screen)")(
      "script", po::value<std::string>(&script),
      "run the commands of this file (keys, clicks at named elements or bodies, waits, seeks, "
      "screenshots, layout as JSON, the inspect text; docs/viewer.md), then close")(
      "session", po::value<std::string>(&session),
      "restore the camera, bookmarks, panels, selection, time and timeline from this file and save "
      "them there on closing (default: the run's own session in ~/.config/kanoko/sessions; a "
      "--script run starts from the defaults)")(
      "source-path", po::value<std::vector<std::string>>(&source_paths)->composing(),
      "a folder to look for source files in (repeatable): the Code locations panel shows the lines around a "
      "chosen location when its file is found under one; nothing outside them is read (default: the session's)")(
      "help-window", po::value<std::string>(&help_window)->default_value("auto"),
      "the help panel at the start: on, off, or auto (on the first run only)")(
      "speed", po::value<double>(),
      "playback speed in trace seconds per wall second (default: whole run in ~20 s)")(
      "exit-after", po::value<double>(), "close the window after this many wall seconds")(
      "stall-timeout", po::value<double>()->default_value(60.0),
      "a run still being written that has not grown for this many seconds is said to have stopped "
      "(sooner when its writer is known to be gone); a --script waiting for its frames then fails")(
      "frame-stats", po::value<std::string>(&frame_stats),
      "write what the frames cost to this JSON file on closing: time to the first frame, when the "
      "views were ready, median/p99/max frame time while their index built and after")(
      "screenshot", po::value<std::string>(&screenshot),
      "write the last frame shown to this image (.png) when the window closes")(
      "select", po::value<std::string>(&select),
      "select this body (name or index) at the start: highlighted, statistics shown")(
      "level", po::value<std::string>(&level),
      "draw this level of the run's hierarchy at the start, each group as one body at its members' "
      "centroid (a click opens one, key e closes it again): rank, host, the trace's container levels "
      "(zone, ...) or cluster where the host names make one (kanoko info RUN lists the levels; "
      "default: ranks, or hosts when there are more than 50000 ranks)")(
      "paused", po::bool_switch(&paused), "start paused (the paused panel shows)")(
      "labels", po::value<std::string>(&labels)->implicit_value("name"),
      "labels from the start (key l): --labels shows names, --labels=rank|host|index other text, "
      "--labels=none hides them (default: [visual] labels of the run's mapping)")(
      "trail", po::value<double>(), "show trails of this many trace seconds (key t)")(
      "no-sound", po::bool_switch(&no_sound),
      "no sound cues (by default they play: [audio] in the mapping, docs/sound.md)")(
      "views", po::value<std::string>(&views_text),
      "companion view panels, e.g. spacetime,matrix (docs/views.md; clicks select in the scene)")(
      "view-group", po::value<std::string>(&view_group),
      "a named group of views: saved to --view-groups FILE with --views, else loaded from it")(
      "view-groups", po::value<std::string>(&view_groups), "the file that keeps the view groups")(
      "trace", po::value<std::string>(&views_trace), "the views' trace, instead of the one the run records")(
      "springs", po::value<std::string>(&springs)->default_value("tension"),
      "spring colours: tension, traffic (bytes in the current interval) or off (key k)")(
      "flashes", po::bool_switch(&flashes),
      "lines between the bodies that communicate in the current interval (key x)")(
      "textures", po::value<std::string>(&textures),
      "patterns on the bodies from assets/textures: none, host (one per host) or body (default: "
      "the image of [visual] texture in the run's mapping, else none)");
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;
  (void)profile::checked_source_roots(source_paths, "--source-path");  // before anything is simulated

  scene::ViewOptions view;
  view.started = command_start;
  if (!size_text.empty()) {
    view.size = scene::parse_image_size(size_text, "--size");
    view.size_given = true;
  }
  if (help_window == "on" || help_window == "off") {
    view.help_open = help_window == "on";
  } else if (help_window != "auto") {
    throw InputError(FileLoc{"--help-window"}, "expected on, off or auto, got '" + help_window + "'");
  }
  if (!script.empty()) {
    // Checked before anything is simulated or a window opens.
    view.script = scene::parse_view_script(script);
    view.script_name = script;
  }
  if (vm.count("speed") != 0U) {
    const double speed = vm["speed"].as<double>();
    if (!std::isfinite(speed) || speed <= 0) {
      throw InputError(FileLoc{"--speed"},
                       "the speed must be a positive number of trace seconds "
                       "per wall second, got " +
                           std::to_string(speed));
    }
    view.speed = speed;
  }
  if (vm.count("exit-after") != 0U) {
    const double seconds = vm["exit-after"].as<double>();
    if (!std::isfinite(seconds) || seconds < 0) {
      throw InputError(FileLoc{"--exit-after"},
                       "expected a number of seconds >= 0, got " + std::to_string(seconds));
    }
    view.exit_after_s = seconds;
  }
  view.screenshot = screenshot;
  if (!frame_stats.empty()) view.frame_stats = checked_output_target(frame_stats);
  view.select = select;
  view.level = level;
  view.start_paused = paused;
  view.visual.flashes = flashes;
  view.visual.spring_colours = scene::parse_spring_colours(springs, "--springs");
  scene::VisualOverrides overrides;
  if (vm.count("labels") != 0U) overrides.labels = scene::parse_label_kind(labels, "--labels");
  if (vm.count("textures") != 0U) overrides.textures = scene::parse_body_textures(textures, "--textures");
  if (vm.count("trail") != 0U) overrides.trail_s = scene::checked_trail(vm["trail"].as<double>(), "--trail");

  const double stall_timeout = vm["stall-timeout"].as<double>();
  if (!std::isfinite(stall_timeout) || stall_timeout <= 0) {
    char given[32];
    std::snprintf(given, sizeof given, "%g", stall_timeout);
    throw InputError(FileLoc{"--stall-timeout"}, std::string("expected a positive number of seconds, got ") + given);
  }
  // A run still being written (by the simulation started here, or another 'kanoko simulate'):
  // opened with the frames it has and followed while it grows.
  std::unique_ptr<sim::SimulationJob> job;
  // The run being written, as the wait for its first frames opened it: opened once (its sections,
  // hundreds of MB of traffic at 10,000 bodies, checked and decoded while the first block is
  // integrated).
  std::unique_ptr<trajectory::Reader> waited;
  std::string follow_path;
  std::function<std::string()> writer_problem;
  std::error_code exists_ec;
  if (!std::filesystem::exists(run, exists_ec)) {
    // RUN itself is not there yet: another 'kanoko simulate' may be writing it.
    const std::vector<std::filesystem::path> writing = live_temporaries(run);
    if (!writing.empty()) {
      scene::require_display();
      follow_path = writing.front().string();
      writer_problem = temporary_writer_problem(writing.front());
      std::cerr << "kanoko view: " << run << " is being written (" << follow_path << "): playing its frames as they come\n";
      if (!wait_for_frames(follow_path, writer_problem, &waited)) {
        throw InputError(FileLoc{run}, "its writer stopped before writing any frame; simulate it again");
      }
      view.first_frames_s = seconds_since(command_start);
    }
  }
  if (!follow_path.empty()) {
    // followed below
  } else if (!trajectory::looks_like_trajectory(run)) {
    // A trace: simulate it into the cache (the same run is reused next time) in the background,
    // playing its frames as they come, unless no window can open to show it.
    scene::require_display();
    sim::SimulateOptions so;
    so.trace = run;
    choose_mapping(vm, run, "view", false, so);
    if (vm.count("format") != 0U) so.format = vm["format"].as<std::string>();
    so.output = cached_run(run, vm);
    {
      // A cached run left incomplete (a simulation killed half-way) is never reused: say so.
      std::error_code ec;
      if (std::filesystem::exists(so.output, ec)) {
        try {
          if (!trajectory::Reader(so.output, trajectory::Open::partial).complete()) {
            std::cerr << "kanoko view: " << so.output.string() << " " << trajectory::reuse_problem(so.output)
                      << ": simulating it again\n";
          }
        } catch (const InputError&) {
          // damaged: simulate says why it recomputes it
        }
      }
    }
    // One core is left to the window: the frame loop must not starve behind the force
    // evaluation's threads (the trajectory is the same for every thread count).
    so.threads = static_cast<int>(std::max(2U, std::thread::hardware_concurrency()) - 1U);
    so.calibration_threads = 0;  // before the first frames there is nothing to draw: every core
    std::cerr << "kanoko view: reading " << run << " and building its model...\n";
    job = std::make_unique<sim::SimulationJob>(so);
    sim::SimulationJob* j = job.get();
    writer_problem = [j] {
      if (!j->done()) return std::string();
      return j->summary() ? std::string("the simulation finished") : j->problem();
    };
    // Until the first frames are there (or the run was reused, or failed).
    for (;;) {
      check_interrupt();
      if (j->done() && j->summary()) break;
      j->rethrow();  // a bad trace or mapping: its error, as 'kanoko simulate' gives it
      if (const auto writing = j->writing()) {
        if (view.writing_s < 0) {
          view.writing_s = seconds_since(command_start);
          std::cerr << "kanoko view: simulating into " << so.output.string()
                    << ", playing the frames as they come (the timeline shows how far it has got)\n";
        }
        try {
          if (wait_for_frames(*writing, writer_problem, &waited)) {
            view.first_frames_s = seconds_since(command_start);
            follow_path = writing->string();
            break;
          }
        } catch (const InputError&) {
          if (!j->done()) throw;  // finished meanwhile: the temporary became the output
        }
        if (j->done() && !j->summary()) j->rethrow();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (follow_path.empty()) {
      // Finished (or reused) before any frame was shown: the whole run, as before.
      const sim::SimulateSummary s = *j->summary();
      print_notes("view", s);
      std::cerr << "kanoko view: " << (s.reused ? "reusing " : "simulated into ") << so.output.string() << '\n';
      job.reset();
    }
    if (vm.count("trace") == 0U) views_trace = run;
    run = so.output.string();
  } else if (vm.count("mapping") != 0U || vm.count("purpose") != 0U || vm.count("calibrate-like") != 0U ||
             vm.count("from") != 0U || vm.count("to") != 0U) {
    throw InputError(FileLoc{run}, "is a simulated run: --mapping, --purpose, --from, --to and --calibrate-like "
                                   "apply to a trace (simulate it again, or give the trace)");
  }
  if (follow_path.empty() && !job) {
    // A run opened by name that is not complete: still being written (followed), or killed (its
    // frames play, and the viewer says it stopped).
    std::optional<trajectory::Reader> probe;
    try {
      probe.emplace(run, trajectory::Open::partial);
    } catch (const InputError&) {
      // Damaged or not a run: opening it below says why.
    }
    if (probe && !probe->complete()) {
      scene::require_display();
      follow_path = run;
      writer_problem = temporary_writer_problem(run);
      std::cerr << "kanoko view: " << run << " " << trajectory::reuse_problem(run)
                << ": playing the frames it has while it grows\n";
      if (probe->frame_count() == 0 && (!writer_problem || !wait_for_frames(run, writer_problem, &waited))) {
        throw InputError(FileLoc{run}, "the run is incomplete and has no whole block of frames to show; re-simulate it");
      }
    }
  }
  // The file opened: the run, or the temporary file its writer is filling.
  std::string source = follow_path.empty() ? run : follow_path;
  // The code locations panel reads the run's trace, the one the views read.
  try {
    view.locations_trace = views::trace_for(source, views_trace);
    if (vm.count("format") != 0U) view.locations_format = vm["format"].as<std::string>();
  } catch (const InputError& e) {
    view.locations_missing = std::string(e.what()) + " (code locations need the trace)";
  }
  view.source_paths = source_paths;
  note_command_input(run);  // a --screenshot must not replace the run
  note_command_input(source);
  if (!session.empty()) view.session_file = checked_output_target(session);  // nor a --session
  // The run's own mapping: [visual] (colours, sizes, texture, labels, trails, views), [audio].
  // A simulation (this command's, or another process's) that ends between its first frames and
  // this opening has renamed its temporary file to the run: the whole run is opened instead.
  const auto open_source = [&]() -> scene::DrawnRun {
    try {
      if (waited && !follow_path.empty()) return scene::drawn_run_of(std::move(waited), source, overrides, view.visual);
      return scene::open_drawn_run(source, overrides, view.visual,
                                   follow_path.empty() ? trajectory::Open::complete : trajectory::Open::partial);
    } catch (const InputError&) {
      std::error_code ec;
      if (follow_path.empty() || std::filesystem::exists(follow_path, ec)) throw;
      while (job && !job->done()) {  // the rename is the job's last act
        check_interrupt();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (job && !job->summary()) job->rethrow();
    }
    follow_path.clear();
    source = run;
    return scene::open_drawn_run(source, overrides, view.visual, trajectory::Open::complete);
  };
  const scene::DrawnRun opened = open_source();
  const trajectory::Reader& reader = *opened.reader;
  std::unique_ptr<trajectory::Follower> follower;
  if (!follow_path.empty()) {
    follower = std::make_unique<trajectory::Follower>(*opened.reader, stall_timeout, writer_problem);
    view.follower = follower.get();
  }
  view.mapping = opened.mapping;
  view.visual = opened.visual;
  view.title = "Kanoko - " + run;
  view.run_name = run;
  view.sound = !no_sound;
  view.panels.views = views::views_from_options(views_text, view_group, view_groups);
  if (views_text.empty() && view_group.empty() && view.mapping) {
    // No views asked for here: those the run's mapping names in [visual] views.
    std::string list;
    for (const auto& name : view.mapping->visual.views) list += (list.empty() ? "" : ",") + name;
    if (!list.empty()) {
      view.panels.views = views::parse_view_list(list, view.mapping->where("visual.views").str() + ": [visual] views");
    }
  }
  if (!view.panels.views.empty()) {
    view.panels.trace = views::trace_for(source, views_trace);
    view.panels.index = view_index_options(source, view.panels.trace, view.panels.format);
  }
  note_command_input(view.panels.trace);
  view.screenshot_stem = "kanoko-" + std::filesystem::path(run).stem().string();
  // Re-simulation from the paused panel: the simulation library's driver, writing its runs to a
  // work folder that goes with it.
  sim::Resimulation resimulation(reader, std::filesystem::temp_directory_path() /
                                             ("kanoko-view-" + std::to_string(::getpid())));
  scene::ResimulatorOf<sim::Resimulation> resimulator(resimulation);
  view.resimulator = &resimulator;
  scene::run_viewer(reader, view);
  if (job) {
    // The window closed: the simulation goes on into the cache (Ctrl-C cancels it, leaving
    // nothing), so that the next 'kanoko view' of the trace opens the whole run at once.
    if (!job->done()) {
      std::cerr << "kanoko view: the window closed; finishing the simulation into the cache (Ctrl-C cancels)\n";
      ProgressBar bar("simulate", 1000, "per mille");
      while (!job->done()) {
        check_interrupt();
        bar.update(static_cast<std::uint64_t>(1000 * job->progress()));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      bar.finish();
    }
    job->rethrow();
    if (job->summary()) std::cerr << "kanoko view: simulated into " << run << '\n';
  }
  return 0;
}

}  // namespace kanoko::cli
