#include "src/profile/profile.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace kanoko::profile {
namespace {

constexpr std::uint32_t kNoRow = 0;  ///< location_row_ value of a location without a row yet

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

/// Length of the valid UTF-8 sequence at s[i] (2..4), or 0.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2, cp = b & 0x1FU;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3, cp = b & 0x0FU;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4, cp = b & 0x07U;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0U) != 0x80U) return 0;
    cp = (cp << 6U) | (c & 0x3FU);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string json_text(std::string_view raw) {
  std::string out = "\"";
  for (const char c : printable(raw)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

std::string csv_cell(std::string_view raw) {
  const std::string p = printable(raw);
  if (p.find_first_of(",\"") == std::string::npos) return p;
  std::string out = "\"";
  for (const char c : p) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

const char* group_name(GroupBy by) {
  switch (by) {
    case GroupBy::Line: return "line";
    case GroupBy::Function: return "function";
    case GroupBy::Path: return "path";
  }
  return "line";
}

std::size_t shown_rows(const Profile& p, std::size_t top) { return top == 0 ? p.rows.size() : std::min(top, p.rows.size()); }

}  // namespace

bool parse_group_by(std::string_view word, GroupBy& out) {
  for (const GroupBy g : {GroupBy::Line, GroupBy::Function, GroupBy::Path}) {
    if (word == group_name(g)) {
      out = g;
      return true;
    }
  }
  return false;
}

std::string printable(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size();) {
    const auto b = static_cast<unsigned char>(raw[i]);
    if (b >= 0x20 && b < 0x7F) {
      out += raw[i++];
      continue;
    }
    if (const std::size_t n = b >= 0x80 ? utf8_sequence(raw, i) : 0; n > 0) {
      out.append(raw.substr(i, n));
      i += n;
      continue;
    }
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(b));
    out += buf;
    ++i;
  }
  return out;
}

double state_part(const trace::StateInterval& s, double from_s, double to_s) {
  const double begin = std::max(s.begin_s, from_s);
  const double end = std::min(s.end_s, to_s);
  if (end < begin || (end == begin && s.end_s > s.begin_s) || s.begin_s >= to_s) return -1.0;
  return end - begin;
}

std::string site_label(std::string_view file, std::int64_t line, std::string_view function) {
  std::string s = file.empty() ? std::string(line > 0 ? "?" : "") : std::string(file);
  if (line > 0) s += ":" + std::to_string(line);
  if (!function.empty()) s += (s.empty() ? "" : " ") + std::string(function);
  return s;
}

ProfileBuilder::ProfileBuilder(ProfileOptions options)
    : options_(std::move(options)), classifier_(options_.computing, options_.communicating, options_.idle) {
  profile_.by = options_.by;
  location_row_.push_back(kNoRow);  // index 0: no location
}

void ProfileBuilder::on_entity(const trace::Entity& e) {
  if (counted_.size() <= e.index) counted_.resize(std::size_t{e.index} + 1, false);
  const std::int64_t rank = e.rank >= 0 ? e.rank : static_cast<std::int64_t>(e.index);
  const bool counted = options_.ranks.empty() || std::find(options_.ranks.begin(), options_.ranks.end(), rank) != options_.ranks.end();
  counted_[e.index] = counted;
  if (counted) ++profile_.ranks;
}

void ProfileBuilder::on_location(trace::LocationIndex index, const trace::CodeLocation& l) {
  if (index == 0) return;
  if (locations_.size() < index) {
    locations_.resize(index);
    location_row_.resize(std::size_t{index} + 1, kNoRow);
  }
  // A caller must be defined before (a smaller index): anything else would make a path loop.
  locations_[index - 1] = Location{std::string(l.file), l.line, std::string(l.function), l.caller < index ? l.caller : 0};
  ++profile_.locations;
}

std::string ProfileBuilder::row_key(trace::LocationIndex location) const {
  if (location == 0 || location > locations_.size()) return {};
  const Location& l = locations_[location - 1];
  std::string key;
  const auto frame = [&](const Location& f) {
    key += std::to_string(f.file.size()) + ':' + f.file + std::to_string(f.line) + ':' + f.function + '\n';
  };
  switch (options_.by) {
    case GroupBy::Line: frame(l); break;
    case GroupBy::Function: key = l.function.empty() ? "file:" + l.file : "function:" + l.function; break;
    case GroupBy::Path: {
      trace::LocationIndex at = location;
      for (std::size_t depth = 0; at != 0 && at <= locations_.size() && depth < options_.max_path_frames; ++depth) {
        frame(locations_[at - 1]);
        at = locations_[at - 1].caller;
      }
      if (at != 0) key += "...";
      break;
    }
  }
  return key;
}

std::uint32_t ProfileBuilder::row_of(trace::LocationIndex location) {
  if (location > locations_.size()) location = 0;  // not announced: counted as without a location
  if (location_row_[location] != kNoRow) return location_row_[location] - 1;
  const std::string key = row_key(location);
  const auto [it, inserted] = row_index_.try_emplace(key, static_cast<std::uint32_t>(profile_.rows.size()));
  if (inserted) {
    ProfileRow row;
    if (location == 0) {
      row.located = false;
      row.label = "(no location)";
    } else {
      const Location& l = locations_[location - 1];
      const auto site = [](const Location& f) { return site_label(f.file, f.line, f.function); };
      if (options_.by == GroupBy::Function) {
        row.function = l.function;
        row.label = l.function.empty() ? l.file : l.function;
        if (row.label.empty()) row.label = "?";
      } else {
        row.file = l.file;
        row.line = l.line;
        row.function = l.function;
        row.label = site(l);
        if (options_.by == GroupBy::Path) {
          trace::LocationIndex at = l.caller;
          for (std::size_t depth = 1; at != 0 && at <= locations_.size(); ++depth) {
            if (depth >= options_.max_path_frames) {
              row.label += " < ...";
              break;
            }
            row.label += " < " + site(locations_[at - 1]);
            at = locations_[at - 1].caller;
          }
        }
      }
    }
    profile_.rows.push_back(std::move(row));
  }
  location_row_[location] = it->second + 1;
  return it->second;
}

void ProfileBuilder::on_state(const trace::StateInterval& s) {
  first_s_ = std::min(first_s_, s.begin_s);
  if (s.entity >= counted_.size() || !counted_[s.entity]) return;
  const double d = state_part(s, options_.from_s, options_.to_s);
  if (d < 0) return;
  ++profile_.states;
  if (s.location != 0) ++profile_.states_with_location;
  const std::uint32_t r = row_of(s.location);
  ProfileRow& row = profile_.rows[r];
  ++row.calls;
  switch (classifier_.classify(s.name)) {
    case trace::StateCategory::Computing: row.computing_s += d; break;
    case trace::StateCategory::Communicating: row.communicating_s += d; break;
    case trace::StateCategory::Idle: row.waiting_s += d; break;
    case trace::StateCategory::None: return;
  }
  rank_time_[(std::uint64_t{r} << 32U) | s.entity] += d;
}

void ProfileBuilder::on_message(const trace::Message& m) {
  first_s_ = std::min(first_s_, m.send_s);
  if (m.src >= counted_.size() || !counted_[m.src]) return;
  if (m.send_s < options_.from_s || m.send_s >= options_.to_s) return;
  ProfileRow& row = profile_.rows[row_of(m.location)];
  row.bytes += m.bytes;
  ++row.messages;
  if (m.location != 0) ++profile_.messages_with_location;
}

void ProfileBuilder::on_end(double end_s) { end_s_ = end_s; }

Profile ProfileBuilder::take() {
  // Per row: the spread of the time over the ranks that spent any there.
  std::vector<double> sum(profile_.rows.size(), 0.0);
  for (const auto& [key, seconds] : rank_time_) {
    Spread& s = profile_.rows[key >> 32U].spread;
    s.min_s = s.ranks == 0 ? seconds : std::min(s.min_s, seconds);
    s.max_s = s.ranks == 0 ? seconds : std::max(s.max_s, seconds);
    ++s.ranks;
    sum[key >> 32U] += seconds;
  }
  for (std::size_t r = 0; r < profile_.rows.size(); ++r) {
    Spread& s = profile_.rows[r].spread;
    if (s.ranks == 0) continue;
    s.mean_s = sum[r] / static_cast<double>(s.ranks);
    s.imbalance = s.mean_s > 0 ? s.max_s / s.mean_s : 0.0;
  }
  std::sort(profile_.rows.begin(), profile_.rows.end(), [](const ProfileRow& a, const ProfileRow& b) {
    if (a.waiting_s != b.waiting_s) return a.waiting_s > b.waiting_s;
    if (a.time_s() != b.time_s()) return a.time_s() > b.time_s();
    return a.label < b.label;
  });
  const double first = std::isfinite(first_s_) ? first_s_ : 0.0;
  profile_.from_s = std::max(first, std::isfinite(options_.from_s) ? options_.from_s : first);
  profile_.to_s = std::min(end_s_, std::isfinite(options_.to_s) ? options_.to_s : end_s_);
  return std::move(profile_);
}

std::string profile_text(const Profile& p, std::size_t top) {
  std::string t;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%8s %12s %14s %12s %12s %6s %11s %11s %11s %9s  %s\n", "calls", "computing_s",
                "communicating_s", "waiting_s", "bytes", "ranks", "min_s", "mean_s", "max_s", "imbalance", group_name(p.by));
  t += buf;
  const std::size_t n = shown_rows(p, top);
  for (std::size_t i = 0; i < n; ++i) {
    const ProfileRow& r = p.rows[i];
    std::snprintf(buf, sizeof buf, "%8llu %12.6g %14.6g %12.6g %12llu %6zu %11.6g %11.6g %11.6g %9.3f  ",
                  static_cast<unsigned long long>(r.calls), r.computing_s, r.communicating_s, r.waiting_s,
                  static_cast<unsigned long long>(r.bytes), r.spread.ranks, r.spread.min_s, r.spread.mean_s,
                  r.spread.max_s, r.spread.imbalance);
    t += buf + printable(r.label) + '\n';
  }
  if (n < p.rows.size()) t += "(" + std::to_string(p.rows.size() - n) + " more rows)\n";
  return t;
}

