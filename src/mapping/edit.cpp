#include "src/mapping/edit.hpp"

#include <cstdio>
#include <regex>
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
    if (line[begin] == '"' || line[begin] == '\'') {
      const char quote = line[begin];
      end = line.find(quote, begin + 1);
      if (end == std::string::npos) throw InputError(at->second, "cannot rewrite the string value of '" + dotted + "'");
      ++end;
    } else if (line[begin] == '[' || line[begin] == '{') {
      throw InputError(at->second, "'" + dotted + "' holds an array or table; not rewritten");
    } else {
      while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '#' && line[end] != ',' &&
             line[end] != '}') {
        ++end;
      }
    }
    line.replace(begin, end - begin, value);
    return join_lines(lines);
  }
  // Missing: under the section's header, or a new section at the end.
  const std::regex header("^\\s*\\[\\s*" + std::regex_replace(section, std::regex("\\."), "\\s*\\.\\s*") +
                          "\\s*\\]\\s*(#.*)?$");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (std::regex_match(lines[i], header)) {
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(i + 1), key + " = " + value + "  # added by kanoko suggest");
      return join_lines(lines);
    }
  }
  if (!lines.empty() && !lines.back().empty()) lines.emplace_back();
  lines.push_back("[" + section + "]  # added by kanoko suggest");
  lines.push_back(key + " = " + value);
  return join_lines(lines);
}

}  // namespace kanoko::mapping
