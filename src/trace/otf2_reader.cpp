#include "src/trace/otf2_reader.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <deque>
#include <exception>
#include <fstream>
#include <map>
#include <optional>
#include <unordered_map>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/suggest.hpp"
#include "src/trace/locations.hpp"

namespace kanoko::trace {
namespace {

constexpr std::array<const char*, 23> kCollectiveNames{
    "barrier",        "bcast",          "gather",       "gatherv",   "scatter",
    "scatterv",       "allgather",      "allgatherv",   "alltoall",  "alltoallv",
    "alltoallw",      "allreduce",      "reduce",       "reduce_scatter", "scan",
    "exscan",         "reduce_scatter_block", "create_handle", "destroy_handle", "allocate",
    "deallocate",     "create_handle_and_allocate", "destroy_handle_and_deallocate"};

/// The library's last error message (it would print it to stderr otherwise).
thread_local std::string t_last_error;

OTF2_ErrorCode capture_error(void*, const char*, std::uint64_t, const char*, OTF2_ErrorCode code, const char* format,
                             va_list va) {
  char buf[1024];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  std::vsnprintf(buf, sizeof buf, format, va);
#pragma GCC diagnostic pop
  t_last_error = buf;
  return code;
}

/// Routes the library's error reports into t_last_error while a read runs.
class ErrorCapture {
 public:
  ErrorCapture() : previous_(OTF2_Error_RegisterCallback(capture_error, nullptr)) { t_last_error.clear(); }
  ~ErrorCapture() { OTF2_Error_RegisterCallback(previous_, nullptr); }
  ErrorCapture(const ErrorCapture&) = delete;
  ErrorCapture& operator=(const ErrorCapture&) = delete;

 private:
  OTF2_ErrorCallback previous_;
};

struct LocationDef {
  OTF2_StringRef name = OTF2_UNDEFINED_STRING;
  OTF2_LocationType type = OTF2_LOCATION_TYPE_UNKNOWN;
  OTF2_LocationGroupRef group = OTF2_UNDEFINED_LOCATION_GROUP;
};
struct LocationGroupDef {
  OTF2_StringRef name = OTF2_UNDEFINED_STRING;
  OTF2_SystemTreeNodeRef node = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
};
struct GroupDef {
  OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  std::vector<std::uint64_t> members;
};
struct CommDef {
  OTF2_StringRef name = OTF2_UNDEFINED_STRING;
  OTF2_GroupRef group = OTF2_UNDEFINED_GROUP;
};
struct MemberDef {
  OTF2_StringRef name = OTF2_UNDEFINED_STRING;
  OTF2_MetricMode mode = OTF2_METRIC_ABSOLUTE_POINT;
};
struct InstanceDef {
  OTF2_MetricRef metric_class = OTF2_UNDEFINED_METRIC;
  OTF2_MetricScope scope_type = OTF2_SCOPE_LOCATION;
  std::uint64_t scope = 0;
};

struct Otf2PendingSend {
  double t;
  std::uint64_t bytes;
  LocationIndex location;  ///< the sender's code location
};
struct Pending {
  std::deque<Otf2PendingSend> sends;
  std::deque<double> receives;
};
struct MatchKey {
  std::uint64_t pair;  ///< src << 32 | dst
  std::uint64_t comm;
  std::uint64_t tag;
  bool operator==(const MatchKey&) const = default;
};
struct MatchKeyHash {
  std::size_t operator()(const MatchKey& k) const {
    return std::hash<std::uint64_t>{}(k.pair * 0x9E3779B97F4A7C15ULL ^ (k.comm << 32U) ^ k.tag);
  }
};

class Otf2Reader;

/// Runs a callback body; an exception must not cross the C library, so it is kept and the read
/// interrupted.
template <typename F>
OTF2_CallbackCode guarded(void* user, F&& f);

class Otf2Reader {
 public:
  Otf2Reader(std::string name, TraceSink& sink, const Otf2Options& options)
      : name_(std::move(name)), sink_(sink), options_(options),
        window_(sink, options.max_held, [this](double until) { stacks_.split_before(until); }), stacks_(window_) {}

  Otf2Summary read();

  std::exception_ptr error_;
  /// Callbacks run so far (after the definitions: events in the library's merged time order).
  std::uint64_t event_number_ = 0;

