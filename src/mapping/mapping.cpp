#include "src/mapping/mapping.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <toml.hpp>

#include "src/base/atomic_file.hpp"
#include "src/base/suggest.hpp"
#include "src/mapping/pattern.hpp"

namespace kanoko::mapping {

const char* to_string(Placement p) {
  switch (p) {
    case Placement::Cube: return "cube";
    case Placement::Lattice: return "lattice";
    case Placement::Ring: return "ring";
    case Placement::Line: return "line";
    case Placement::Explicit: return "explicit";
    case Placement::Sphere: return "sphere";
    case Placement::Topology: return "topology";
  }
  return "?";
}

const char* to_string(SpringTopology t) {
  switch (t) {
    case SpringTopology::None: return "none";
    case SpringTopology::Ring: return "ring";
    case SpringTopology::Mesh: return "mesh";
    case SpringTopology::Explicit: return "explicit";
    case SpringTopology::Torus: return "torus";
    case SpringTopology::Hypercube: return "hypercube";
    case SpringTopology::FatTree: return "fat-tree";
    case SpringTopology::Dragonfly: return "dragonfly";
    case SpringTopology::Complete: return "complete";
    case SpringTopology::Trace: return "trace";
    case SpringTopology::Links: return "links";
  }
  return "?";
}

const char* to_string(BodyOrder o) {
  switch (o) {
    case BodyOrder::Declaration: return "declaration";
    case BodyOrder::Rank: return "rank";
    case BodyOrder::Name: return "name";
    case BodyOrder::Pattern: return "pattern";
    case BodyOrder::Table: return "table";
  }
  return "?";
}

const char* to_string(ColourMap c) {
  switch (c) {
    case ColourMap::Cividis: return "cividis";
    case ColourMap::Viridis: return "viridis";
    case ColourMap::Magma: return "magma";
    case ColourMap::Grey: return "grey";
    case ColourMap::Categorical: return "categorical";
  }
  return "?";
}

std::array<float, 3> colour_at(ColourMap map, double t) {
  using Anchors = std::vector<std::uint32_t>;  // 0xRRGGBB, evenly spaced over [0, 1]
  static const Anchors cividis{0x00224e, 0x35456c, 0x666970, 0x948e77, 0xc8b866, 0xfee838};
  static const Anchors viridis{0x440154, 0x3b528b, 0x21918c, 0x5ec962, 0xfde725};
  static const Anchors magma{0x000004, 0x3b0f70, 0x8c2981, 0xde4968, 0xfe9f6d, 0xfcfdbf};
  static const Anchors grey{0x262626, 0xf2f2f2};
  // Okabe & Ito's colour-blind-safe qualitative palette.
  static const Anchors categorical{0xe69f00, 0x56b4e9, 0x009e73, 0xf0e442, 0x0072b2, 0xd55e00, 0xcc79a7, 0x999999};
  if (!std::isfinite(t)) t = 0;
  t = std::clamp(t, 0.0, 1.0);
  auto rgb = [](std::uint32_t c, int shift) { return static_cast<double>((c >> shift) & 0xffU) / 255.0; };
  const Anchors* a = &cividis;
  switch (map) {
    case ColourMap::Cividis: a = &cividis; break;
    case ColourMap::Viridis: a = &viridis; break;
    case ColourMap::Magma: a = &magma; break;
    case ColourMap::Grey: a = &grey; break;
    case ColourMap::Categorical: {
      const auto k = std::min(categorical.size() - 1, static_cast<std::size_t>(t * static_cast<double>(categorical.size())));
      return {static_cast<float>(rgb(categorical[k], 16)), static_cast<float>(rgb(categorical[k], 8)),
              static_cast<float>(rgb(categorical[k], 0))};
    }
  }
  const double x = t * static_cast<double>(a->size() - 1);
  const auto i = std::min(a->size() - 2, static_cast<std::size_t>(x));
  const double f = x - static_cast<double>(i);
  std::array<float, 3> out{};
  for (int c = 0; c < 3; ++c) {
    const int shift = 16 - 8 * c;
    out[static_cast<std::size_t>(c)] = static_cast<float>((1 - f) * rgb((*a)[i], shift) + f * rgb((*a)[i + 1], shift));
  }
  return out;
}

std::vector<std::string> location_variables(const Mapping& m) {
  std::vector<std::string> out;
  for (const CodeLocationSpec& l : m.code_locations) {
    for (const std::string& v : l.variables()) out.push_back(v);
  }
  return out;
}

std::vector<std::string> pair_location_variables(const Mapping& m) {
  std::vector<std::string> out;
  for (const char* end : {"src_", "dst_"}) {
    for (const std::string& v : location_variables(m)) out.push_back(end + v);
  }
  return out;
}

std::vector<const ExpressionSpec*> expressions(const Mapping& m) {
  std::vector<const ExpressionSpec*> out;
  for (const auto* e : {&m.mass.expression, &m.springs.k_expression, &m.visual.colour, &m.visual.scale}) {
    if (*e) out.push_back(&**e);
  }
  if (m.communication && m.communication->weight) out.push_back(&*m.communication->weight);
  return out;
}

FileLoc Mapping::where(const std::string& key) const {
  // A key not given is expected in its table (the closest enclosing one given), else in the file
  // from its top.
  for (std::string k = key;;) {
    if (const auto it = locations.find(k); it != locations.end()) return it->second;
    const std::size_t dot = k.rfind('.');
    if (dot == std::string::npos) break;
    k.resize(dot);
  }
  return FileLoc{path.empty() ? std::string("<mapping>") : path, 1, 1};
}

namespace {

FileLoc loc_of(const toml::value& v, const std::string& name) {
  const toml::source_location l = v.location();
  return FileLoc{name, static_cast<std::int64_t>(l.line()), static_cast<std::int64_t>(l.column())};
}

const char* type_name(const toml::value& v) {
  switch (v.type()) {
    case toml::value_t::boolean: return "a boolean";
    case toml::value_t::integer: return "an integer";
    case toml::value_t::floating: return "a number";
    case toml::value_t::string: return "a string";
    case toml::value_t::array: return "an array";
    case toml::value_t::table: return "a table";
    case toml::value_t::empty: return "nothing";
    default: return "a date/time";
  }
}

/// Reads one TOML table, remembering which keys were used; the rest are reported as unknown.
class Section {
 public:
  Section(const toml::value* table, std::string path, std::string file, DiagnosticList& diag, Mapping& m)
      : table_(table), path_(std::move(path)), file_(std::move(file)), diag_(diag), mapping_(m) {}

