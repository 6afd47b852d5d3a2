#include "src/scene/model/view_script.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "src/base/error.hpp"

namespace kanoko::scene {

namespace {

struct Word {
  std::string text;
  std::size_t column = 0;  ///< 1-based
};

std::vector<Word> split_words(const std::string& line) {
  std::vector<Word> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) != 0) ++i;
    if (i >= line.size() || line[i] == '#') break;
    const std::size_t start = i;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) == 0) ++i;
    words.push_back({line.substr(start, i - start), start + 1});
  }
  return words;
}

double number(const Word& w, const FileLoc& line, const char* what) {
  double v = 0;
  const char* b = w.text.data();
  const char* e = b + w.text.size();
  const auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || !std::isfinite(v)) {
    FileLoc at = line;
    at.column = static_cast<std::int64_t>(w.column);
    throw InputError(at, std::string("expected ") + what + ", found '" + w.text + "'");
  }
  return v;
}

}  // namespace

bool script_key_known(const std::string& name) {
  static const char* const kNamed[] = {"space", "left", "right", "up", "down", "home", "end", "esc", "return", "tab",
                                       "f1",    "f2",   "f3",    "f4", "f5",   "f6",   "f7",  "f8",  "f9"};
  if (name.size() == 1) return std::isprint(static_cast<unsigned char>(name[0])) != 0;
  for (const char* k : kNamed) {
    if (name == k) return true;
  }
  return false;
}

