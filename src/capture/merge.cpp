// Per-rank capture files → one native trace. The file format is documented in docs/capture.md.
#include "src/capture/merge.hpp"

#include "src/capture/resolve.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>

namespace kanoko::capture {
namespace {

struct SendRec {
  double t = 0;  // local clock
  int dst = 0;
  std::uint64_t bytes = 0;
  std::int64_t tag = 0;
  std::uint32_t site = 0;  // call site index (cs), 0 none
  std::size_t line = 0;    // in the rank file, for warnings
};

struct RecvRec {
  double post = 0;  // local clock, when the receive was posted (matching order)
  double done = 0;  // local clock, when the program had the data
  int src = 0;
  std::uint64_t bytes = 0;
  std::int64_t tag = 0;
  std::size_t order = 0;  // file order, breaks ties of `post`
};

struct StateRec {
  double t = 0;
  double duration = 0;
  std::string name;
  std::uint32_t site = 0;  // MPI calls (m records): the call site index
  std::size_t line = 0;
};

/// An executable segment of an object the rank had loaded (`mod BIAS LO HI PATH`).
struct ModRec {
  std::uint64_t bias = 0, lo = 0, hi = 0;
  std::string path;
  std::size_t line = 0;
};

/// A call site (`cs INDEX RA...`): return addresses, innermost first.
struct SiteRec {
  std::vector<std::uint64_t> ra;
  std::size_t line = 0;
};

struct LoadRec {
  double t = 0;
  double value = 0;
};

struct CollRec {
  double t = 0;
  double duration = 0;
  std::string name;
  std::uint64_t bytes = 0;
  int root = -1;
  std::string group;
};

struct RankFile {
  int rank = -1;
  int size = 0;
  std::string host;
  std::vector<std::pair<double, std::pair<double, double>>> syncs;  // local t, (offset, bound)
  std::vector<SendRec> sends;
  std::vector<RecvRec> recvs;
  std::vector<StateRec> states;
  std::vector<LoadRec> loads;
  std::vector<CollRec> colls;
  double last_local = 0;
  double fin_local = -1;
  double overhead_s = 0;
  std::uint64_t events = 0;
  std::uint64_t truncated = 0;
  std::filesystem::path path;
  std::vector<ModRec> mods;
  std::map<std::uint32_t, SiteRec> sites;
  std::vector<std::string> warnings;  // damaged call-site records, located

  /// Local time → rank 0's clock: the offset is interpolated linearly between the sync points.
  [[nodiscard]] double global(double t) const {
    if (syncs.empty()) return t;
    if (syncs.size() == 1 || syncs.back().first <= syncs.front().first) return t + syncs.front().second.first;
    const auto& a = syncs.front();
    const auto& b = syncs.back();
    const double w = (t - a.first) / (b.first - a.first);
    return t + a.second.first + w * (b.second.first - a.second.first);
  }
};

[[noreturn]] void malformed(const std::filesystem::path& p, std::size_t line, const std::string& what) {
  throw std::runtime_error(p.string() + ":" + std::to_string(line) + ": malformed capture record: " + what);
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const std::size_t j = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > j) out.push_back(s.substr(j, i - j));
  }
  return out;
}