  [[nodiscard]] bool present() const { return table_ != nullptr; }

  const toml::value* get(const std::string& key) {
    used_.push_back(key);
    mapping_.known_keys.insert(dotted(key));
    if (table_ == nullptr) return nullptr;
    const auto& t = table_->as_table();
    const auto it = t.find(key);
    if (it == t.end()) return nullptr;
    mapping_.locations[dotted(key)] = loc_of(it->second, file_);
    return &it->second;
  }

  std::optional<double> number(const std::string& key, double min, double max, bool min_exclusive = false) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    double x = 0;
    if (v->is_integer()) {
      x = static_cast<double>(v->as_integer());
    } else if (v->is_floating()) {
      x = v->as_floating();
    } else {
      error(*v, "'" + key + "' must be a number, found " + type_name(*v));
      return std::nullopt;
    }
    if (!std::isfinite(x)) {
      error(*v, "'" + key + "' must be finite");
      return std::nullopt;
    }
    if ((min_exclusive ? x <= min : x < min) || x > max) {
      std::ostringstream os;
      os << "'" << key << "' = " << x;
      if (x > max && max >= 1e300) {
        os << " is too large";
      } else {
        os << " is out of range: expected " << (min_exclusive ? "> " : ">= ") << min;
        if (max < 1e300) os << " and <= " << max;
      }
      error(*v, os.str());
      return std::nullopt;
    }
    return x;
  }