std::vector<ScriptCommand> parse_view_script_text(const std::string& text, const std::string& name) {
  std::vector<ScriptCommand> out;
  std::istringstream in(text);
  std::string raw;
  std::size_t line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    const FileLoc loc(name, static_cast<std::int64_t>(line_no), 1);
    const std::vector<Word> w = split_words(raw);
    if (w.empty()) continue;
    auto fail = [&](std::size_t word, const std::string& message) -> InputError {
      FileLoc at = loc;
      at.column = static_cast<std::int64_t>(word < w.size() ? w[word].column : raw.size() + 1);
      return InputError(at, message);
    };
    auto need = [&](std::size_t min, std::size_t max, const char* usage) {
      if (w.size() < min) throw fail(w.size(), std::string("too few arguments: ") + usage);
      if (w.size() > max) throw fail(max, std::string("too many arguments: ") + usage);
    };
    ScriptCommand c;
    c.line = line_no;
    const std::string& op = w[0].text;
    if (op == "wait") {
      need(2, 2, "wait SECONDS");
      c.op = ScriptCommand::Op::wait;
      c.v[0] = number(w[1], loc, "seconds");
      if (c.v[0] < 0 || c.v[0] > 600) throw fail(1, "wait takes 0 to 600 seconds");
    } else if (op == "wait-run") {
      need(2, 2, "wait-run SECONDS|end");
      c.op = ScriptCommand::Op::wait_run;
      if (w[1].text == "end") {
        c.name = "end";
      } else {
        c.v[0] = number(w[1], loc, "a trace time in seconds, or end");
      }
    } else if (op == "frames") {
      need(2, 2, "frames N");
      c.op = ScriptCommand::Op::frames;
      c.v[0] = number(w[1], loc, "a frame count");
      if (c.v[0] < 0 || c.v[0] > 1e6 || c.v[0] != std::floor(c.v[0])) throw fail(1, "frames takes a whole number 0 to 1000000");
    } else if (op == "key") {
      need(2, 2, "key NAME");
      c.op = ScriptCommand::Op::key;
      c.name = w[1].text;
      if (!script_key_known(c.name)) {
        throw fail(1, "unknown key '" + c.name + "' (one character, or space, left, right, up, down, home, end, esc, return, tab, f1..f9)");
      }
    } else if (op == "type") {
      if (w.size() < 2) throw fail(1, "too few arguments: type TEXT");
      c.op = ScriptCommand::Op::type;
      c.name = raw.substr(w[1].column - 1);
      while (!c.name.empty() && std::isspace(static_cast<unsigned char>(c.name.back())) != 0) c.name.pop_back();
      for (const char ch : c.name) {
        if (std::isprint(static_cast<unsigned char>(ch)) == 0) throw fail(1, "type takes printable characters");
      }
      if (c.name.size() > 256) throw fail(1, "type takes at most 256 characters");
    } else if (op == "click") {
      need(2, 4, "click NAME [FX FY] | click body NAME | click group NAME [shift] | click X Y");
      if (w[1].text == "group") {
        need(3, 4, "click group NAME [shift]");
        c.op = ScriptCommand::Op::click_group;
        c.name = w[2].text;
        if (w.size() == 4) {
          if (w[3].text != "shift") throw fail(3, "expected 'shift' or nothing, found '" + w[3].text + "'");
          c.shift = true;
        }
      } else if (w[1].text == "body") {
        need(3, 3, "click body NAME");
        c.op = ScriptCommand::Op::click_body;
        c.name = w[2].text;
      } else if (w.size() == 3) {
        c.op = ScriptCommand::Op::click_at;
        c.v[0] = number(w[1], loc, "a pixel x");
        c.v[1] = number(w[2], loc, "a pixel y");
      } else {
        c.op = ScriptCommand::Op::click;
        c.name = w[1].text;
        c.v[0] = c.v[1] = 0.5;
        if (w.size() == 4) {
          c.v[0] = number(w[2], loc, "a fraction of the width");
          c.v[1] = number(w[3], loc, "a fraction of the height");
        }
        for (int k = 0; k < 2; ++k) {
          if (c.v[k] < 0 || c.v[k] > 1) throw fail(2 + static_cast<std::size_t>(k), "fractions are 0 to 1");
        }
      }
    } else if (op == "drag") {
      need(6, 7, "drag NAME FX0 FY0 FX1 FY1 [shift]");
      c.op = ScriptCommand::Op::drag;
      c.name = w[1].text;
      for (std::size_t k = 0; k < 4; ++k) {
        c.v[k] = number(w[2 + k], loc, "a fraction");
        if (c.v[k] < 0 || c.v[k] > 1) throw fail(2 + k, "fractions are 0 to 1");
      }
      if (w.size() == 7) {
        if (w[6].text != "shift") throw fail(6, "expected 'shift' or nothing, found '" + w[6].text + "'");
        c.shift = true;
      }
    } else if (op == "scroll") {
      need(3, 3, "scroll NAME N");
      c.op = ScriptCommand::Op::scroll;
      c.name = w[1].text;
      c.v[0] = number(w[2], loc, "a number of wheel steps");
      if (std::abs(c.v[0]) > 100 || c.v[0] != std::floor(c.v[0])) throw fail(2, "scroll takes a whole number -100 to 100");
    } else if (op == "seek") {
      need(2, 2, "seek SECONDS");
      c.op = ScriptCommand::Op::seek;
      c.v[0] = number(w[1], loc, "a trace time in seconds");
    } else if (op == "select") {
      need(3, 3, "select T0 T1");
      c.op = ScriptCommand::Op::select;
      c.v[0] = number(w[1], loc, "a trace time in seconds");
      c.v[1] = number(w[2], loc, "a trace time in seconds");
    } else if (op == "inspect") {
      need(2, 2, "inspect FILE");
      c.op = ScriptCommand::Op::inspect;
      c.name = w[1].text;
    } else if (op == "screenshot" || op == "layout") {
      need(2, 2, op == "layout" ? "layout FILE" : "screenshot FILE");
      c.op = op == "layout" ? ScriptCommand::Op::layout : ScriptCommand::Op::screenshot;
      c.name = w[1].text;
    } else if (op == "quit") {
      need(1, 1, "quit");
      c.op = ScriptCommand::Op::quit;
    } else {
      throw fail(0, "unknown command '" + op +
                        "' (wait, wait-run, frames, key, type, click, drag, scroll, seek, select, screenshot, layout, inspect, quit)");
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<ScriptCommand> parse_view_script(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(FileLoc(file.string()), "cannot read the script");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  if (s.size() > (1U << 20)) throw InputError(FileLoc(file.string()), "a script is at most 1 MiB");
  return parse_view_script_text(s, file.string());
}

}  // namespace kanoko::scene
