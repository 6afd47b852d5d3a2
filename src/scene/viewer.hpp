// `kanoko view`: the interactive window. Playback is driven by our ReplayClock (the osganimate
// pattern: the loop advances the clock by wall time and calls viewer.frame(trace time)).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/scene/render.hpp"
#include "src/scene/resimulator.hpp"
#include "src/scene/view_panels.hpp"
#include "src/scene/model/view_script.hpp"
#include "src/trajectory/follow.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

/// How to open the viewer.
struct ViewOptions {
  ImageSize size{1024, 768};
  /// False: `size` is only a wish, the window opens at a size that fits the screen; true (the
  /// user gave --size): that size, unless it is larger than the screen.
  bool size_given = false;
  /// Trace seconds per wall second; default ReplayClock::default_speed() (~20 s per run).
  std::optional<double> speed;
  /// Close the window after this many wall seconds (for scripted runs and tests).
  std::optional<double> exit_after_s;
  /// If set, what the frames cost (model/frame_stats.hpp) is written here as JSON on closing.
  std::filesystem::path frame_stats;
  /// When the command started (the time to the first frame counts from here).
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  /// If set, the last frame shown is written here (atomically) when the viewer closes.
  std::filesystem::path screenshot;
  /// Body to select at the start (name, or index if no body has that name); empty: none.
  std::string select;
  /// The level of the run's hierarchy drawn at the start, its groups closed ("rank", "host",
  /// ...); empty: default_level() (ranks, or hosts when the ranks are too many).
  std::string level;
  /// Start paused (the paused panel shows).
  bool start_paused = false;
  /// Labels, trails, spring colours, flashes and textures from the start (the command line over
  /// the mapping's [visual], visual_from_mapping()); the viewer adds the ground grid.
  VisualOptions visual;
  /// The run's own mapping (stored_mapping()): [visual] colour and scale formulas, [audio]. May
  /// be null.
  std::shared_ptr<const mapping::Mapping> mapping;
  /// Window title.
  std::string title = "Kanoko";
  /// Companion views shown as panels (src/views); none by default.
  ViewPanelOptions panels;
  /// Play the sound cues (sonify/, the [audio] section of the run's mapping); with no sound
  /// device the viewer says so once and runs silently.
  bool sound = true;
  /// The run's file name, for messages about its stored mapping.
  std::string run_name = "the run";
  /// The `p` key writes screenshot_folder/screenshot_stem-NNN.png (the first free NNN).
  std::filesystem::path screenshot_folder = ".";
  std::string screenshot_stem = "kanoko";
  /// The help panel at the start: on, off, or (unset) only on the first run (a marker in the
  /// user's config folder, first_run_marker()).
  std::optional<bool> help_open;
  /// Commands to run (--script, view_script.hpp); empty: interactive. `script_name` names the
  /// file in messages.
  std::vector<ScriptCommand> script;
  std::string script_name;
  /// Re-simulates with changed force parameters from the paused panel (the paper's interactive
  /// modelling); null: the panel has no force parameters. Must outlive the viewer.
  Resimulator* resimulator = nullptr;
  /// The session to restore and save (--session); empty: the run's own session in the config
  /// folder (session.hpp), or none in a scripted run, which starts from the defaults.
  std::filesystem::path session_file;
  /// The code locations panel (locations_panel.hpp): the run's trace (empty: `locations_missing`
  /// says why there is none) and its format.
  std::filesystem::path locations_trace;
  std::string locations_format = "auto";
  std::string locations_missing;
  /// The source panel's search paths (--source-path, as given); empty: the session's.
  std::vector<std::string> source_paths;
  /// A run still being written (`kanoko view TRACE`, or RUN while `kanoko simulate` writes it):
  /// the viewer polls it between frames and plays what is there (docs/viewer.md, "Watching a
  /// simulation"); it follows the same Reader run_viewer() gets. Null: a whole run. While the run
  /// grows there is no re-simulation and no sound.
  trajectory::Follower* follower = nullptr;
  /// For --frame-stats with a follower: seconds from `started` until the simulation started
  /// writing and until its first frames could be read.
  double writing_s = -1;
  double first_frames_s = -1;
};

/// $XDG_CONFIG_HOME/kanoko/help-shown (else ~/.config/kanoko/help-shown): present once the
/// viewer has shown its help on a first run. Empty when neither variable is set.
[[nodiscard]] std::filesystem::path first_run_marker();

class AudioLink;
class ReplayUpdateCallback;

/// Makes the sound cues (`audio`) and the companion view panels (`panels`), either may be null,
/// follow each re-simulated run `replay` switches the scene to; both must outlive `replay`'s use.
void follow_resimulated_runs(ReplayUpdateCallback& replay, AudioLink* audio, ViewPanels* panels);

/// The first free name folder/stem-NNN.png, NNN from 001. Throws RunError if all are taken.
[[nodiscard]] std::filesystem::path next_screenshot_path(const std::filesystem::path& folder,
                                                         const std::string& stem);

/// Opens the window and plays the run until the window is closed (Esc) or exit_after_s passes.
/// Throws RunError when there is no display (DISPLAY unset, or the window cannot be opened);
/// the message points to `kanoko render` for pictures without a display.
void run_viewer(const trajectory::Reader& reader, const ViewOptions& options);

/// Throws RunError (pointing to `kanoko render` and xvfb-run) when DISPLAY is not set: checked
/// before any work that only the window would use, such as simulating a trace for it.
void require_display();

}  // namespace kanoko::scene