  std::optional<std::int64_t> integer(const std::string& key, std::int64_t min, std::int64_t max) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_integer()) {
      error(*v, "'" + key + "' must be an integer, found " + type_name(*v));
      return std::nullopt;
    }
    const std::int64_t x = v->as_integer();
    if (x < min || x > max) {
      error(*v, "'" + key + "' = " + std::to_string(x) + " is out of range: expected " + std::to_string(min) +
                    " to " + std::to_string(max));
      return std::nullopt;
    }
    return x;
  }

  /// A string that must be one of `options`.
  std::optional<std::size_t> choice(const std::string& key, const std::vector<std::string>& options) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) {
      error(*v, "'" + key + "' must be a string, found " + type_name(*v));
      return std::nullopt;
    }
    const std::string s = v->as_string();
    const auto it = std::find(options.begin(), options.end(), s);
    if (it == options.end()) {
      std::string valid;
      for (const auto& o : options) valid += (valid.empty() ? "" : ", ") + o;
      error(*v, "'" + key + "' = \"" + escaped_excerpt(s) + "\" is not valid" + did_you_mean(s, options) + "; valid: " + valid);
      return std::nullopt;
    }
    return static_cast<std::size_t>(it - options.begin());
  }

  std::optional<std::string> string(const std::string& key) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) {
      error(*v, "'" + key + "' must be a string, found " + type_name(*v));
      return std::nullopt;
    }
    return std::string(v->as_string());
  }

  std::optional<std::vector<std::string>> string_list(const std::string& key) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    std::vector<std::string> out;
    if (!v->is_array()) {
      error(*v, "'" + key + "' must be an array of strings, found " + type_name(*v));
      return std::nullopt;
    }
    for (const auto& e : v->as_array()) {
      if (!e.is_string()) {
        error(e, "'" + key + "' must hold strings, found " + type_name(e));
        return std::nullopt;
      }
      out.push_back(e.as_string());
    }
    return out;
  }

  /// An array of exactly `n` integers in [min, max].
  std::optional<std::vector<int>> int_array(const toml::value& v, const std::string& what, std::size_t n, int min,
                                            int max) {
    if (!v.is_array() || v.as_array().size() != n) {
      error(v, what + " must be an array of " + std::to_string(n) + " integers");
      return std::nullopt;
    }
    std::vector<int> out;
    for (const auto& e : v.as_array()) {
      if (!e.is_integer() || e.as_integer() < min || e.as_integer() > max) {
        error(e, what + " must hold integers from " + std::to_string(min) + " to " + std::to_string(max));
        return std::nullopt;
      }
      out.push_back(static_cast<int>(e.as_integer()));
    }
    return out;
  }

  std::optional<std::array<int, 3>> int3(const std::string& key, int min, int max) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    const auto a = int_array(*v, "'" + key + "'", 3, min, max);
    if (!a) return std::nullopt;
    return std::array<int, 3>{(*a)[0], (*a)[1], (*a)[2]};
  }

  std::optional<std::vector<Eigen::Vector3d>> points(const std::string& key) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_array()) {
      error(*v, "'" + key + "' must be an array of [x, y, z] points");
      return std::nullopt;
    }
    std::vector<Eigen::Vector3d> out;
    for (const auto& p : v->as_array()) {
      if (!p.is_array() || p.as_array().size() != 3) {
        error(p, "each point in '" + key + "' must be [x, y, z]");
        return std::nullopt;
      }
      Eigen::Vector3d q;
      for (int c = 0; c < 3; ++c) {
        const auto& e = p.as_array()[static_cast<std::size_t>(c)];
        if (e.is_integer()) {
          q[c] = static_cast<double>(e.as_integer());
        } else if (e.is_floating() && std::isfinite(e.as_floating())) {
          q[c] = e.as_floating();
        } else {
          error(e, "coordinates in '" + key + "' must be finite numbers");
          return std::nullopt;
        }
      }
      out.push_back(q);
    }
    return out;
  }

  std::optional<std::vector<std::array<int, 2>>> pairs(const std::string& key) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_array()) {
      error(*v, "'" + key + "' must be an array of [a, b] body index pairs");
      return std::nullopt;
    }
    std::vector<std::array<int, 2>> out;
    for (const auto& p : v->as_array()) {
      const auto a = int_array(p, "each edge in '" + key + "'", 2, 0, 1 << 30);
      if (!a) return std::nullopt;
      if ((*a)[0] == (*a)[1]) {
        error(p, "edge [" + std::to_string((*a)[0]) + ", " + std::to_string((*a)[1]) + "] joins a body to itself");
        return std::nullopt;
      }
      out.push_back({(*a)[0], (*a)[1]});
    }
    return out;
  }

  /// A formula (a string) for `scope`, compiled now: syntax errors and unknown names are
  /// reported at the column of the offending token.
  std::optional<ExpressionSpec> expression(const toml::value& v, const std::string& key, Scope scope) {
    if (!v.is_string()) {
      error(v, "'" + key + "' must be a formula in a string, found " + type_name(v));
      return std::nullopt;
    }
    ExpressionSpec e;
    e.key = dotted(key);
    e.text = v.as_string();
    e.scope = scope;
    e.loc = loc_of(v, file_);
    // A basic "..." or literal '...' string on one line: the text starts one column after the
    // quote (escapes inside would shift later columns; locations then point near the token).
    if (e.loc.column > 0) e.loc.column += 1;
    if (scope == Scope::Body) e.extra = location_variables(mapping_);
    if (scope == Scope::Pair) e.extra = pair_location_variables(mapping_);
    const auto problems = check_expression(e.text, scope, e.loc, &e.used, e.extra);
    for (const auto& d : problems) diag_.add(d.loc, "'" + key + "': " + d.message);
    if (!problems.empty()) return std::nullopt;
    return e;
  }

  std::optional<ExpressionSpec> expression(const std::string& key, Scope scope) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    return expression(*v, key, scope);
  }

  /// An array of integers in [min, max] with a length in [min_len, max_len].
  std::optional<std::vector<int>> int_list(const std::string& key, std::size_t min_len, std::size_t max_len, int min,
                                           int max) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_array() || v->as_array().size() < min_len || v->as_array().size() > max_len) {
      error(*v, "'" + key + "' must be an array of " + std::to_string(min_len) +
                    (max_len == min_len ? std::string() : " to " + std::to_string(max_len)) + " integers");
      return std::nullopt;
    }
    return int_array(*v, "'" + key + "'", v->as_array().size(), min, max);
  }

  /// A regular expression (RE2 syntax, src/mapping/pattern.hpp), compiled now to report
  /// mistakes at load time.
  std::optional<std::string> regex(const std::string& key, int min_groups) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    const auto text = string(key);
    if (!text) return std::nullopt;
    try {
      if (Pattern(*text).groups() < min_groups) {
        error(*v, "'" + key + "' needs a capture group ( ... ) around the number, as in \"pe(\\\\d+)\"");
        return std::nullopt;
      }
    } catch (const PatternError& e) {
      error(*v, "'" + key + "' is not a valid regular expression: " + e.what());
      return std::nullopt;
    }
    return text;
  }

  /// [pattern, replacement]: two strings, the first a valid pattern, the second a replacement
  /// using only groups the pattern has.
  std::optional<std::array<std::string, 2>> rewrite(const std::string& key) {
    const auto list = string_list(key);
    if (!list) return std::nullopt;
    const toml::value* v = get(key);
    if (list->size() != 2) {
      error(*v, "'" + key + "' must be [pattern, replacement], two strings, as in [\"^node(\\\\d+)-.*$\", \"n$1\"]");
      return std::nullopt;
    }
    int groups = 0;
    try {
      groups = Pattern((*list)[0]).groups();
    } catch (const PatternError& e) {
      error(v->as_array()[0], "'" + key + "': the pattern is not a valid regular expression: " + e.what());
      return std::nullopt;
    }
    try {
      re2_rewrite((*list)[1], groups);
    } catch (const PatternError& e) {
      error(v->as_array()[1], "'" + key + "': the replacement is not valid: " + e.what());
      return std::nullopt;
    }
    return std::array<std::string, 2>{(*list)[0], (*list)[1]};
  }

  /// An inline table of name → integer in [min, max].
  std::optional<std::map<std::string, int>> int_table(const std::string& key, int min, int max) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_table()) {
      error(*v, "'" + key + "' must be a table of name = integer, found " + type_name(*v));
      return std::nullopt;
    }
    std::map<std::string, int> out;
    for (const auto& [name, x] : v->as_table()) {
      if (!x.is_integer() || x.as_integer() < min || x.as_integer() > max) {
        error(x, "'" + key + "." + name + "' must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
        return std::nullopt;
      }
      out[name] = static_cast<int>(x.as_integer());
    }
    return out;
  }

  /// An inline table of name → string.
  std::optional<std::map<std::string, std::string>> string_table(const std::string& key) {
    const toml::value* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_table()) {
      error(*v, "'" + key + "' must be a table of name = \"name\", found " + type_name(*v));
      return std::nullopt;
    }
    std::map<std::string, std::string> out;
    for (const auto& [name, x] : v->as_table()) {
      if (!x.is_string()) {
        error(x, "'" + key + "." + name + "' must be a string, found " + type_name(x));
        return std::nullopt;
      }
      out[name] = x.as_string();
    }
    return out;
  }

  /// An array of exactly `n` finite numbers.
  std::optional<std::vector<double>> points_n(const toml::value& v, const std::string& what, std::size_t n) {
    if (!v.is_array() || v.as_array().size() != n) {
      error(v, what + " must be an array of " + std::to_string(n) + " numbers");
      return std::nullopt;
    }
    std::vector<double> out;
    for (const auto& e : v.as_array()) {
      const bool number = e.is_integer() || (e.is_floating() && std::isfinite(e.as_floating()));
      if (!number) {
        error(e, what + " must hold finite numbers");
        return std::nullopt;
      }
      out.push_back(e.is_integer() ? static_cast<double>(e.as_integer()) : e.as_floating());
    }
    return out;
  }

  /// A sub-table, or nullptr; reports a non-table value.
  const toml::value* subtable(const std::string& key) {
    const toml::value* v = get(key);
    if (v != nullptr && !v->is_table()) {
      error(*v, "'" + key + "' must be a table ([" + dotted(key) + "]), found " + type_name(*v));
      return nullptr;
    }
    return v;
  }

  /// The keys present in the table, in the file's order.
  [[nodiscard]] std::vector<std::string> keys_in_order() const {
    std::vector<std::pair<FileLoc, std::string>> keys;
    if (table_ != nullptr) {
      for (const auto& [key, value] : table_->as_table()) keys.emplace_back(loc_of(value, file_), key);
    }
    std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
      return std::tie(a.first.line, a.first.column) < std::tie(b.first.line, b.first.column);
    });
    std::vector<std::string> out;
    for (auto& k : keys) out.push_back(std::move(k.second));
    return out;
  }

  /// Reports keys present in the table that nothing asked for.
  void report_unknown_keys() {
    if (table_ == nullptr) return;
    std::vector<std::pair<FileLoc, std::string>> unknown;
    for (const auto& [key, value] : table_->as_table()) {
      if (std::find(used_.begin(), used_.end(), key) == used_.end()) unknown.emplace_back(loc_of(value, file_), key);
    }
    std::sort(unknown.begin(), unknown.end(), [](const auto& a, const auto& b) {
      return std::tie(a.first.line, a.first.column) < std::tie(b.first.line, b.first.column);
    });
    for (const auto& [loc, key] : unknown) {
      const std::string where = path_.empty() ? std::string("at the top level") : "in [" + path_ + "]";
      diag_.add(loc, "unknown key '" + escaped_excerpt(key) + "' " + where + did_you_mean(key, used_));
    }
  }

  void error(const toml::value& v, const std::string& message) { diag_.add(loc_of(v, file_), message); }

  [[nodiscard]] std::string dotted(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  const toml::value* table_;
  std::string path_;
  std::string file_;
  DiagnosticList& diag_;
  Mapping& mapping_;
  std::vector<std::string> used_;
};

