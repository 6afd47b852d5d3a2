#include "src/mapping/edit.hpp"

#include <cstdio>
#include <string_view>
#include <vector>

namespace kanoko::mapping {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) {
      if (pos < text.size()) lines.push_back(text.substr(pos));
      break;
    }
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + '\n';
  return out;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

/// True when `line` is the table header of `section` ("forces.friction"): `[forces.friction]`,
/// with blanks allowed around the brackets and dots, and a comment after. One pass, no
/// backtracking: a long line costs its length.
bool is_header(std::string_view line, std::string_view section) {
  std::size_t i = 0;
  auto skip_blanks = [&] {
    while (i < line.size() && is_blank(line[i])) ++i;
  };
  skip_blanks();
  if (i == line.size() || line[i] != '[') return false;
  ++i;
  for (std::size_t from = 0;;) {
    const std::size_t dot = section.find('.', from);
    const std::string_view part = section.substr(from, dot == std::string_view::npos ? std::string_view::npos : dot - from);
    skip_blanks();
    if (line.substr(i, part.size()) != part) return false;
    i += part.size();
    skip_blanks();
    if (dot == std::string_view::npos) break;
    if (i == line.size() || line[i] != '.') return false;
    ++i;
    from = dot + 1;
  }
  if (i == line.size() || line[i] != ']') return false;
  ++i;
  skip_blanks();
  return i == line.size() || line[i] == '#';
}

/// The end (one past the closing quote) of the one-line TOML string starting at `begin`, or npos
/// when it does not close on this line. Basic strings ("...") skip backslash escapes; literal
/// strings ('...') have none.
std::size_t string_end(const std::string& line, std::size_t begin) {
  const char quote = line[begin];
  for (std::size_t i = begin + 1; i < line.size(); ++i) {
    if (quote == '"' && line[i] == '\\') {
      ++i;
    } else if (line[i] == quote) {
      return i + 1;
    }
  }
  return std::string::npos;
}

}  // namespace

std::string toml_float(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "n": inf and nan stay as they are
  return s;
}

std::string set_value(const std::string& text, const Mapping& m, const std::string& section, const std::string& key,
                      const std::string& value) {
  std::vector<std::string> lines = split_lines(text);
  const std::string dotted = section + "." + key;
  const auto at = m.locations.find(dotted);
  if (at != m.locations.end() && at->second.line >= 1 && static_cast<std::size_t>(at->second.line) <= lines.size()) {
    std::string& line = lines[static_cast<std::size_t>(at->second.line - 1)];
    const auto begin = static_cast<std::size_t>(std::max<std::int64_t>(at->second.column - 1, 0));
    if (begin >= line.size()) throw InputError(at->second, "cannot rewrite '" + dotted + "' here");
    std::size_t end = begin;
    if (line.compare(begin, 3, "\"\"\"") == 0 || line.compare(begin, 3, "'''") == 0) {
      throw InputError(at->second, "'" + dotted + "' holds a multi-line string; not rewritten");
    } else if (line[begin] == '"' || line[begin] == '\'') {
      end = string_end(line, begin);
      if (end == std::string::npos) throw InputError(at->second, "cannot rewrite the string value of '" + dotted + "'");
    } else if (line[begin] == '[' || line[begin] == '{') {
      throw InputError(at->second, "'" + dotted + "' holds an array or table; not rewritten");
    } else {
      while (end < line.size() && !is_blank(line[end]) && line[end] != '#' && line[end] != ',' && line[end] != '}') {
        ++end;
      }
    }
    line.replace(begin, end - begin, value);
    return join_lines(lines);
  }
  // Missing: under the section's header, or a new section at the end.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_header(lines[i], section)) {
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(i + 1), key + " = " + value + "  # added by kanoko suggest");
      return join_lines(lines);
    }
  }
  if (!lines.empty() && !lines.back().empty()) lines.emplace_back();
  lines.push_back("[" + section + "]  # added by kanoko suggest");
  lines.push_back(key + " = " + value);
  return join_lines(lines);
}

std::vector<Tunable> tunables(const std::string& mapping_text, const std::string& name) {
  const Mapping m = parse_mapping_text(mapping_text, name);
  std::vector<Tunable> out;
  if (m.repulsion && m.repulsion->strength > 0) {
    out.push_back({"forces.repulsion", "strength", "repulsion R", m.repulsion->strength});
  }
  // Formulas (a per-pair k, a pull weight) are the user's to edit; numbers are tunable.
  if (m.springs.topology != SpringTopology::None && m.springs.topology != SpringTopology::Complete &&
      !m.springs.k_expression) {
    out.push_back({"springs", "k", "springs k", m.springs.k});
  }
  if (m.friction && m.friction->beta > 0) out.push_back({"forces.friction", "beta", "friction b", m.friction->beta});
  if (m.communication && m.communication->gain > 0 && !m.communication->weight) {
    out.push_back({"forces.communication", "gain", "comm. gain", m.communication->gain});
  }
  return out;
}

}  // namespace kanoko::mapping