  // ---- definitions ----
  void clock(std::uint64_t resolution, std::uint64_t offset, std::uint64_t length) {
    resolution_ = resolution;
    offset_ = offset;
    length_ = length;
    have_clock_ = true;
  }
  void string(OTF2_StringRef self, const char* s) { strings_[self] = s != nullptr ? s : ""; }
  void node(OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef class_name, OTF2_SystemTreeNodeRef parent) {
    nodes_[self] = NodeDef{name, class_name, parent};
  }
  void location_group(OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_SystemTreeNodeRef parent) {
    groups_of_locations_[self] = LocationGroupDef{name, parent};
  }
  void location(OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type, OTF2_LocationGroupRef group) {
    locations_[self] = LocationDef{name, type, group};
  }
  void region(OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonical, OTF2_Paradigm paradigm,
              OTF2_StringRef file, std::uint32_t begin_line) {
    regions_[self] = name;
    // Score-P gives a function its source file and first line; MPI calls name the file "MPI".
    if (paradigm != OTF2_PARADIGM_MPI && file != OTF2_UNDEFINED_STRING) region_sources_[self] = RegionSource{canonical, file, begin_line};
  }
  void group(OTF2_GroupRef self, OTF2_GroupType type, OTF2_Paradigm paradigm, std::uint32_t n, const std::uint64_t* members) {
    GroupDef g{type, paradigm, {}};
    if (members != nullptr) g.members.assign(members, members + n);
    if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS) comm_locations_.try_emplace(paradigm, self);
    groups_[self] = std::move(g);
  }
  void comm(OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group) { comms_[self] = CommDef{name, group}; }
  void metric_member(OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_MetricMode mode) {
    members_[self] = MemberDef{name, mode};
  }
  void metric_class(OTF2_MetricRef self, std::uint8_t n, const OTF2_MetricMemberRef* members) {
    std::vector<OTF2_MetricMemberRef> list;
    if (members != nullptr) list.assign(members, members + n);
    classes_[self] = std::move(list);
  }
  void metric_instance(OTF2_MetricRef self, OTF2_MetricRef cls, OTF2_MetricScope scope_type, std::uint64_t scope) {
    instances_[self] = InstanceDef{cls, scope_type, scope};
  }