/// "[error] toml::parse_key_value_pair: missing ...\n --> file\n ..." -> "missing ..."
std::string syntax_message(const std::string& what) {
  std::string first = what.substr(0, what.find('\n'));
  const std::string prefix = "[error] ";
  if (first.rfind(prefix, 0) == 0) first.erase(0, prefix.size());
  const std::size_t colon = first.find(": ");
  if (first.rfind("toml::", 0) == 0 && colon != std::string::npos) first.erase(0, colon + 2);
  return "TOML syntax error: " + first;
}

constexpr double kHuge = 1e300;

/// TOML files are UTF-8, and toml11 3.7 trusts the lead byte of a sequence: a lone 0xEE in a
/// quoted key makes it read past the end of its buffer (found by fuzz_mapping). Refuse invalid
/// UTF-8 (truncated, overlong, surrogate or out-of-range sequences) before toml11 sees it.
void check_utf8(const std::string& text, const std::string& name) {
  std::int64_t line = 1, column = 1;
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = 1;
    bool ok = true;
    if (c >= 0x80) {
      unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
      if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
      } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;  // overlong
        if (c == 0xED) hi = 0x9F;  // surrogates
      } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;  // overlong
        if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
      } else {
        ok = false;
      }
      for (std::size_t k = 1; ok && k < len; ++k) {
        const auto b = i + k < n ? static_cast<unsigned char>(text[i + k]) : 0U;
        ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
      }
    }
    if (!ok) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(c));
      throw InputError(FileLoc{name, line, column},
                       std::string("invalid UTF-8 (byte ") + byte + "): a mapping file must be UTF-8 text");
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      column += static_cast<std::int64_t>(len);  // columns count bytes, as toml11's do
    }
    i += len;
  }
}

/// toml11 parses arrays, inline tables and dotted keys recursively and frees its tree recursively,
/// so `a = [[[[…` a hundred thousand deep overflows the stack. No mapping nests more than a few
/// levels: refuse deep nesting before toml11 sees it. The scan knows strings and comments; outside
/// them it tracks bracket depth and the dots in one key (the dots of numbers never accumulate,
/// since ',', '=' and brackets end a run).
void check_nesting(const std::string& text, const std::string& name) {
  constexpr int kMaxDepth = 32;
  int depth = 0, dots = 0;
  std::int64_t line = 1, column = 0;
  const std::size_t n = text.size();
  auto too_deep = [&] {
    throw InputError(FileLoc{name, line, column},
                     "nesting deeper than " + std::to_string(kMaxDepth) + " levels: not a Kanoko mapping");
  };
  for (std::size_t i = 0; i < n; ++i) {
    const char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      dots = 0;
    } else if (c == '#') {
      while (i + 1 < n && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const bool triple = i + 2 < n && text[i + 1] == c && text[i + 2] == c;
      i += triple ? 3 : 1;
      column += triple ? 2 : 0;
      for (; i < n; ++i) {
        ++column;
        if (text[i] == '\n') {
          ++line;
          column = 0;
          if (!triple) break;  // a one-line string ends here (as a syntax error)
        } else if (text[i] == '\\' && c == '"') {
          ++i;
          ++column;
        } else if (text[i] == c && (!triple || (i + 2 < n && text[i + 1] == c && text[i + 2] == c))) {
          if (triple) {
            i += 2;
            column += 2;
          }
          break;
        }
      }
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) too_deep();
      dots = 0;
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
      dots = 0;
    } else if (c == ',' || c == '=') {
      dots = 0;
    } else if (c == '.') {
      if (++dots > kMaxDepth) too_deep();
    }
  }
}

