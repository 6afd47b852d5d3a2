// The mapping's regular expressions ([trace] select, exclude, rename, host_from_name; [bodies]
// pattern) compiled with RE2: matching takes time linear in the name and bounded memory, so no
// pattern can crash or hang on a long name. The syntax is RE2's; look-around and back-references
// are refused with a message saying so. docs/mapping-language.md describes both.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "src/mapping/mapping.hpp"

namespace re2 {
class RE2;
}

namespace kanoko::mapping {

/// A pattern or replacement that cannot be used, with a one-line reason (no location: the caller
/// knows which key it came from).
class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A user's regular expression in RE2 syntax, compiled once. Copies share the compiled form.
class Pattern {
 public:
  /// Compiles `text`. Throws PatternError for a syntax error (RE2's message), look-around or a
  /// back-reference (named as such), or a pattern too large to search long names quickly.
  explicit Pattern(const std::string& text);

  /// The pattern as written.
  [[nodiscard]] const std::string& text() const { return text_; }
  /// Its number of capture groups.
  [[nodiscard]] int groups() const;
  /// True when the pattern matches somewhere in `subject` (a search, not a full match).
  [[nodiscard]] bool found_in(std::string_view subject) const;
  /// Capture group `group` (1-based) of the leftmost match in `subject`; nullopt when there is no
  /// match or the group took no part in it.
  [[nodiscard]] std::optional<std::string> group_in(std::string_view subject, int group) const;
  /// The engine's object, for Rewrite.
  [[nodiscard]] const re2::RE2& engine() const { return *re_; }

 private:
  std::string text_;
  std::shared_ptr<const re2::RE2> re_;
};

/// [pattern, replacement]: where the pattern is found in a name, the replacement with `$1` … `$9`
/// (capture groups), `$&` (the whole match) and `$$` (a dollar sign) filled in from that match.
class Rewrite {
 public:
  /// Compiles both. Throws PatternError (Pattern's, or re2_rewrite's for the replacement).
  Rewrite(const std::string& pattern, const std::string& replacement);

  /// The replacement filled in from the leftmost match in `subject`; nullopt when the pattern is
  /// not found.
  [[nodiscard]] std::optional<std::string> apply(std::string_view subject) const;

 private:
  Pattern pattern_;
  std::string rewrite_;  ///< the replacement in RE2's rewrite syntax (\0 … \9, \\)
};

/// The replacement `replacement` (Kanoko's `$1`, `$&`, `$$`) in RE2's rewrite syntax (`\1`, `\0`,
/// `$`), checked against a pattern with `groups` capture groups. Throws PatternError for `$`` or
/// `$'` (not supported), a two-digit group or a group the pattern does not have.
std::string re2_rewrite(const std::string& replacement, int groups);

/// Compiles `text`, the value of mapping key `key` (dotted, "trace.select"), throwing InputError
/// located at the key for a pattern that cannot be used.
Pattern mapping_pattern(const Mapping& m, const std::string& key, const std::string& text);
/// The same for a [pattern, replacement] key.
Rewrite mapping_rewrite(const Mapping& m, const std::string& key, const std::array<std::string, 2>& rule);

}  // namespace kanoko::mapping