template <class T>
bool parse_number(std::string_view s, T& v, int base = 10) {
  std::from_chars_result r{};
  if constexpr (std::is_floating_point_v<T>) {
    r = std::from_chars(s.data(), s.data() + s.size(), v);
  } else {
    r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  }
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

/// Reads a `mod` or `cs` record (call sites, docs/capture.md). A damaged one is a warning, not an
/// error: the events keep their times, only their locations are lost. False when damaged.
bool read_site_record(RankFile& r, std::string_view line, const std::vector<std::string_view>& f, std::size_t line_no) {
  const std::string where = r.path.string() + ":" + std::to_string(line_no) + ": ";
  if (f[0] == "mod") {
    ModRec m;
    m.line = line_no;
    if (f.size() < 5 || !parse_number(f[1], m.bias, 16) || !parse_number(f[2], m.lo, 16) ||
        !parse_number(f[3], m.hi, 16) || m.hi <= m.lo) {
      r.warnings.push_back(where + "damaged memory-map record (expected 'mod BIAS LO HI PATH'); call sites in it have no location");
      return false;
    }
    // The path is the rest of the line (it may hold spaces).
    m.path = std::string(line.substr(static_cast<std::size_t>(f[4].data() - line.data())));
    r.mods.push_back(std::move(m));
    return true;
  }
  SiteRec c;
  c.line = line_no;
  std::uint32_t index = 0;
  bool ok = f.size() >= 3 && f.size() <= 2 + 64 && parse_number(f[1], index) && index > 0;
  for (std::size_t i = 2; ok && i < f.size(); ++i) {
    std::uint64_t a = 0;
    ok = parse_number(f[i], a, 16) && a > 0;
    c.ra.push_back(a);
  }
  if (!ok || r.sites.count(index) != 0) {
    r.warnings.push_back(where + (ok ? "call site defined twice" : "damaged call-site record (expected 'cs INDEX ADDRESS...')") +
                         "; the calls naming it have no location");
    return false;
  }
  r.sites.emplace(index, std::move(c));
  return true;
}

/// `key=value` field of the header.
std::string_view header_value(const std::vector<std::string_view>& f, std::string_view key) {
  for (const auto& x : f) {
    if (x.size() > key.size() && x.substr(0, key.size()) == key && x[key.size()] == '=') {
      return x.substr(key.size() + 1);
    }
  }
  return {};
}

RankFile read_rank_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string() + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  RankFile r;
  r.path = p;
  std::size_t pos = 0;
  std::size_t line_no = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      ++r.truncated;  // the rank was killed in the middle of a write: drop the partial record
      break;
    }
    const std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    const auto f = split(line);
    if (f.empty()) continue;
    const auto num = [&](std::size_t i, auto& v) {
      if (i >= f.size() || !parse_number(f[i], v)) malformed(p, line_no, std::string(line));
    };
    if (line_no == 1) {
      if (f[0] != "kcap" || f.size() < 2 || f[1] != "1") {
        throw std::runtime_error(p.string() + ": not a libkanoko-capture rank file (expected 'kcap 1')");
      }
      if (!parse_number(header_value(f, "rank"), r.rank) || !parse_number(header_value(f, "size"), r.size) ||
          r.rank < 0 || r.size <= r.rank) {
        malformed(p, line_no, "header without a valid rank= and size=");
      }
      r.host = std::string(header_value(f, "host"));
      continue;
    }
    const std::string_view k = f[0];
    if (k == "mod" || k == "cs") {
      read_site_record(r, line, f, line_no);
      continue;
    }
    ++r.events;
    double t = 0;
    num(1, t);
    r.last_local = std::max(r.last_local, t);
    if (k == "s") {
      SendRec s;
      s.t = t;
      num(2, s.dst);
      num(3, s.bytes);
      num(4, s.tag);
      if (f.size() > 5) num(5, s.site);
      s.line = line_no;
      if (s.dst < 0 || s.dst >= r.size) malformed(p, line_no, "destination out of range");
      r.sends.push_back(s);
    } else if (k == "r") {
      RecvRec v;
      v.post = t;
      num(2, v.done);
      num(3, v.src);
      num(4, v.bytes);
      num(5, v.tag);
      if (v.src < 0 || v.src >= r.size) malformed(p, line_no, "source out of range");
      v.order = r.recvs.size();
      r.last_local = std::max(r.last_local, v.done);
      r.recvs.push_back(v);
    } else if (k == "st" || k == "m") {
      // A state; `m`: an MPI call, named after it, with its call site.
      StateRec s;
      s.t = t;
      num(2, s.duration);
      if (f.size() < (k == "m" ? 5U : 4U)) malformed(p, line_no, k == "m" ? "MPI call record needs 5 fields" : "state without a name");
      s.name = std::string(f[3]);
      if (k == "m") num(4, s.site);
      s.line = line_no;
      r.last_local = std::max(r.last_local, t + s.duration);
      r.states.push_back(std::move(s));
    } else if (k == "l") {
      LoadRec l;
      l.t = t;
      num(2, l.value);
      r.loads.push_back(l);
    } else if (k == "k") {
      CollRec c;
      c.t = t;
      num(2, c.duration);
      if (f.size() < 7) malformed(p, line_no, "collective needs 7 fields");
      c.name = std::string(f[3]);
      num(4, c.bytes);
      num(5, c.root);
      c.group = std::string(f[6]);
      if (c.root >= r.size) malformed(p, line_no, "root out of range");
      r.last_local = std::max(r.last_local, t + c.duration);
      r.colls.push_back(std::move(c));
    } else if (k == "sync") {
      double off = 0;
      double bound = 0;
      num(2, off);
      num(3, bound);
      r.syncs.emplace_back(t, std::make_pair(off, bound));
    } else if (k == "o") {
      num(2, r.overhead_s);
    } else if (k == "fin") {
      r.fin_local = t;
    } else {
      malformed(p, line_no, "unknown record '" + std::string(k) + "'");
    }
  }
  if (r.rank < 0) throw std::runtime_error(p.string() + ": empty capture file (the rank wrote nothing)");
  if (r.syncs.empty()) {
    throw std::runtime_error(p.string() + ": no clock synchronisation record (the rank stopped inside MPI_Init)");
  }
  return r;
}