void read_simulation(Section s, Mapping& m) {
  auto& sim = m.simulation;
  // `interval` is trace seconds, or "auto": the ingest picks it from the trace's duration and
  // event density (docs/zero-configuration.md). `intervals` asks for a number of them instead.
  if (const toml::value* v = s.get("interval"); v != nullptr && v->is_string()) {
    if (v->as_string().str != "auto") {
      s.error(*v, "'interval' must be a number of trace seconds or \"auto\", found \"" + v->as_string().str + "\"");
    }
    sim.interval_auto = true;
  } else if (auto x = s.number("interval", 0, kHuge, true)) {
    sim.interval_s = *x;
  }
  if (auto v = s.integer("intervals", 1, std::int64_t{1} << 24)) {
    sim.intervals = static_cast<std::uint64_t>(*v);
    if (const toml::value* i = m.locations.count("simulation.interval") != 0 ? s.get("intervals") : nullptr) {
      s.error(*i, "'intervals' and 'interval' both set the interval; keep one");
    }
  }
  if (auto v = s.choice("calibrate", {"off", "auto"})) sim.calibrate = (*v == 1);
  if (auto v = s.number("dt", 0, kHuge, true)) sim.dt_s = *v;
  if (auto v = s.integer("frame_every", 1, 1'000'000)) sim.frame_every = static_cast<std::uint32_t>(*v);
  if (auto v = s.string("integrator")) sim.integrator = *v;  // checked against the registry by sim
  if (auto v = s.number("settle", 0, kHuge)) sim.settle_s = *v;
  if (auto v = s.number("tolerance", 0, 1, true)) sim.tolerance = *v;
  if (const toml::value* dt = s.get("dt"); dt != nullptr && !sim.interval_auto && sim.intervals == 0 &&
                                           sim.dt_s > sim.interval_s) {
    std::ostringstream interval;
    interval << sim.interval_s;
    s.error(*dt, "'dt' must not exceed 'interval' (" + interval.str() +
                     " s): the forcing changes every interval and a step may not straddle it");
  }
  s.report_unknown_keys();
}

void read_bodies(Section s, Mapping& m) {
  auto& b = m.bodies;
  if (auto v = s.choice("placement", {"cube", "lattice", "ring", "line", "explicit", "sphere", "topology"})) {
    b.placement = static_cast<Placement>(*v);
    b.placement_given = true;
  }
  if (auto v = s.number("size", 0, kHuge, true)) b.size = *v;
  if (auto v = s.int3("lattice", 1, 1 << 20)) b.lattice = *v;
  if (auto v = s.points("positions")) b.positions = *v;
  if (auto v = s.number("radius", 0, kHuge, true)) b.radius = *v;
  if (auto v = s.choice("order", {"declaration", "rank", "name", "pattern", "table"})) b.order = static_cast<BodyOrder>(*v);
  if (auto v = s.regex("pattern", 1)) b.pattern = *v;
  if (auto v = s.int_table("table", 0, 1 << 30)) b.table = *v;
  if (b.placement == Placement::Lattice && b.lattice[0] == 0 && s.present()) {
    if (const toml::value* p = s.get("placement")) s.error(*p, "placement \"lattice\" needs 'lattice = [nx, ny, nz]'");
  }
  if (b.placement == Placement::Explicit && b.positions.empty() && s.present()) {
    if (const toml::value* p = s.get("placement")) s.error(*p, "placement \"explicit\" needs 'positions = [[x, y, z], ...]'");
  }
  if (const toml::value* o = s.get("order")) {
    if (b.order == BodyOrder::Pattern && b.pattern.empty() && s.get("pattern") == nullptr) {
      s.error(*o, "order \"pattern\" needs 'pattern = \"regex with one (group)\"', e.g. \"pe(\\\\d+)\"");
    }
    if (b.order == BodyOrder::Table && b.table.empty() && s.get("table") == nullptr) {
      s.error(*o, "order \"table\" needs 'table = { name = position, ... }'");
    }
  }
  s.report_unknown_keys();
}

void read_mass(Section s, Mapping& m) {
  auto& ms = m.mass;
  if (auto v = s.number("base", 0, kHuge, true)) ms.base = *v;
  if (auto v = s.number("load_gain", 0, kHuge)) ms.load_gain = *v;
  if (auto v = s.integer("smoothing", 0, 1 << 20)) ms.smoothing = static_cast<std::uint32_t>(*v);
  if (auto v = s.choice("load", {"samples", "busy"})) ms.load = static_cast<LoadSource>(*v);
  if (auto v = s.string_list("busy_states")) ms.busy_states = *v;
  ms.expression = s.expression("expression", Scope::Body);
  s.report_unknown_keys();
}