  // ---- events ----
  void enter(OTF2_LocationRef loc, OTF2_TimeStamp time, OTF2_RegionRef region) {
    ++summary_.enters;
    const auto e = entity_of(loc);
    if (!e) return;
    const auto it = region_names_.find(region);
    LocationIndex location = 0;
    if (!region_locations_.empty()) {
      // A function with a source file is its own location, called from the enclosing one; any
      // other region (an MPI call) is at the location of the function it is in.
      auto& stack = location_stacks_[*e];
      location = stack.empty() ? 0 : stack.back();
      if (const auto r = region_locations_.find(region); r != region_locations_.end()) {
        const auto [cached, inserted] = located_calls_.try_emplace((std::uint64_t{region} << 32U) | location, 0);
        if (inserted) cached->second = code_locations_.intern(r->second.file, r->second.line, r->second.function, location);
        location = cached->second;
      }
      if (stack.size() < StateStacks::kMaxDepth) stack.push_back(location);
    }
    if (!stacks_.push(*e, seconds(time), it != region_names_.end() ? std::string_view(it->second) : "region", location)) {
      throw InputError(FileLoc::in_record(name_, "events of location " + std::to_string(loc) + ", event " +
                                                     std::to_string(summary_.enters + summary_.leaves)),
                       "regions nested deeper than " + std::to_string(StateStacks::kMaxDepth));
    }
  }
  void leave(OTF2_LocationRef loc, OTF2_TimeStamp time) {
    ++summary_.leaves;
    const auto e = entity_of(loc);
    if (e && !stacks_.pop(*e, seconds(time))) {
      warn("Leave without a matching Enter (skipped)");
      return;
    }
    if (e && !region_locations_.empty() && !location_stacks_[*e].empty()) location_stacks_[*e].pop_back();
  }
  void send(OTF2_LocationRef loc, OTF2_TimeStamp time, std::uint32_t receiver, OTF2_CommRef comm, std::uint32_t tag,
            std::uint64_t bytes) {
    ++summary_.sends;
    const auto src = entity_of(loc);
    const auto dst = rank_entity(comm, receiver, loc);
    if (!src) return;
    if (!dst) {
      warn("send to a rank its communicator does not define (skipped)");
      return;
    }
    const double t = seconds(time);
    const MatchKey key{(std::uint64_t{*src} << 32U) | *dst, comm, tag};
    Pending& p = pending_[key];
    const LocationIndex location = region_locations_.empty() || location_stacks_[*src].empty() ? 0 : location_stacks_[*src].back();
    if (!p.receives.empty()) {
      const double recv = p.receives.front();
      p.receives.pop_front();
      message(t, recv, *src, *dst, bytes, tag, key, location);
    } else {
      p.sends.push_back(Otf2PendingSend{t, bytes, location});
    }
  }
  void receive(OTF2_LocationRef loc, OTF2_TimeStamp time, std::uint32_t sender, OTF2_CommRef comm, std::uint32_t tag) {
    ++summary_.receives;
    const auto dst = entity_of(loc);
    const auto src = rank_entity(comm, sender, loc);
    if (!dst) return;
    if (!src) {
      warn("receive from a rank its communicator does not define (skipped)");
      return;
    }
    const double t = seconds(time);
    const MatchKey key{(std::uint64_t{*src} << 32U) | *dst, comm, tag};
    Pending& p = pending_[key];
    if (!p.sends.empty()) {
      const Otf2PendingSend s = p.sends.front();
      p.sends.pop_front();
      message(s.t, t, *src, *dst, s.bytes, tag, key, s.location);
    } else {
      p.receives.push_back(t);
    }
  }
  /// The archive records collectives itself: its collective regions are not collectives again.
  void saw_collective_record() {
    if (collective_records_) return;
    collective_records_ = true;
    sink_.on_collective_records();
  }
  void collective_begin(OTF2_LocationRef loc, OTF2_TimeStamp time) {
    saw_collective_record();
    const auto e = entity_of(loc);
    if (!e) return;
    if (*e >= collective_begin_.size()) collective_begin_.resize(std::size_t{*e} + 1);
    collective_begin_[*e].push_back(seconds(time));
  }
  void collective_end(OTF2_LocationRef loc, OTF2_TimeStamp time, OTF2_CollectiveOp op, OTF2_CommRef comm,
                      std::uint32_t root, std::uint64_t sent) {
    saw_collective_record();
    ++summary_.collectives;
    const auto e = entity_of(loc);
    if (!e) return;
    const double t = seconds(time);
    double begin = t;
    if (*e < collective_begin_.size() && !collective_begin_[*e].empty()) {
      begin = collective_begin_[*e].back();
      collective_begin_[*e].pop_back();
    } else {
      warn("MpiCollectiveEnd without MpiCollectiveBegin (read as instantaneous)");
    }
    std::int64_t root_entity = -1;
    if (root < OTF2_COLLECTIVE_ROOT_SELF) {
      if (const auto r = rank_entity(comm, root, loc)) root_entity = *r;
    } else if (root == OTF2_COLLECTIVE_ROOT_SELF) {
      root_entity = *e;
    }
    // The n-th collective on a communicator is the same operation on every member.
    const std::uint64_t n = collective_count_[(std::uint64_t{*e} << 32U) | comm]++;
    const std::string group = comm_name(comm) + "#" + std::to_string(n);
    const char* name = op < kCollectiveNames.size() ? kCollectiveNames[op] : "collective";
    window_.collective(Collective{begin, t, *e, name, sent, root_entity, group});
  }
  void metric(OTF2_LocationRef loc, OTF2_TimeStamp time, OTF2_MetricRef metric, std::uint8_t n, const OTF2_Type* types,
              const OTF2_MetricValue* values) {
    ++summary_.metric_events;
    if (!chosen_member_) return;
    const std::vector<OTF2_MetricMemberRef>* members = nullptr;
    OTF2_LocationRef where = loc;
    if (const auto c = classes_.find(metric); c != classes_.end()) {
      members = &c->second;
    } else if (const auto i = instances_.find(metric); i != instances_.end()) {
      const auto c2 = classes_.find(i->second.metric_class);
      if (c2 != classes_.end()) members = &c2->second;
      if (i->second.scope_type == OTF2_SCOPE_LOCATION) where = i->second.scope;
    }
    if (members == nullptr) return;
    const auto slot = std::find(members->begin(), members->end(), *chosen_member_);
    const auto index = static_cast<std::size_t>(slot - members->begin());
    if (slot == members->end() || index >= n) return;
    const auto e = entity_of(where);
    if (!e) return;
    double v = 0;
    switch (types[index]) {
      case OTF2_TYPE_INT64: v = static_cast<double>(values[index].signed_int); break;
      case OTF2_TYPE_UINT64: v = static_cast<double>(values[index].unsigned_int); break;
      case OTF2_TYPE_DOUBLE: v = values[index].floating_point; break;
      default: return;
    }
    const double t = seconds(time);
    if (!metric_is_rate_) {
      window_.load(LoadSample{t, *e, v});
      ++summary_.load_samples;
      return;
    }
    // An accumulated counter: the rate over the interval since its previous sample.
    if (*e >= last_sample_.size()) last_sample_.resize(std::size_t{*e} + 1, {-1.0, 0.0});
    auto& [last_t, last_v] = last_sample_[*e];
    if (last_t >= 0 && t > last_t) {
      window_.load(LoadSample{last_t, *e, (v - last_v) / (t - last_t)});
      ++summary_.load_samples;
    }
    last_t = t;
    last_v = v;
  }

  void every_event() {
    if ((++events_ & 0xffffU) == 0) check_interrupt();
  }