/// One output line with its sort key.
struct Line {
  double t = 0;
  int kind = 0;  // order of entries with equal times: load, msg, coll, state
  std::size_t seq = 0;
  std::string text;
};

std::string fmt_time(double t) {
  char b[48];
  std::snprintf(b, sizeof b, "%.9f", t);
  return b;
}

std::int64_t nanoseconds(double t) { return std::llround(t * 1e9); }

/// `ns` as seconds with 9 decimals, exactly (no rounding of its own).
std::string fmt_nanoseconds(std::int64_t ns) {
  char b[48];
  std::snprintf(b, sizeof b, "%lld.%09lld", static_cast<long long>(ns / 1000000000), static_cast<long long>(ns % 1000000000));
  return b;
}

std::string quote(std::string_view s) {
  bool bare = !s.empty();
  for (const char c : s) {
    if (c == ' ' || c == '\t' || c == '"' || c == '#' || c == '=' || c == '\n' || c == '\r' || c == '\\') bare = false;
  }
  if (bare) return std::string(s);
  std::string q = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return q + "\"";
}

/// The trace's code locations, made from the ranks' call sites: `loc` entries and, per rank, the
/// location id of each call site (its innermost frame; 0: not resolved).
struct Locations {
  std::vector<std::string> entries;
  std::map<int, std::unordered_map<std::uint32_t, std::uint64_t>> site_loc;  // rank → site → id

  [[nodiscard]] std::uint64_t of(int rank, std::uint32_t site) const {
    if (site == 0) return 0;
    const auto r = site_loc.find(rank);
    if (r == site_loc.end()) return 0;
    const auto it = r->second.find(site);
    return it == r->second.end() ? 0 : it->second;
  }
};

Locations resolve_call_sites(const std::map<int, RankFile>& ranks, MergeSummary& sum) {
  Locations out;
  AddressResolver resolver;
  std::map<std::string, std::uint64_t> ids;  // "file\0line\0function\0caller" → id
  std::map<std::string, std::uint64_t> symbol_only;  // object → frames without line information
  std::map<std::string, std::uint64_t> with_lines;   // object → frames with
  std::map<std::string, std::string> unreadable;     // object → why, reported once
  const auto intern = [&](const Frame& f, std::uint64_t caller) {
    const std::string key = f.file + '\0' + std::to_string(f.line) + '\0' + f.function + '\0' + std::to_string(caller);
    const auto [it, added] = ids.try_emplace(key, ids.size() + 1);
    if (added) {
      std::string e = "loc 0 " + std::to_string(it->second);
      if (!f.file.empty()) e += " file=" + quote(f.file);
      if (f.line > 0) e += " line=" + std::to_string(f.line);
      if (!f.function.empty()) e += " function=" + quote(f.function);
      if (caller != 0) e += " caller=" + std::to_string(caller);
      out.entries.push_back(std::move(e));
    }
    return it->second;
  };
  for (const auto& [rank, r] : ranks) {
    for (const auto& w : r.warnings) sum.location_warnings.push_back(w);
    auto& site_loc = out.site_loc[rank];
    for (const auto& [index, site] : r.sites) {
      ++sum.call_sites;
      std::uint64_t caller = 0;
      bool leaf = false;
      for (std::size_t i = site.ra.size(); i-- > 0;) {
        const std::uint64_t ra = site.ra[i];
        const auto mod = std::find_if(r.mods.begin(), r.mods.end(),
                                      [&](const ModRec& m) { return ra - 1 >= m.lo && ra - 1 < m.hi; });
        Frame f;
        Resolution how = Resolution::None;
        std::string problem;
        if (mod == r.mods.end()) {
          problem = "address in no object of the recorded memory map";
        } else {
          f = resolver.resolve(mod->path, mod->bias, ra, how, problem);
          if (how == Resolution::Line) ++with_lines[mod->path];
          if (how == Resolution::Symbol || how == Resolution::Object) ++symbol_only[mod->path];
        }
        if (how == Resolution::None) {
          const std::string object = mod == r.mods.end() ? std::string() : mod->path;
          if (unreadable.emplace(object, problem).second) {
            sum.location_warnings.push_back(r.path.string() + ":" + std::to_string(mod == r.mods.end() ? site.line : mod->line) +
                                            ": " + problem + "; its call sites have no location");
          }
          if (i == 0) caller = 0;
          continue;
        }
        caller = intern(f, caller);
        leaf = i == 0;
      }
      site_loc[index] = leaf ? caller : 0;
      if (leaf) ++sum.located_call_sites;
    }
  }
  for (const auto& [object, frames] : symbol_only) {
    // An object with line information for some frames was built with -g: the others are its
    // start-up code (_start) or parts built without it, not worth a note.
    if (with_lines.count(object) != 0) continue;
    sum.location_notes.push_back(std::to_string(frames) + " call-site frame(s) in " + object +
                                 " have no line information and are named symbol+offset (build the program with -g "
                                 "for file:line)");
  }
  sum.locations = ids.size();
  return out;
}

}  // namespace