void read_springs(Section s, Mapping& m) {
  auto& sp = m.springs;
  if (auto v = s.choice("topology", {"none", "ring", "mesh", "explicit", "torus", "hypercube", "fat-tree", "dragonfly",
                                     "complete", "trace", "links"})) {
    sp.topology = static_cast<SpringTopology>(*v);
  }
  if (auto v = s.pairs("edges")) sp.edges = *v;
  if (auto v = s.int3("mesh", 1, 1 << 20)) sp.mesh = *v;
  if (auto v = s.int_list("dims", 2, 3, 1, 1 << 20)) sp.dims = *v;
  if (auto v = s.integer("dimension", 1, 24)) sp.dimension = static_cast<int>(*v);
  if (auto v = s.int_list("levels", 1, 8, 2, 1 << 16)) sp.levels = *v;
  if (auto v = s.integer("groups", 1, 1 << 16)) sp.groups = static_cast<int>(*v);
  if (auto v = s.integer("routers", 1, 1 << 16)) sp.routers = static_cast<int>(*v);
  if (auto v = s.integer("nodes_per_router", 1, 1 << 16)) sp.nodes_per_router = static_cast<int>(*v);
  if (auto v = s.number("min_bytes", 0, kHuge)) sp.min_bytes = *v;
  if (auto v = s.number("min_messages", 0, kHuge)) sp.min_messages = *v;
  if (const toml::value* k = s.get("k")) {
    if (k->is_string()) {
      sp.k_expression = s.expression(*k, "k", Scope::Pair);
    } else if (auto v = s.number("k", 0, kHuge)) {
      sp.k = *v;
    }
  }
  if (const toml::value* len = s.get("length")) {
    if (len->is_string() && len->as_string() == "initial") {
      sp.length.reset();
    } else if ((len->is_floating() || len->is_integer())) {
      const double x = len->is_integer() ? static_cast<double>(len->as_integer()) : len->as_floating();
      if (!std::isfinite(x) || x <= 0) {
        s.error(*len, "'length' must be > 0 or \"initial\"");
      } else {
        sp.length = x;
      }
    } else {
      s.error(*len, std::string("'length' must be a number or \"initial\", found ") + type_name(*len));
    }
  }
  if (const toml::value* t = s.get("topology")) {
    auto needs = [&](bool missing, const std::string& what) {
      if (missing) s.error(*t, std::string("topology \"") + to_string(sp.topology) + "\" needs " + what);
    };
    needs(sp.topology == SpringTopology::Explicit && sp.edges.empty(), "'edges = [[a, b], ...]'");
    needs(sp.topology == SpringTopology::Torus && sp.dims.empty() && sp.mesh[0] == 0,
          "'dims = [nx, ny]' or 'dims = [nx, ny, nz]'");
    needs(sp.topology == SpringTopology::FatTree && sp.levels.empty(),
          "'levels = [a, b, ...]' (children per switch, leaves first)");
    needs(sp.topology == SpringTopology::Dragonfly && (sp.groups == 0 || sp.routers == 0),
          "'groups = G' and 'routers = A' (and optionally 'nodes_per_router = P')");
  }
  s.report_unknown_keys();
}

/// A path named by the mapping: relative to the mapping's folder, never absolute and never
/// climbing out of it with "..", and it must exist.
std::optional<std::filesystem::path> mapping_relative_file(Section& s, const std::string& key, const Mapping& m) {
  const toml::value* v = s.get(key);
  const auto text = s.string(key);
  if (v == nullptr || !text) return std::nullopt;
  const std::filesystem::path rel(*text);
  if (text->empty() || rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) {
    s.error(*v, "'" + key + "' must be a path relative to the mapping file's folder");
    return std::nullopt;
  }
  for (const auto& part : rel) {
    if (part == "..") {
      s.error(*v, "'" + key + "' may not leave the mapping file's folder ('..' is not allowed)");
      return std::nullopt;
    }
  }
  const std::filesystem::path base = std::filesystem::path(m.path).parent_path();
  const std::filesystem::path full = base / rel;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(full, ec)) {
    s.error(*v, "'" + key + "' names '" + full.string() + "', which is not a file");
    return std::nullopt;
  }
  return full;
}

/// A state listed twice, in one category or in two, is a mistake: it would count once and in
/// the first category only. Reported at the second mention (a [mass] busy_states list counts
/// as computing).
void check_state_categories(Section& s, const Mapping& m) {
  const bool computing_here = m.locations.count("trace.computing") != 0;
  struct List {
    const char* key;
    const std::vector<std::string>* names;
    bool given;
  };
  const List lists[] = {{"computing", &m.mass.busy_states, computing_here},
                        {"communicating", &m.trace.communicating, m.trace.communicating_given},
                        {"idle", &m.trace.idle, m.trace.idle_given}};
  std::map<std::string, std::string> seen;  // state → the key that listed it first
  for (const List& list : lists) {
    const bool from_mass = std::string(list.key) == "computing" && !computing_here;
    for (const std::string& name : *list.names) {
      const std::string key = from_mass ? "[mass] 'busy_states'" : std::string("'") + list.key + "'";
      const auto [it, added] = seen.emplace(name, key);
      if (added || !list.given) continue;
      const toml::value* v = s.get(list.key);
      if (v == nullptr || !v->is_array()) continue;
      const toml::value* at = v;  // the element repeating it: the last one with that name
      for (const auto& e : v->as_array()) at = e.is_string() && e.as_string() == name ? &e : at;
      s.error(*at, "state '" + name + "' is listed twice (already in " + it->second + ")");
    }
  }
}