 private:
  void check(OTF2_ErrorCode rc, const char* what) {
    if (rc == OTF2_SUCCESS) return;
    if (error_) {
      try {
        std::rethrow_exception(error_);
      } catch (const InputError& e) {
        // A sink refusing an event (a timeline too long to bin) does not know the file.
        const auto& ds = e.diagnostics();
        if (ds.size() == 1 && ds[0].loc.file.empty()) throw InputError(at(), ds[0].message);
        throw;
      }
    }
    fail(what, rc);
  }
  [[noreturn]] void fail(const std::string& what, OTF2_ErrorCode rc) const {
    std::string msg = "cannot read the OTF2 archive: " + what;
    if (rc != OTF2_SUCCESS) msg += ": " + std::string(OTF2_Error_GetDescription(rc));
    if (!t_last_error.empty()) msg += " (" + t_last_error + ")";
    throw InputError(at(), msg);
  }
  /// The part of the archive being read, as a binary location (libotf2 gives no byte offsets).
  [[nodiscard]] FileLoc at() const { return FileLoc::in_record(name_, part_); }

  void warn(std::string_view what) { warnings_.add(what, FileLoc{name_}); }

  std::string str(OTF2_StringRef ref) const {
    const auto it = strings_.find(ref);
    return it != strings_.end() ? it->second : std::string();
  }
  std::string comm_name(OTF2_CommRef comm) const {
    const auto it = comms_.find(comm);
    const std::string n = it != comms_.end() ? str(it->second.name) : std::string();
    return n.empty() ? "comm" + std::to_string(comm) : n;
  }

  double seconds(OTF2_TimeStamp t) {
    if (t < offset_) {
      warn("event before the clock's global offset (read at time 0)");
      return 0;
    }
    const double s = static_cast<double>(t - offset_) / static_cast<double>(resolution_);
    if (s > last_s_) {
      last_s_ = s;
      end_event_ = event_number_;
    }
    return s;
  }

  std::optional<EntityIndex> entity_of(OTF2_LocationRef loc) {
    const auto it = entity_of_location_.find(loc);
    if (it != entity_of_location_.end()) return it->second;
    warn("event on a location that is not a defined thread (skipped)");
    return std::nullopt;
  }

  /// The entity of rank `rank` of communicator `comm`: the comm's group lists positions in the
  /// paradigm's COMM_LOCATIONS group, which lists locations.
  std::optional<EntityIndex> rank_entity(OTF2_CommRef comm, std::uint32_t rank, OTF2_LocationRef self) {
    const auto c = comms_.find(comm);
    if (c == comms_.end()) return std::nullopt;
    const auto g = groups_.find(c->second.group);
    if (g == groups_.end()) return std::nullopt;
    const GroupDef& group = g->second;
    if (group.type == OTF2_GROUP_TYPE_COMM_SELF) return rank == 0 ? entity_of(self) : std::nullopt;
    if (rank >= group.members.size()) return std::nullopt;
    const std::uint64_t member = group.members[rank];
    if (group.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) return entity_of(member);
    if (group.type != OTF2_GROUP_TYPE_COMM_GROUP) return std::nullopt;
    const auto lg = comm_locations_.find(group.paradigm);
    if (lg == comm_locations_.end()) return std::nullopt;
    const auto locs = groups_.find(lg->second);
    if (locs == groups_.end() || member >= locs->second.members.size()) return std::nullopt;
    return entity_of(locs->second.members[member]);
  }

  void message(double send_s, double recv_s, EntityIndex src, EntityIndex dst, std::uint64_t bytes, std::uint32_t tag,
               const MatchKey& key, LocationIndex location) {
    window_.message(Message{send_s, recv_s, src, dst, bytes, tag, location});
    ++summary_.messages;
    const auto it = pending_.find(key);
    if (it != pending_.end() && it->second.sends.empty() && it->second.receives.empty()) pending_.erase(it);
  }

  void define_entities();
  void choose_metric();

  std::string name_;
  /// The part being read, for error locations: "anchor file", "global definitions", ...
  std::string part_ = "anchor file";
  TraceSink& sink_;
  const Otf2Options& options_;
  EventWindow window_;
  StateStacks stacks_;
  ReaderWarnings warnings_;
  Otf2Summary summary_;

  bool have_clock_ = false;
  std::uint64_t resolution_ = 0, offset_ = 0, length_ = 0;
  std::uint64_t end_event_ = 0;  ///< event_number_ of the event with the latest time
  std::unordered_map<OTF2_StringRef, std::string> strings_;
  struct NodeDef {
    OTF2_StringRef name;
    OTF2_StringRef class_name;  ///< "machine", "node", "rack", ...
    OTF2_SystemTreeNodeRef parent;
  };
  std::unordered_map<OTF2_SystemTreeNodeRef, NodeDef> nodes_;
  std::map<OTF2_LocationGroupRef, LocationGroupDef> groups_of_locations_;
  std::map<OTF2_LocationRef, LocationDef> locations_;
  std::unordered_map<OTF2_RegionRef, OTF2_StringRef> regions_;
  std::unordered_map<OTF2_GroupRef, GroupDef> groups_;
  std::map<OTF2_Paradigm, OTF2_GroupRef> comm_locations_;
  std::unordered_map<OTF2_CommRef, CommDef> comms_;
  std::map<OTF2_MetricMemberRef, MemberDef> members_;
  std::map<OTF2_MetricRef, std::vector<OTF2_MetricMemberRef>> classes_;
  std::unordered_map<OTF2_MetricRef, InstanceDef> instances_;