std::vector<std::string> call_site_report(const MergeSummary& s) {
  std::vector<std::string> out;
  if (s.call_sites > 0) {
    out.push_back(std::to_string(s.located_call_sites) + " of " + std::to_string(s.call_sites) +
                  " call sites located: " + std::to_string(s.locations) + " code locations, " +
                  std::to_string(s.located_events) + " states and messages with one");
  }
  for (const auto& n : s.location_notes) out.push_back("note: " + n);
  constexpr std::size_t kShown = 20;
  for (std::size_t i = 0; i < s.location_warnings.size() && i < kShown; ++i) out.push_back("warning: " + s.location_warnings[i]);
  if (s.location_warnings.size() > kShown) {
    out.push_back("warning: " + std::to_string(s.location_warnings.size() - kShown) + " more call-site warnings (see the trace's header)");
  }
  return out;
}

std::string rank_file_name(int rank) { return "rank-" + std::to_string(rank) + ".kcap"; }

MergeSummary merge_capture_dir(const std::filesystem::path& dir, const std::filesystem::path& output) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw std::runtime_error("capture folder " + dir.string() + " does not exist or is not a folder");
  }
  std::map<int, RankFile> ranks;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 11 || name.rfind("rank-", 0) != 0 || name.substr(name.size() - 5) != ".kcap") continue;
    RankFile r = read_rank_file(entry.path());
    if (ranks.count(r.rank) != 0U) throw std::runtime_error(entry.path().string() + ": rank " + std::to_string(r.rank) + " appears twice");
    ranks.emplace(r.rank, std::move(r));
  }
  if (ranks.empty()) throw std::runtime_error("no rank-N.kcap capture files in " + dir.string());

  MergeSummary sum;
  sum.size = ranks.begin()->second.size;
  sum.ranks = static_cast<int>(ranks.size());
  for (const auto& [rank, r] : ranks) {
    if (r.size != sum.size) throw std::runtime_error("capture files disagree on the number of ranks (" + std::to_string(r.size) + " vs " + std::to_string(sum.size) + ")");
  }
  for (int i = 0; i < sum.size; ++i) {
    const auto it = ranks.find(i);
    if (it == ranks.end()) {
      sum.partial = true;
      sum.notes.push_back("rank " + std::to_string(i) + " left no capture file");
    } else if (it->second.fin_local < 0) {
      sum.partial = true;
      sum.notes.push_back("rank " + std::to_string(i) + " did not reach MPI_Finalize; its data ends at its last flush");
    }
  }

  // Time zero: the earliest end of the init clock synchronisation over all ranks (rank 0's clock).
  double origin = std::numeric_limits<double>::infinity();
  for (const auto& [rank, r] : ranks) origin = std::min(origin, r.global(r.syncs.front().first));
  const auto at = [&](const RankFile& r, double local) { return std::max(0.0, r.global(local) - origin); };

  const Locations locations = resolve_call_sites(ranks, sum);
  std::vector<std::uint64_t> undefined_sites;  // per rank: events naming a call site with no `cs` record
  const auto loc_option = [&](const RankFile& r, std::uint32_t site, std::size_t line) -> std::string {
    const std::uint64_t id = locations.of(r.rank, site);
    if (id != 0) {
      ++sum.located_events;
      return " loc=" + std::to_string(id);
    }
    if (site != 0 && r.sites.count(site) == 0 && r.warnings.empty()) {
      if (undefined_sites.size() <= static_cast<std::size_t>(r.rank)) undefined_sites.resize(static_cast<std::size_t>(r.rank) + 1, 0);
      if (undefined_sites[static_cast<std::size_t>(r.rank)]++ == 0) {
        sum.location_warnings.push_back(r.path.string() + ":" + std::to_string(line) + ": call site " + std::to_string(site) +
                                        " is not defined (damaged or truncated address table); such calls have no location");
      }
    }
    return {};
  };

  std::vector<Line> lines;
  std::size_t seq = 0;
  const auto add = [&](double t, int kind, std::string text) { lines.push_back(Line{t, kind, seq++, std::move(text)}); };

  // Point-to-point: the k-th send on (src, dst, tag) is the k-th receive posted on it (MPI's
  // non-overtaking rule), so both sides are queued per envelope and paired in order.
  using Key = std::tuple<int, int, std::int64_t>;
  std::map<Key, std::vector<const RecvRec*>> recvs;
  for (const auto& [rank, r] : ranks) {
    for (const auto& v : r.recvs) recvs[Key{v.src, rank, v.tag}].push_back(&v);
  }
  for (auto& [key, list] : recvs) {
    std::stable_sort(list.begin(), list.end(), [](const RecvRec* a, const RecvRec* b) {
      return a->post < b->post || (a->post == b->post && a->order < b->order);
    });
  }
  std::map<Key, std::size_t> used;
  for (const auto& [rank, r] : ranks) {
    for (const auto& s : r.sends) {
      const Key key{rank, s.dst, s.tag};
      const double send = at(r, s.t);
      std::string text = "msg " + fmt_time(send) + " " + std::to_string(rank) + " " + std::to_string(s.dst) + " " +
                         std::to_string(s.bytes) + " tag=" + std::to_string(s.tag) + loc_option(r, s.site, s.line);
      const auto it = recvs.find(key);
      std::size_t& k = used[key];
      if (it != recvs.end() && k < it->second.size()) {
        const RecvRec* v = it->second[k++];
        double recv = at(ranks.at(s.dst), v->done);
        if (recv < send) {
          ++sum.clamped_recvs;
          recv = send;
        }
        text += " recv=" + fmt_time(recv);
      } else {
        ++sum.unmatched_sends;
      }
      add(send, 1, std::move(text));
      ++sum.messages;
    }
  }
  for (const auto& [key, list] : recvs) {
    const auto u = used.find(key);
    sum.unmatched_recvs += list.size() - (u == used.end() ? 0 : u->second);
  }

  double end = 0;
  for (const auto& [rank, r] : ranks) {
    const std::string id = std::to_string(rank);
    // A rank's states follow each other (an MPI call, the computation up to the next one, ...):
    // in whole nanoseconds, each ends at the latest where the next begins, so that rounding never
    // makes two of them overlap.
    for (std::size_t i = 0; i < r.states.size(); ++i) {
      const StateRec& s = r.states[i];
      const std::int64_t b = nanoseconds(at(r, s.t));
      std::int64_t e = std::max(b, nanoseconds(at(r, s.t + s.duration)));
      if (i + 1 < r.states.size()) e = std::max(b, std::min(e, nanoseconds(at(r, r.states[i + 1].t))));
      add(static_cast<double>(b) * 1e-9, 3,
          "state " + fmt_nanoseconds(b) + " " + id + " " + fmt_nanoseconds(e - b) + " " + quote(s.name) +
              loc_option(r, s.site, s.line));
    }
    for (const auto& l : r.loads) add(at(r, l.t), 0, "load " + fmt_time(at(r, l.t)) + " " + id + " " + fmt_time(l.value));
    for (const auto& c : r.colls) {
      const double b = at(r, c.t);
      const double e = std::max(b, at(r, c.t + c.duration));
      std::string text = "coll " + fmt_time(b) + " " + id + " " + fmt_time(e - b) + " " + quote(c.name) + " " +
                         std::to_string(c.bytes);
      if (c.root >= 0) text += " root=" + std::to_string(c.root);
      text += " group=" + quote(c.group);
      add(b, 2, std::move(text));
      ++sum.collectives;
    }
    end = std::max(end, at(r, r.fin_local >= 0 ? r.fin_local : r.last_local));

    RankClock c;
    c.rank = rank;
    c.sync_points = static_cast<int>(r.syncs.size());
    c.offset_init_s = r.syncs.front().second.first;
    c.bound_init_s = r.syncs.front().second.second;
    c.offset_fin_s = r.syncs.back().second.first;
    c.bound_fin_s = r.syncs.back().second.second;
    c.finished = r.fin_local >= 0;
    c.overhead_s = r.overhead_s;
    c.run_s = std::max(0.0, (r.fin_local >= 0 ? r.fin_local : r.last_local) - r.syncs.front().first);
    c.events = r.events;
    sum.max_clock_bound_s = std::max({sum.max_clock_bound_s, c.bound_init_s, c.bound_fin_s});
    if (c.run_s > 0) sum.max_overhead_fraction = std::max(sum.max_overhead_fraction, c.overhead_s / c.run_s);
    sum.truncated_lines += r.truncated;
    sum.clocks.push_back(c);
  }
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return a.t < b.t || (a.t == b.t && (a.kind < b.kind || (a.kind == b.kind && a.seq < b.seq)));
  });
  for (const auto& l : lines) end = std::max(end, l.t);
  sum.end_s = end;

  std::filesystem::path tmp = output;
  tmp += ".tmp";
  // A failed write (full disk, `ulimit -f`) leaves neither the temporary nor a partial trace.
  const auto fail = [&](const std::string& why) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::runtime_error("writing " + output.string() + " failed: " + why);
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(std::strerror(errno));
    out << "kntr 1\n# captured by libkanoko-capture from " << sum.ranks << " of " << sum.size << " ranks\n";
    if (sum.partial) {
      out << "# partial trace:";
      for (const auto& n : sum.notes) out << ' ' << n << ';';
      out << " it ends at the last recorded event\n";
    }
    for (const auto& c : sum.clocks) {
      out << "# clock rank " << c.rank << " offset_init=" << fmt_time(c.offset_init_s)
          << " bound_init=" << fmt_time(c.bound_init_s) << " offset_fin=" << fmt_time(c.offset_fin_s)
          << " bound_fin=" << fmt_time(c.bound_fin_s) << " sync_points=" << c.sync_points
          << " overhead=" << fmt_time(c.overhead_s) << " run=" << fmt_time(c.run_s) << '\n';
    }
    out << "# messages=" << sum.messages << " unmatched_sends=" << sum.unmatched_sends
        << " unmatched_recvs=" << sum.unmatched_recvs << " clamped_recvs=" << sum.clamped_recvs
        << " collectives=" << sum.collectives << '\n';
    if (sum.call_sites > 0) {
      out << "# call sites=" << sum.call_sites << " located=" << sum.located_call_sites << " locations=" << sum.locations
          << '\n';
    }
    for (const auto& n : sum.location_notes) out << "# note: " << n << '\n';
    for (const auto& w : sum.location_warnings) out << "# warning: " << w << '\n';
    for (int i = 0; i < sum.size; ++i) {
      const auto it = ranks.find(i);
      out << "node 0 " << i << " name=rank-" << i;
      if (it != ranks.end() && !it->second.host.empty()) out << " host=" << quote(it->second.host);
      out << " rank=" << i << '\n';
    }
    for (const auto& e : locations.entries) out << e << '\n';
    for (const auto& l : lines) out << l.text << '\n';
    out << "end " << fmt_time(end) << '\n';
    out.flush();
    if (!out) fail(std::strerror(errno));
    out.close();
    if (!out) fail(std::strerror(errno));
  }
  std::filesystem::rename(tmp, output, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot write " + output.string() + ": " + ec.message());
  }
  return sum;
}

}  // namespace kanoko::capture
