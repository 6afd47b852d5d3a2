// `kanoko view RUN --script FILE`: the viewer driven by a script, for tests under Xvfb and for
// reproducible demonstrations. One command per line ('#' starts a comment):
//
//   wait SECONDS                 wall time
//   wait-run SECONDS | end       until a run still being simulated has frames up to that trace
//                                time (end: until it is whole); the script fails with the
//                                viewer's message if the run stops growing first
//   frames N                     N drawn frames
//   type TEXT                    the characters of TEXT (the rest of the line), as key presses
//   key NAME                     a key press and release: one character, or space, left, right,
//                                up, down, home, end, esc, return, tab, f1 .. f9
//   click NAME [FX FY]           a left click on a named element of the interface (`layout`
//                                lists them: timeline.strip, button.play, menu.View, dial, ...),
//                                at fractions FX, FY of its width and height (default 0.5 0.5)
//   click body NAME              a left click on the body of that name (or index)
//   click group NAME [shift]     a left click on the closed group of that name (a host drawn as
//                                one body: the click opens it), optionally with Shift (selects it)
//   click X Y                    a left click at window pixel X, Y (origin top-left)
//   drag NAME FX0 FY0 FX1 FY1 [shift]   a left drag across an element, optionally with Shift
//   scroll NAME N                N wheel steps over an element (positive: up)
//   seek SECONDS | select T0 T1  trace time / timeline range, as a user's drag would set them
//   screenshot FILE              the next frame, whole window, as PNG
//   layout FILE                  every window's and the 3-D view's rectangle, the named elements,
//                                the playback state, the highlighted bodies, the timeline's marks,
//                                the side panel's texts and the hierarchy's cut (levels, the
//                                closed groups drawn, the selected group), as JSON
//   inspect FILE                 the inspect panel's text of the selected body, spring or group
//   quit
//
// The script is read and checked before the window opens (errors name FILE:LINE:COLUMN); a click
// at something not on screen stops the run with the script's line and a non-zero exit.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace kanoko::scene {

struct ScriptCommand {
  enum class Op { wait, wait_run, frames, key, type, click, click_body, click_group, click_at, drag, scroll, seek, select, screenshot, layout, inspect, quit };
  Op op = Op::wait;
  std::size_t line = 0;
  std::string name;  ///< key name, element name, body name or file
  double v[4] = {0, 0, 0, 0};
  bool shift = false;
};

/// Reads and checks a script. Throws InputError naming file:line:column on an unknown command,
/// a missing or malformed argument, or a key name it does not know.
[[nodiscard]] std::vector<ScriptCommand> parse_view_script(const std::filesystem::path& file);
/// The same for text in memory; `name` stands for the file in messages.
[[nodiscard]] std::vector<ScriptCommand> parse_view_script_text(const std::string& text, const std::string& name);

/// True for the key names a script may use (see above).
[[nodiscard]] bool script_key_known(const std::string& name);

}  // namespace kanoko::scene