std::string profile_json(const Profile& p, std::size_t top) {
  std::string j = std::string("{\"by\":\"") + group_name(p.by) + "\",\"from_s\":" + number(p.from_s) +
                  ",\"to_s\":" + number(p.to_s) + ",\"ranks\":" + std::to_string(p.ranks) +
                  ",\"locations\":" + std::to_string(p.locations) + ",\"states\":" + std::to_string(p.states) +
                  ",\"states_with_location\":" + std::to_string(p.states_with_location) +
                  ",\"messages_with_location\":" + std::to_string(p.messages_with_location) + ",\"rows\":[";
  const std::size_t n = shown_rows(p, top);
  for (std::size_t i = 0; i < n; ++i) {
    const ProfileRow& r = p.rows[i];
    j += (i > 0 ? "," : "") + std::string("{\"label\":") + json_text(r.label) + ",\"located\":" +
         (r.located ? "true" : "false") + ",\"file\":" + json_text(r.file) + ",\"line\":" + std::to_string(r.line) +
         ",\"function\":" + json_text(r.function) + ",\"calls\":" + std::to_string(r.calls) +
         ",\"computing_s\":" + number(r.computing_s) + ",\"communicating_s\":" + number(r.communicating_s) +
         ",\"waiting_s\":" + number(r.waiting_s) + ",\"bytes\":" + std::to_string(r.bytes) + ",\"messages\":" +
         std::to_string(r.messages) + ",\"ranks\":" + std::to_string(r.spread.ranks) + ",\"min_s\":" +
         number(r.spread.min_s) + ",\"mean_s\":" + number(r.spread.mean_s) + ",\"max_s\":" + number(r.spread.max_s) +
         ",\"imbalance\":" + number(r.spread.imbalance) + "}";
  }
  return j + "],\"rows_left_out\":" + std::to_string(p.rows.size() - n) + "}\n";
}

std::string profile_csv(const Profile& p, std::size_t top) {
  std::string c = "label,file,line,function,calls,computing_s,communicating_s,waiting_s,bytes,messages,ranks,min_s,mean_s,max_s,imbalance\n";
  const std::size_t n = shown_rows(p, top);
  for (std::size_t i = 0; i < n; ++i) {
    const ProfileRow& r = p.rows[i];
    c += csv_cell(r.label) + ',' + csv_cell(r.file) + ',' + std::to_string(r.line) + ',' + csv_cell(r.function) + ',' +
         std::to_string(r.calls) + ',' + number(r.computing_s) + ',' + number(r.communicating_s) + ',' +
         number(r.waiting_s) + ',' + std::to_string(r.bytes) + ',' + std::to_string(r.messages) + ',' +
         std::to_string(r.spread.ranks) + ',' + number(r.spread.min_s) + ',' + number(r.spread.mean_s) + ',' +
         number(r.spread.max_s) + ',' + number(r.spread.imbalance) + '\n';
  }
  return c;
}

}  // namespace kanoko::profile