void read_trace(Section s, Mapping& m) {
  auto& t = m.trace;
  if (auto v = s.string("format")) t.format = *v;  // checked against the reader registry when read
  if (auto v = s.string("entity_type")) t.entity_type = *v;
  // A name (Pajé variable, Chrome counter, OTF2 metric) or a Paraver event type number.
  if (const toml::value* v = s.get("load_variable"); v != nullptr && v->is_integer()) {
    if (v->as_integer() <= 0) {
      s.error(*v, "'load_variable' = " + std::to_string(v->as_integer()) + " is not an event type: expected > 0");
    } else {
      t.load_variable = std::to_string(v->as_integer());
    }
  } else if (auto name = s.string("load_variable")) {
    if (name->empty()) s.error(*v, "'load_variable' is empty: name a variable, counter, metric or event type");
    t.load_variable = *name;
  }
  if (auto v = s.string("message_bytes")) {
    if (v->empty()) s.error(*s.get("message_bytes"), "'message_bytes' is empty: name the args key, e.g. \"bytes\"");
    t.message_bytes = *v;
  }
  if (auto v = s.rewrite("rename")) t.rename = *v;
  if (auto v = s.rewrite("host_from_name")) t.host_from_name = *v;
  if (auto v = s.regex("select", 0)) t.select = *v;
  if (auto v = s.regex("exclude", 0)) t.exclude = *v;
  if (auto v = s.number("flop_rate", 0, kHuge, true)) t.flop_rate = *v;
  if (auto v = s.number("bandwidth", 0, kHuge, true)) t.bandwidth = *v;
  if (auto v = s.number("latency", 0, kHuge)) t.latency_s = *v;
  if (auto v = s.number("from", -kHuge, kHuge)) t.from_s = *v;
  if (auto v = s.number("to", -kHuge, kHuge)) t.to_s = *v;
  if (t.from_s && t.to_s && !(*t.to_s > *t.from_s)) {
    s.error(*s.get("to"), "the window is empty: 'to' must be later than 'from'");
  }
  if (auto v = s.choice("group_by", {"entity", "host", "table"})) t.group_by = static_cast<GroupBy>(*v);
  if (auto v = s.string_table("groups")) t.groups = *v;
  if (auto v = s.integer("level", 1, 64)) t.level = static_cast<int>(*v);
  if (auto v = s.string_list("computing")) {
    if (const toml::value* b = m.locations.count("mass.busy_states") != 0 ? s.get("computing") : nullptr) {
      s.error(*b, "'computing' and [mass] 'busy_states' say the same thing; keep one");
    }
    m.mass.busy_states = *v;
    t.computing_given = true;
  }
  if (m.locations.count("mass.busy_states") != 0) t.computing_given = true;
  if (auto v = s.string_list("communicating")) {
    t.communicating = *v;
    t.communicating_given = true;
  }
  if (auto v = s.string_list("idle")) {
    t.idle = *v;
    t.idle_given = true;
  }
  check_state_categories(s, m);
  if (const toml::value* g = s.get("group_by"); g != nullptr && t.group_by == GroupBy::Table && t.groups.empty()) {
    s.error(*g, "group_by \"table\" needs 'groups = { child = \"parent\", ... }'");
  }
  // A parent chain that comes back to where it started would never reach a top level.
  if (const toml::value* g = t.groups.empty() ? nullptr : s.get("groups")) {
    std::set<std::string> reported;
    for (const auto& [start, parent] : t.groups) {
      std::vector<std::string> chain{start};
      std::string at = parent;
      while (true) {
        const auto seen = std::find(chain.begin(), chain.end(), at);
        if (seen != chain.end()) {
          if (reported.insert(at).second) {
            std::string cycle;
            for (auto it = seen; it != chain.end(); ++it) cycle += *it + " → ";
            s.error(*g, "'groups' has a cycle: " + cycle + at);
          }
          break;
        }
        const auto next = t.groups.find(at);
        if (next == t.groups.end()) break;
        chain.push_back(at);
        at = next->second;
      }
    }
  }
  s.report_unknown_keys();
}

/// A name of [locations]: a variable prefix muparser accepts.
bool location_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 64 || (std::isalpha(static_cast<unsigned char>(name[0])) == 0 && name[0] != '_')) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

/// [locations]: NAME = "site pattern", or NAME = { site = "...", file = "...", function = "...", line = N }.
void read_locations(Section s, Mapping& m, const std::string& file, DiagnosticList& diag) {
  const std::vector<std::string>& body_names = variable_names(Scope::Body);
  for (const std::string& name : s.keys_in_order()) {
    const toml::value* v = s.get(name);
    CodeLocationSpec spec;
    spec.name = name;
    spec.where = loc_of(*v, file);
    if (!location_name_ok(name)) {
      s.error(*v, "[locations] name '" + escaped_excerpt(name) +
                      "' must start with a letter or '_' and hold only letters, digits and '_' (at most 64): it "
                      "names the variables " + name + "_computing, " + name + "_communicating and " + name + "_waiting");
      continue;
    }
    if (m.code_locations.size() >= kMaxCodeLocations) {
      s.error(*v, "[locations] holds more than " + std::to_string(kMaxCodeLocations) + " names");
      continue;
    }
    const auto compile = [&](const std::string& key, const std::string& text, const toml::value& at) {
      try {
        (void)Pattern(text);
      } catch (const PatternError& e) {
        diag.add(loc_of(at, file), "'locations." + name + (key.empty() ? "" : "." + key) +
                                        "' is not a valid regular expression: " + e.what());
      }
    };
    if (v->is_string()) {
      spec.site = v->as_string();
      if (spec.site.empty()) s.error(*v, "'locations." + name + "' is empty: write a pattern such as \"file\\.c:31\\b\"");
      compile("", spec.site, *v);
    } else if (v->is_table()) {
      Section t(v, "locations." + name, file, diag, m);
      const std::pair<const char*, std::string*> patterns[] = {
          {"site", &spec.site}, {"file", &spec.file}, {"function", &spec.function}};
      for (const auto& [key, target] : patterns) {
        if (const auto text = t.string(key)) {
          *target = *text;
          compile(key, *text, *t.get(key));
        }
      }
      if (const auto line = t.integer("line", 1, std::int64_t{1} << 40)) spec.line = *line;
      t.report_unknown_keys();
      if (spec.site.empty() && spec.file.empty() && spec.function.empty() && spec.line == 0) {
        s.error(*v, "'locations." + name + "' matches every location: give site, file, function or line");
      }
    } else {
      s.error(*v, "'locations." + name + "' must be a pattern (a string searched in \"file:line function\") or a "
                  "table { site, file, function, line }, found " + type_name(*v));
      continue;
    }
    for (const std::string& variable : spec.variables()) {
      const bool body = std::find(body_names.begin(), body_names.end(), variable) != body_names.end();
      const auto earlier = location_variables(m);
      if (body || std::find(earlier.begin(), earlier.end(), variable) != earlier.end()) {
        s.error(*v, "[locations] name '" + name + "' makes the variable '" + variable + "', which is already " +
                        (body ? "a body variable" : "defined"));
      }
    }
    m.code_locations.push_back(std::move(spec));
  }
}

