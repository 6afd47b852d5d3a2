// The viewer's session: what `kanoko view` remembers of a run between two openings (camera and
// its bookmarks, panels and toggles, visual choices, selection, time, speed and the timeline's
// zoom and range). A small JSON file per run in the user's config folder
// ($XDG_CONFIG_HOME/kanoko/sessions/<run hash>.json), or the file --session names. A file that is
// damaged, belongs to another run or comes from a newer Kanoko is reported (file, line, column
// where it applies) and the viewer opens with its defaults: a session never stops a run from
// being viewed.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kanoko::scene {

struct Session {
  static constexpr int kVersion = 1;
  std::uint64_t run_hash = 0;  ///< the run's input hash (Metadata::input_hash)
  using Matrix = std::array<double, 16>;
  std::optional<Matrix> camera;               ///< manipulator matrix
  std::array<std::optional<Matrix>, 9> bookmarks;
  // Panels and toggles.
  bool side = true;
  bool help = false;
  bool timeline = true;
  bool frame_rate = false;
  double side_width_px = 380;
  // Visual choices.
  bool labels = false;
  bool grid = true;
  std::string spring_colours = "tension";
  bool flashes = false;
  double trail_s = 0;
  double body_scale = 1;
  // Selection, time and the timeline.
  std::optional<std::size_t> selected_body;
  double time_s = 0;
  bool paused = false;
  double speed = 1;
  bool loop = false;
  bool reversed = false;
  std::optional<std::pair<double, double>> view_range;
  std::optional<std::pair<double, double>> range;
  /// Source search paths of the source panel (kanoko view --source-path), as given.
  std::vector<std::string> source_paths;
};

/// The session as JSON text.
[[nodiscard]] std::string session_json(const Session& s);
/// Reads a session; throws InputError naming `name` (and line:column for malformed JSON) when it
/// is not a session, is of a newer version, or has a value of the wrong kind.
[[nodiscard]] Session parse_session(const std::string& text, const std::string& name);
/// $XDG_CONFIG_HOME/kanoko, else ~/.config/kanoko; empty when neither variable is set.
[[nodiscard]] std::filesystem::path config_folder();
/// Where the session of a run with this input hash is kept by default; empty when neither
/// XDG_CONFIG_HOME nor HOME is set.
[[nodiscard]] std::filesystem::path default_session_path(std::uint64_t run_hash);

}  // namespace kanoko::scene
