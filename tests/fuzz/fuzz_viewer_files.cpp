// libFuzzer target for the files the viewer reads (src/scene/model): the first byte chooses the
// reader, odd: a --script file (parse_view_script_text), even: a session (parse_session).
// Accepting or throwing kanoko::InputError are the only allowed outcomes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/base/error.hpp"
#include "src/scene/model/session.hpp"
#include "src/scene/model/view_script.hpp"
#include "tests/fuzz/targets.hpp"

void kanoko::fuzz::run_viewer_files(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if ((data[0] & 1U) != 0U) {
      g_count_sink = kanoko::scene::parse_view_script_text(text, "fuzz.txt").size();
    } else {
      const kanoko::scene::Session s = kanoko::scene::parse_session(text, "fuzz.json");
      g_count_sink = static_cast<std::size_t>(s.run_hash) + s.spring_colours.size() + (s.camera ? 1U : 0U);
    }
  } catch (const kanoko::InputError&) {
    // a refusal is a fine outcome
  }
}