void read_visual(Section s, Mapping& m) {
  auto& v = m.visual;
  if (auto c = s.choice("colour_map", {"cividis", "viridis", "magma", "grey", "categorical"})) {
    v.colour_map = static_cast<ColourMap>(*c);
  }
  v.colour = s.expression("colour", Scope::Body);
  if (const toml::value* r = s.get("colour_range")) {
    if (r->is_string() && r->as_string() == "auto") {
      v.colour_range.reset();
    } else if (auto p = s.points_n(*r, "'colour_range'", 2)) {
      if (!((*p)[0] < (*p)[1])) {
        s.error(*r, "'colour_range' must be [low, high] with low < high");
      } else {
        v.colour_range = std::array<double, 2>{(*p)[0], (*p)[1]};
      }
    }
  }
  v.scale = s.expression("scale", Scope::Body);
  if (auto p = mapping_relative_file(s, "texture", m)) v.texture = *p;
  if (auto c = s.choice("labels", {"none", "name", "rank", "host", "index"})) v.labels = static_cast<LabelKind>(*c);
  if (auto t = s.number("trails", 0, 3600)) v.trails_s = *t;
  if (auto list = s.string_list("views")) v.views = *list;
  s.report_unknown_keys();
}

void read_forces(Section s, Mapping& m, const std::string& file, DiagnosticList& diag) {
  if (const toml::value* t = s.subtable("repulsion")) {
    Section r(t, "forces.repulsion", file, diag, m);
    RepulsionSpec spec;
    if (auto v = r.number("strength", 0, kHuge)) spec.strength = *v;
    if (auto v = r.number("softening", 0, kHuge)) spec.softening = *v;
    if (auto v = r.choice("evaluator", integrators::evaluator_names())) spec.evaluator = integrators::kUserEvaluators[*v];
    if (auto v = r.number("theta", 0, 1)) spec.theta = *v;
    if (auto v = r.choice("multipole", integrators::multipole_names())) spec.multipole = integrators::kMultipoles[*v];
    r.report_unknown_keys();
    m.repulsion = spec;
  }
  if (const toml::value* t = s.subtable("communication")) {
    Section c(t, "forces.communication", file, diag, m);
    CommunicationSpec spec;
    if (auto v = c.choice("mode", {"sender", "symmetric"})) spec.mode = static_cast<CommunicationMode>(*v);
    if (auto v = c.choice("quantity", {"bytes", "messages"})) spec.quantity = static_cast<CommunicationQuantity>(*v);
    if (auto v = c.number("gain", 0, kHuge)) spec.gain = *v;
    if (auto v = c.choice("normalize", {"max", "none"})) spec.normalize = (*v == 0);
    spec.weight = c.expression("weight", Scope::Pair);
    c.report_unknown_keys();
    m.communication = spec;
  }
  if (const toml::value* t = s.subtable("friction")) {
    Section f(t, "forces.friction", file, diag, m);
    FrictionSpec spec;
    if (auto v = f.number("beta", 0, kHuge)) spec.beta = *v;
    f.report_unknown_keys();
    m.friction = spec;
  }
  if (const toml::value* t = s.subtable("centre")) {
    Section c(t, "forces.centre", file, diag, m);
    CentreSpec spec;
    if (auto v = c.number("strength", 0, kHuge)) spec.strength = *v;
    c.report_unknown_keys();
    m.centre = spec;
  }
  s.report_unknown_keys();
}

}  // namespace

Mapping parse_mapping_text(const std::string& text, const std::string& name) {
  Mapping m;
  m.path = name;
  m.text = text;
  toml::value root;
  check_utf8(text, name);
  check_nesting(text, name);
  try {
    std::istringstream in(text);
    root = toml::parse(in, name);
  } catch (const toml::syntax_error& e) {
    const auto& l = e.location();
    throw InputError(FileLoc{name, static_cast<std::int64_t>(l.line()), static_cast<std::int64_t>(l.column())},
                     syntax_message(e.what()));
  } catch (const std::exception& e) {
    // toml11 names no place for these (a file it cannot read at all): the top of the file.
    throw InputError(FileLoc{name, 1, 1}, syntax_message(e.what()));
  }
  DiagnosticList diag;
  Section top(&root, "", name, diag, m);
  auto section = [&](const char* key) { return Section(top.subtable(key), key, name, diag, m); };
  read_simulation(section("simulation"), m);
  read_bodies(section("bodies"), m);
  read_locations(section("locations"), m, name, diag);  // before the formulas that read its variables
  read_mass(section("mass"), m);
  read_springs(section("springs"), m);
  read_forces(section("forces"), m, name, diag);
  read_trace(section("trace"), m);
  read_visual(section("visual"), m);
  read_audio(section("audio"), m.audio,
             [&](const toml::value* t, const char* path) { return Section(t, path, name, diag, m); });
  top.report_unknown_keys();
  if (diag.empty() && !m.repulsion && !m.communication && !m.friction && !m.centre &&
      m.springs.topology == SpringTopology::None) {
    // Where a force was expected: the [forces] table, else [springs], else the top of the file.
    diag.add(m.where(m.locations.count("forces") == 0 && m.locations.count("springs") != 0 ? "springs" : "forces"),
             "the mapping defines no force (expected a [springs] topology or a [forces.*] table such as "
             "[forces.communication])");
  }
  diag.throw_if_any();
  return m;
}

Mapping parse_mapping_file(const std::filesystem::path& path) {
  return parse_mapping_text(read_file(path), path.string());
}

}  // namespace kanoko::mapping