  std::unordered_map<OTF2_LocationRef, EntityIndex> entity_of_location_;
  std::unordered_map<OTF2_RegionRef, std::string> region_names_;
  // Code locations: regions with a source file (Score-P's compiler-instrumented functions).
  struct RegionSource {
    OTF2_StringRef canonical;
    OTF2_StringRef file;
    std::uint32_t line;
  };
  struct RegionLocation {
    std::string file;
    std::int64_t line;
    std::string function;
  };
  std::unordered_map<OTF2_RegionRef, RegionSource> region_sources_;
  std::unordered_map<OTF2_RegionRef, RegionLocation> region_locations_;
  std::unordered_map<std::uint64_t, LocationIndex> located_calls_;  ///< (region << 32 | caller) → location
  std::vector<std::vector<LocationIndex>> location_stacks_;  ///< per entity: the open regions' locations
  LocationTable code_locations_{sink_};
  std::optional<OTF2_MetricMemberRef> chosen_member_;
  bool metric_is_rate_ = false;
  std::vector<std::pair<double, double>> last_sample_;
  std::unordered_map<MatchKey, Pending, MatchKeyHash> pending_;
  std::vector<std::vector<double>> collective_begin_;
  std::unordered_map<std::uint64_t, std::uint64_t> collective_count_;
  bool collective_records_ = false;  ///< an MpiCollectiveBegin/End has been read
  std::uint64_t events_ = 0;
  double last_s_ = 0;
};

template <typename F>
OTF2_CallbackCode guarded(void* user, F&& f) {
  auto& self = *static_cast<Otf2Reader*>(user);
  ++self.event_number_;
  try {
    f(self);
    return OTF2_CALLBACK_SUCCESS;
  } catch (...) {
    self.error_ = std::current_exception();
    return OTF2_CALLBACK_INTERRUPT;
  }
}

void Otf2Reader::define_entities() {
  // MPI ranks: positions in the MPI paradigm's COMM_LOCATIONS group.
  std::unordered_map<OTF2_LocationRef, std::int64_t> rank;
  if (const auto mpi = comm_locations_.find(OTF2_PARADIGM_MPI); mpi != comm_locations_.end()) {
    const auto g = groups_.find(mpi->second);
    if (g != groups_.end()) {
      for (std::size_t i = 0; i < g->second.members.size(); ++i) {
        rank.try_emplace(g->second.members[i], static_cast<std::int64_t>(i));
      }
    }
  }
  std::unordered_map<OTF2_LocationGroupRef, std::size_t> threads_per_group;
  for (const auto& [ref, loc] : locations_) {
    if (loc.type != OTF2_LOCATION_TYPE_METRIC) ++threads_per_group[loc.group];
  }
  for (const auto& [ref, loc] : locations_) {
    if (loc.type == OTF2_LOCATION_TYPE_METRIC) continue;
    Entity e;
    e.index = static_cast<EntityIndex>(entity_of_location_.size());
    e.id = static_cast<std::int64_t>(ref);
    const auto g = groups_of_locations_.find(loc.group);
    std::string group_name = g != groups_of_locations_.end() ? str(g->second.name) : std::string();
    if (group_name.empty()) group_name = "group " + std::to_string(loc.group);
    std::string location_name = str(loc.name);
    if (location_name.empty()) location_name = "location " + std::to_string(ref);
    e.name = threads_per_group[loc.group] > 1 ? group_name + "/" + location_name : group_name;
    if (g != groups_of_locations_.end()) {
      const auto n = nodes_.find(g->second.node);
      if (n != nodes_.end()) {
        e.host = str(n->second.name);
        // The system-tree nodes above the host, the root (Score-P's one "machine") left out; a
        // cycle of parents (a broken archive) stops after as many steps as there are nodes.
        auto up = nodes_.find(n->second.parent);
        for (std::size_t steps = 0; up != nodes_.end() && steps < nodes_.size(); ++steps) {
          const auto next = nodes_.find(up->second.parent);
          if (next == nodes_.end()) break;  // `up` is the root
          e.above_host.push_back({str(up->second.class_name), str(up->second.name)});
          up = next;
        }
      }
    }
    if (const auto r = rank.find(ref); r != rank.end()) e.rank = r->second;
    entity_of_location_.emplace(ref, e.index);
    sink_.on_entity(e);
  }
  for (const auto& [ref, name] : regions_) region_names_.emplace(ref, str(name));
  for (const auto& [ref, source] : region_sources_) {
    const std::string file = str(source.file);
    if (file.empty()) continue;
    std::string function = str(source.canonical);
    if (function.empty()) function = str(regions_[ref]);
    region_locations_.emplace(ref, RegionLocation{file, source.line, function});
  }
  if (!region_locations_.empty()) location_stacks_.resize(entity_of_location_.size());
  summary_.location_groups = groups_of_locations_.size();
  summary_.locations = entity_of_location_.size();
  summary_.regions = regions_.size();
}

void Otf2Reader::choose_metric() {
  if (options_.metric.empty()) {
    for (const auto& [ref, list] : classes_) {
      if (!list.empty() && members_.count(list.front()) != 0) {
        chosen_member_ = list.front();
        break;
      }
    }
  } else {
    std::vector<std::string> names;
    for (const auto& [ref, m] : members_) {
      names.push_back(str(m.name));
      if (names.back() == options_.metric && !chosen_member_) chosen_member_ = ref;
    }
    if (!chosen_member_) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      throw InputError(FileLoc::in_record(name_, "global definitions"), "metric '" + options_.metric + "' is not defined in this trace" +
                                           did_you_mean(options_.metric, names) +
                                           "; metrics: " + (list.empty() ? "none" : list));
    }
  }
  if (chosen_member_) {
    const MemberDef& m = members_.at(*chosen_member_);
    summary_.metric = str(m.name);
    metric_is_rate_ = (m.mode & OTF2_METRIC_VALUE_MASK) == OTF2_METRIC_VALUE_ACCUMULATED;
  }
}

