#include "src/mapping/pattern.hpp"

#include <re2/re2.h>

#include <vector>

namespace kanoko::mapping {

namespace {

/// RE2's memory budget for one pattern: a larger compiled form is refused at compile time.
constexpr std::int64_t kMaxMemory = std::int64_t{8} << 20;
/// The largest compiled program accepted. When RE2's DFA gives up on a pathological pattern its
/// fallback takes time proportional to program size × name length; this keeps that under about a
/// second for a 30,000-character name (measured with `[a-z]{1000}`-style patterns).
constexpr int kMaxProgram = 4000;
constexpr const char* kSyntax = "Kanoko's patterns are RE2 syntax, see https://github.com/google/re2/wiki/Syntax";

re2::StringPiece piece(std::string_view s) { return {s.data(), s.size()}; }

/// The first "(?..." group opening of `text` outside escapes and bracket classes: what RE2's
/// "invalid perl operator" refers to.
std::string_view first_group_flag(std::string_view text) {
  bool in_class = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      ++i;  // the escaped character
    } else if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
      if (i + 1 < text.size() && text[i + 1] == '^') ++i;
      if (i + 1 < text.size() && text[i + 1] == ']') ++i;  // a leading ']' is a member
    } else if (c == '(' && i + 1 < text.size() && text[i + 1] == '?') {
      return text.substr(i);
    }
  }
  return {};
}

/// Why RE2 refused `text`, in words for someone who wrote it for another engine.
std::string refusal(const std::string& text, const re2::RE2& re) {
  const std::string& arg = re.error_arg();
  if (re.error_code() == re2::RE2::ErrorBadPerlOp) {
    const std::string_view at = first_group_flag(text);
    auto starts = [&](std::string_view prefix) { return at.substr(0, prefix.size()) == prefix; };
    if (starts("(?=") || starts("(?!")) return "look-ahead is not supported (\"" + arg + "\"): " + kSyntax;
    if (starts("(?<=") || starts("(?<!")) {
      return "look-behind is not supported (\"" + std::string(at.substr(0, 4)) + "\"): " + kSyntax;
    }
    if (starts("(?<")) return "a named group is written (?P<name>...) in RE2 syntax, not (?<name>...)";
  }
  if (re.error_code() == re2::RE2::ErrorBadEscape && arg.size() == 2 &&
      ((arg[1] >= '1' && arg[1] <= '9') || arg[1] == 'k' || arg[1] == 'g')) {
    return "back-references are not supported (\"" + arg + "\"): " + kSyntax;
  }
  if (re.error_code() == re2::RE2::ErrorPatternTooLarge) {
    return "too large: RE2 compiles it to more than " + std::to_string(kMaxMemory >> 20) + " MiB";
  }
  return re.error() + " (" + kSyntax + ")";
}

}  // namespace

Pattern::Pattern(const std::string& text) : text_(text) {
  re2::RE2::Options options;
  options.set_log_errors(false);  // problems are reported to the user, located, by the caller
  options.set_max_mem(kMaxMemory);
  auto re = std::make_shared<const re2::RE2>(piece(text), options);
  if (!re->ok()) throw PatternError(refusal(text, *re));
  if (re->ProgramSize() > kMaxProgram) {
    throw PatternError("too large: it compiles to " + std::to_string(re->ProgramSize()) +
                       " RE2 instructions, more than " + std::to_string(kMaxProgram) +
                       ", and searching a long name with it could take seconds");
  }
  re_ = std::move(re);
}

int Pattern::groups() const { return re_->NumberOfCapturingGroups(); }

bool Pattern::found_in(std::string_view subject) const { return re2::RE2::PartialMatch(piece(subject), *re_); }

std::optional<std::string> Pattern::group_in(std::string_view subject, int group) const {
  if (group < 0 || group > groups()) return std::nullopt;
  std::vector<re2::StringPiece> parts(static_cast<std::size_t>(group) + 1);
  if (!re_->Match(piece(subject), 0, subject.size(), re2::RE2::UNANCHORED, parts.data(), group + 1)) return std::nullopt;
  const re2::StringPiece& g = parts.back();
  if (g.data() == nullptr) return std::nullopt;  // the group took no part in the match
  return std::string(g.data(), g.size());
}

std::string re2_rewrite(const std::string& replacement, int groups) {
  std::string out;
  for (std::size_t i = 0; i < replacement.size(); ++i) {
    const char c = replacement[i];
    if (c == '\\') {
      out += "\\\\";  // a literal backslash
      continue;
    }
    if (c != '$' || i + 1 == replacement.size()) {
      out += c;
      continue;
    }
    const char next = replacement[i + 1];
    if (next == '$') {
      out += '$';
      ++i;
    } else if (next == '&') {
      out += "\\0";
      ++i;
    } else if (next == '`' || next == '\'') {
      throw PatternError(std::string("'$") + next + "' (the text before or after the match) is not supported; use a group");
    } else if (next >= '0' && next <= '9') {
      if (i + 2 < replacement.size() && replacement[i + 2] >= '0' && replacement[i + 2] <= '9') {
        throw PatternError("'" + replacement.substr(i, 3) + "': a replacement refers to groups $1 to $9");
      }
      if (next - '0' > groups) {
        throw PatternError("'$" + std::string(1, next) + "' refers to group " + std::string(1, next) + ", but the pattern has " +
                           std::to_string(groups) + (groups == 1 ? " group" : " groups"));
      }
      out += '\\';
      out += next;
      ++i;
    } else {
      out += '$';  // a '$' before anything else stands for itself
    }
  }
  return out;
}

Rewrite::Rewrite(const std::string& pattern, const std::string& replacement)
    : pattern_(pattern), rewrite_(re2_rewrite(replacement, pattern_.groups())) {}

std::optional<std::string> Rewrite::apply(std::string_view subject) const {
  std::string out;
  if (!re2::RE2::Extract(piece(subject), pattern_.engine(), piece(rewrite_), &out)) return std::nullopt;
  return out;
}

Pattern mapping_pattern(const Mapping& m, const std::string& key, const std::string& text) {
  try {
    return Pattern(text);
  } catch (const PatternError& e) {
    throw InputError(m.where(key), "'" + key + "' is not a valid regular expression: " + e.what());
  }
}

Rewrite mapping_rewrite(const Mapping& m, const std::string& key, const std::array<std::string, 2>& rule) {
  try {
    return Rewrite(rule[0], rule[1]);
  } catch (const PatternError& e) {
    throw InputError(m.where(key), "'" + key + "' cannot be used: " + e.what());
  }
}

}  // namespace kanoko::mapping