Otf2Summary Otf2Reader::read() {
  ErrorCapture capture;
  struct ReaderHandle {
    OTF2_Reader* r;
    ~ReaderHandle() {
      if (r != nullptr) OTF2_Reader_Close(r);
    }
  } handle{OTF2_Reader_Open(name_.c_str())};
  OTF2_Reader* reader = handle.r;
  if (reader == nullptr) fail("the anchor file does not open", OTF2_SUCCESS);
  check(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "setting up the reader");

  // Global definitions.
  part_ = "global definitions";
  OTF2_GlobalDefReader* defs = OTF2_Reader_GetGlobalDefReader(reader);
  if (defs == nullptr) fail("the global definitions (traces.def) do not open", OTF2_SUCCESS);
  OTF2_GlobalDefReaderCallbacks* dcb = OTF2_GlobalDefReaderCallbacks_New();
  struct DefCallbacks {
    OTF2_GlobalDefReaderCallbacks* p;
    ~DefCallbacks() { OTF2_GlobalDefReaderCallbacks_Delete(p); }
  } dcb_owner{dcb};
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(
      dcb, +[](void* u, std::uint64_t res, std::uint64_t off, std::uint64_t len, std::uint64_t) {
        return guarded(u, [&](Otf2Reader& s) { s.clock(res, off, len); });
      });
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(dcb, +[](void* u, OTF2_StringRef self, const char* text) {
    return guarded(u, [&](Otf2Reader& s) { s.string(self, text); });
  });
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(
      dcb, +[](void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef class_name,
               OTF2_SystemTreeNodeRef parent) {
        return guarded(u, [&](Otf2Reader& s) { s.node(self, name, class_name, parent); });
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(
      dcb, +[](void* u, OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType,
               OTF2_SystemTreeNodeRef parent, OTF2_LocationGroupRef) {
        return guarded(u, [&](Otf2Reader& s) { s.location_group(self, name, parent); });
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
      dcb, +[](void* u, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type, std::uint64_t,
               OTF2_LocationGroupRef group) {
        return guarded(u, [&](Otf2Reader& s) { s.location(self, name, type, group); });
      });
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
      dcb, +[](void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonical, OTF2_StringRef, OTF2_RegionRole,
               OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef file, std::uint32_t begin_line, std::uint32_t) {
        return guarded(u, [&](Otf2Reader& s) { s.region(self, name, canonical, paradigm, file, begin_line); });
      });
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(
      dcb, +[](void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm paradigm,
               OTF2_GroupFlag, std::uint32_t n, const std::uint64_t* members) {
        return guarded(u, [&](Otf2Reader& s) { s.group(self, type, paradigm, n, members); });
      });
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(
      dcb, +[](void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef, OTF2_CommFlag) {
        return guarded(u, [&](Otf2Reader& s) { s.comm(self, name, group); });
      });
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(
      dcb, +[](void* u, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_MetricType,
               OTF2_MetricMode mode, OTF2_Type, OTF2_Base, std::int64_t, OTF2_StringRef) {
        return guarded(u, [&](Otf2Reader& s) { s.metric_member(self, name, mode); });
      });
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(
      dcb, +[](void* u, OTF2_MetricRef self, std::uint8_t n, const OTF2_MetricMemberRef* members,
               OTF2_MetricOccurrence, OTF2_RecorderKind) {
        return guarded(u, [&](Otf2Reader& s) { s.metric_class(self, n, members); });
      });
  OTF2_GlobalDefReaderCallbacks_SetMetricInstanceCallback(
      dcb, +[](void* u, OTF2_MetricRef self, OTF2_MetricRef cls, OTF2_LocationRef, OTF2_MetricScope scope_type,
               std::uint64_t scope) {
        return guarded(u, [&](Otf2Reader& s) { s.metric_instance(self, cls, scope_type, scope); });
      });
  check(OTF2_Reader_RegisterGlobalDefCallbacks(reader, defs, dcb, this), "registering definition callbacks");
  std::uint64_t count = 0;
  check(OTF2_Reader_ReadAllGlobalDefinitions(reader, defs, &count), "reading the global definitions");
  check(OTF2_Reader_CloseGlobalDefReader(reader, defs), "closing the global definitions");
  if (!have_clock_ || resolution_ == 0) {
    throw InputError(at(), "the OTF2 archive defines no clock (expected ClockProperties with a timer resolution in "
                           "the global definitions)");
  }
  if (locations_.empty()) {
    throw InputError(at(), "the OTF2 archive defines no locations (expected Location definitions in the global "
                           "definitions)");
  }
  summary_.timer_resolution = resolution_;
  choose_metric();
  define_entities();

  // Local definitions (id mappings) and the event readers of every location.
  part_ = "local definitions";
  for (const auto& [ref, loc] : locations_) check(OTF2_Reader_SelectLocation(reader, ref), "selecting a location");
  const bool have_local_defs = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  check(OTF2_Reader_OpenEvtFiles(reader), "opening the event files");
  for (const auto& [ref, loc] : locations_) {
    if (have_local_defs) {
      if (OTF2_DefReader* local = OTF2_Reader_GetDefReader(reader, ref)) {
        std::uint64_t n = 0;
        check(OTF2_Reader_ReadAllLocalDefinitions(reader, local, &n), "reading local definitions");
        check(OTF2_Reader_CloseDefReader(reader, local), "closing local definitions");
      }
    }
    if (OTF2_Reader_GetEvtReader(reader, ref) == nullptr) fail("the events of location " + std::to_string(ref) + " do not open", OTF2_SUCCESS);
  }
  if (have_local_defs) check(OTF2_Reader_CloseDefFiles(reader), "closing the local definition files");

  // Events, merged in time order by the library.
  part_ = "events";
  OTF2_GlobalEvtReader* events = OTF2_Reader_GetGlobalEvtReader(reader);
  if (events == nullptr) fail("the event files do not open", OTF2_SUCCESS);
  OTF2_GlobalEvtReaderCallbacks* ecb = OTF2_GlobalEvtReaderCallbacks_New();
  struct EvtCallbacks {
    OTF2_GlobalEvtReaderCallbacks* p;
    ~EvtCallbacks() { OTF2_GlobalEvtReaderCallbacks_Delete(p); }
  } ecb_owner{ecb};
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(
      ecb, +[](OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList*, OTF2_RegionRef region) {
        return guarded(u, [&](Otf2Reader& s) {
          s.every_event();
          s.enter(loc, t, region);
        });
      });
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(
      ecb, +[](OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList*, OTF2_RegionRef) {
        return guarded(u, [&](Otf2Reader& s) {
          s.every_event();
          s.leave(loc, t);
        });
      });
  OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(
      ecb, +[](OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList*, std::uint32_t receiver,
               OTF2_CommRef comm, std::uint32_t tag, std::uint64_t length) {
        return guarded(u, [&](Otf2Reader& s) { s.send(loc, t, receiver, comm, tag, length); });
      });
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(
      ecb, +[](OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList*, std::uint32_t receiver,
               OTF2_CommRef comm, std::uint32_t tag, std::uint64_t length, std::uint64_t) {
        return guarded(u, [&](Otf2Reader& s) { s.send(loc, t, receiver, comm, tag, length); });
      });
  OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(
      ecb, +[](OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList*, std::uint32_t sender,
               OTF2_CommRef comm, std::uint32_t tag, std::uint64_t) {
        return guarded(u, [&](Otf2Reader& s) { s.receive(loc, t, sender, comm, tag); });
      });
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(
      ecb, +[](OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList*, std::uint32_t sender,
               OTF2_CommRef comm, std::uint32_t tag, std::uint64_t, std::uint64_t) {
        return guarded(u, [&](Otf2Reader& s) { s.receive(loc, t, sender, comm, tag); });
      });
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(
      ecb, +[](OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList*) {
        return guarded(u, [&](Otf2Reader& s) { s.collective_begin(loc, t); });
      });
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(
      ecb, +[](OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList*, OTF2_CollectiveOp op,
               OTF2_CommRef comm, std::uint32_t root, std::uint64_t sent, std::uint64_t) {
        return guarded(u, [&](Otf2Reader& s) { s.collective_end(loc, t, op, comm, root, sent); });
      });
  OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(
      ecb, +[](OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList*, OTF2_MetricRef metric,
               std::uint8_t n, const OTF2_Type* types, const OTF2_MetricValue* values) {
        return guarded(u, [&](Otf2Reader& s) { s.metric(loc, t, metric, n, types, values); });
      });
  check(OTF2_Reader_RegisterGlobalEvtCallbacks(reader, events, ecb, this), "registering event callbacks");
  count = 0;
  event_number_ = 0;  // definitions went through the same callbacks
  check(OTF2_Reader_ReadAllGlobalEvents(reader, events, &count), "reading the events");
  check(OTF2_Reader_CloseGlobalEvtReader(reader, events), "closing the events");
  check(OTF2_Reader_CloseEvtFiles(reader), "closing the event files");

  const double declared_end = static_cast<double>(length_) / static_cast<double>(resolution_);
  const double end = std::max(last_s_, declared_end);
  summary_.end_at = FileLoc{name_ + (end_event_ > 0 && last_s_ >= declared_end
                                 ? " (event " + std::to_string(end_event_) + " in time order, as otf2-print lists them)"
                                 : std::string(" (the trace length of its ClockProperties)"))};
  const std::uint64_t open = stacks_.close_all(end);
  if (open > 0) warnings_.add("Enter without a matching Leave (ended at the end of the trace)", FileLoc{name_}, open);
  std::uint64_t sends = 0, receives = 0;
  for (const auto& [key, p] : pending_) {
    sends += p.sends.size();
    receives += p.receives.size();
  }
  if (sends > 0) warnings_.add("MPI send without a matching receive (dropped)", FileLoc{name_}, sends);
  if (receives > 0) warnings_.add("MPI receive without a matching send (dropped)", FileLoc{name_}, receives);
  try {
    window_.flush();
    sink_.on_end(end);
  } catch (const InputError& e) {
    const auto& ds = e.diagnostics();
    if (ds.size() == 1 && ds[0].loc.file.empty()) throw InputError(at(), ds[0].message);
    throw;
  }
  if (window_.late_events() > 0) {
    warnings_.add("events older than the reordering window moved forward in time", FileLoc{name_},
                  window_.late_events());
  }
  summary_.warnings = warnings_.items();
  return summary_;
}

}  // namespace

std::filesystem::path otf2_anchor(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return path;
  std::vector<std::filesystem::path> anchors;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    if (entry.path().extension() == ".otf2" && entry.is_regular_file(ec)) anchors.push_back(entry.path());
  }
  if (anchors.size() != 1) {
    throw InputError(FileLoc{path.string()}, anchors.empty()
                                                 ? std::string("directory holds no OTF2 anchor file (expected one *.otf2 "
                                                               "file directly in it)")
                                                 : std::string("directory holds several OTF2 anchor files (expected one; "
                                                               "name one)"));
  }
  return anchors.front();
}

std::vector<std::filesystem::path> otf2_trace_files(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const fs::path anchor = otf2_anchor(path);
  std::vector<fs::path> files{anchor};
  std::error_code ec;
  fs::path def = anchor;
  if (fs::is_regular_file(def.replace_extension(".def"), ec)) files.push_back(def);
  // The archive's folder (the anchor's name without .otf2): local definitions and events.
  fs::path dir = anchor;
  dir.replace_extension();
  std::vector<fs::path> local;
  if (fs::is_directory(dir, ec)) {
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) local.push_back(it->path());
    }
  }
  std::sort(local.begin(), local.end());
  files.insert(files.end(), local.begin(), local.end());
  return files;
}

bool looks_like_otf2_anchor(std::string_view head) { return head.size() >= 6 && head.substr(1, 5) == "BOTF2"; }

bool is_otf2_directory(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return false;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    if (entry.path().extension() == ".otf2") return true;
  }
  return false;
}

Otf2Summary read_otf2_trace(const std::filesystem::path& path, TraceSink& sink, const Otf2Options& options) {
  const std::filesystem::path anchor = otf2_anchor(path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(anchor, ec)) {
    throw InputError(FileLoc{anchor.string()}, "cannot open trace: no such OTF2 anchor file");
  }
  // The library leaks what it allocated when it fails to open an anchor; refuse obvious
  // non-anchors before it sees them.
  std::string head(6, '\0');
  std::ifstream in(anchor, std::ios::binary);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (!looks_like_otf2_anchor(head.substr(0, static_cast<std::size_t>(in.gcount())))) {
    throw InputError(FileLoc::in_record(anchor.string(), "header", 0),
                     "not an OTF2 anchor file (it does not start with OTF2's magic bytes)");
  }
  Otf2Reader reader(anchor.string(), sink, options);
  return reader.read();
}

}  // namespace kanoko::trace#include "src/trace/locations.hpp"

