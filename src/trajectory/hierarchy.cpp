#include "src/trajectory/hierarchy.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <unordered_map>

#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/base/suggest.hpp"
#include "src/trajectory/panel_values.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::trajectory {

namespace {

/// CSR of `of` (a group per element, groups < groups): begin offsets and the elements in order.
void build_csr(const std::vector<std::uint32_t>& of, std::size_t groups, std::vector<std::uint32_t>& begin,
               std::vector<std::uint32_t>& items) {
  begin.assign(groups + 1, 0);
  for (const std::uint32_t g : of) ++begin[g + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  items.assign(of.size(), 0);
  std::vector<std::uint32_t> next(begin.begin(), begin.end() - 1);
  for (std::size_t i = 0; i < of.size(); ++i) items[next[of[i]]++] = static_cast<std::uint32_t>(i);
}

/// The cluster a host named like the hosts of a SimGrid cluster belongs to: the name with its
/// first run of digits replaced by '*' ("graphene-12.nancy" -> "graphene-*.nancy", "c-3.me" ->
/// "c-*.me"); "" for a name without digits.
std::string cluster_of_host(std::string_view host) {
  const auto first = host.find_first_of("0123456789");
  if (first == std::string_view::npos) return {};
  auto last = host.find_first_not_of("0123456789", first);
  if (last == std::string_view::npos) last = host.size();
  return std::string(host.substr(0, first)) + "*" + std::string(host.substr(last));
}

/// SimGrid names its zone types after their depth: "L1", "L2", ...
bool is_simgrid_zone_type(std::string_view type) {
  return type.size() >= 2 && type[0] == 'L' && type.find_first_not_of("0123456789", 1) == std::string_view::npos;
}

}  // namespace

Hierarchy::Hierarchy(const Metadata& meta, std::vector<LevelSpec> above) {
  const std::size_t n = meta.body_count();
  Level ranks;
  ranks.name = "rank";
  ranks.names.reserve(n);
  ranks.of_body.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    ranks.names.push_back(meta.bodies[i].name.empty() ? "body " + std::to_string(i) : meta.bodies[i].name);
    ranks.of_body[i] = static_cast<std::uint32_t>(i);
  }
  build_csr(ranks.of_body, n, ranks.body_begin, ranks.members);
  levels_.push_back(std::move(ranks));

  std::vector<std::string> hosts(n);
  bool any_host = false;
  for (std::size_t i = 0; i < n; ++i) {
    hosts[i] = meta.bodies[i].host.empty() ? levels_[0].names[i] : meta.bodies[i].host;
    any_host = any_host || !meta.bodies[i].host.empty();
  }
  if (any_host) add_level("host", hosts);
  // The trace's containers above the hosts (BodyInfo::above_host): one level per container type,
  // the types ordered by how deep below the root they lie (deepest first); a group whose bodies
  // have no container of a level's type stays on its own at that level.
  std::vector<std::pair<std::size_t, std::string>> types;  // (deepest depth from the root, type)
  for (const BodyInfo& b : meta.bodies) {
    for (std::size_t k = 0; k < b.above_host.size(); ++k) {
      const std::size_t depth = b.above_host.size() - k;
      const auto it = std::find_if(types.begin(), types.end(), [&](const auto& t) { return t.second == b.above_host[k].type; });
      if (it == types.end()) {
        types.emplace_back(depth, b.above_host[k].type);
      } else {
        it->first = std::max(it->first, depth);
      }
    }
  }
  std::stable_sort(types.begin(), types.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const auto simgrid_zones = std::count_if(types.begin(), types.end(), [](const auto& t) { return is_simgrid_zone_type(t.second); });
  for (const auto& [depth, type] : types) {
    const Level& below = levels_.back();
    std::vector<std::string> parents(below.names.size());
    for (std::size_t g = 0; g < below.names.size(); ++g) {
      const auto& chain = meta.bodies[below.members[below.body_begin[g]]].above_host;
      const auto it = std::find_if(chain.begin(), chain.end(), [&t = type](const Enclosing& c) { return c.type == t; });
      parents[g] = it == chain.end() ? below.names[g] : it->name;
    }
    // The level's name: the type in lower case; SimGrid's "L2" is "zone" when it is the only zone
    // level, else "zone2"; a type called like a level before it gets "-container".
    std::string name = type;
    if (is_simgrid_zone_type(type)) name = simgrid_zones == 1 ? "zone" : "zone" + type.substr(1);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::replace(name.begin(), name.end(), ' ', '-');
    if (std::any_of(levels_.begin(), levels_.end(), [&](const Level& l) { return l.name == name; })) name += "-container";
    add_level(std::move(name), parents);
  }
  if (any_host && types.empty()) {
    // The last resort above the hosts, from their names: numbered hosts that share the rest of
    // their name form a cluster. Kept only when it tells hosts apart (at least two clusters, fewer
    // than the hosts): "node-0" .. "node-7" alone make no level.
    const Level& host_level = levels_.back();
    std::vector<std::string> clusters(host_level.names.size());
    for (std::size_t g = 0; g < clusters.size(); ++g) {
      clusters[g] = cluster_of_host(host_level.names[g]);
      if (clusters[g].empty()) clusters[g] = host_level.names[g];
    }
    std::vector<std::string> distinct = clusters;
    std::sort(distinct.begin(), distinct.end());
    const auto count = static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
    if (count >= 2 && count < clusters.size()) add_level("cluster", clusters);
  }
  for (LevelSpec& spec : above) {
    const Level& below = levels_.back();
    std::vector<std::string> parents(below.names.size());
    for (std::size_t g = 0; g < below.names.size(); ++g) {
      std::string p = spec.parent ? spec.parent(below.names[g]) : std::string();
      parents[g] = p.empty() ? below.names[g] : std::move(p);
    }
    add_level(std::move(spec.name), parents);
  }
}

void Hierarchy::add_level(std::string name, const std::vector<std::string>& parent_names) {
  Level& below = levels_.back();
  Level up;
  up.name = std::move(name);
  std::unordered_map<std::string, std::uint32_t> index;
  below.parent.resize(parent_names.size());
  // Groups in the order of their first member, so that items follow the bodies' order.
  for (std::size_t g = 0; g < parent_names.size(); ++g) {
    const auto [it, added] = index.emplace(parent_names[g], static_cast<std::uint32_t>(up.names.size()));
    if (added) up.names.push_back(parent_names[g]);
    below.parent[g] = it->second;
  }
  up.of_body.resize(below.of_body.size());
  for (std::size_t b = 0; b < below.of_body.size(); ++b) up.of_body[b] = below.parent[below.of_body[b]];
  build_csr(below.parent, up.names.size(), up.child_begin, up.children);
  build_csr(up.of_body, up.names.size(), up.body_begin, up.members);
  levels_.push_back(std::move(up));
}

std::size_t Hierarchy::level_index(std::string_view name, const std::string& where) const {
  std::vector<std::string> names;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    if (levels_[l].name == name) return l;
    names.push_back(levels_[l].name);
  }
  std::string list;
  for (const auto& s : names) list += (list.empty() ? "" : ", ") + s;
  throw InputError(FileLoc{where}, "no level '" + std::string(name) + "' in this run" + did_you_mean(name, names) +
                                       "; its levels are: " + list);
}

std::uint32_t Hierarchy::parent(std::size_t level, std::size_t group) const {
  KANOKO_ASSERT(level + 1 < levels_.size(), "the top level has no parent");
  return levels_[level].parent.at(group);
}

std::span<const std::uint32_t> Hierarchy::children(std::size_t level, std::size_t group) const {
  KANOKO_ASSERT(level >= 1 && level < levels_.size(), "ranks have no children");
  const Level& l = levels_[level];
  return {l.children.data() + l.child_begin.at(group), l.child_begin.at(group + 1) - l.child_begin[group]};
}

std::span<const std::uint32_t> Hierarchy::bodies(std::size_t level, std::size_t group) const {
  const Level& l = levels_.at(level);
  return {l.members.data() + l.body_begin.at(group), l.body_begin.at(group + 1) - l.body_begin[group]};
}

std::uint32_t Hierarchy::group_of(std::size_t level, std::size_t body) const { return levels_.at(level).of_body.at(body); }

std::size_t Hierarchy::level_that_fits(std::size_t budget) const {
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    if (levels_[l].names.size() <= budget) return l;
  }
  return levels_.size() - 1;
}

Cut::Cut(const Hierarchy& h, std::size_t level) : h_(&h) {
  KANOKO_ASSERT(level < h.level_count(), "a cut starts at an existing level");
  for (std::size_t g = 0; g < h.group_count(level); ++g) {
    items_.push_back({static_cast<std::uint32_t>(level), static_cast<std::uint32_t>(g)});
  }
  reindex();
}

void Cut::reindex() {
  std::sort(items_.begin(), items_.end(),
            [this](const Item& a, const Item& b) { return bodies_of(a).front() < bodies_of(b).front(); });
  item_of_body_.assign(h_->group_count(0), 0);
  for (std::size_t k = 0; k < items_.size(); ++k) {
    for (const std::uint32_t b : bodies(k)) item_of_body_[b] = static_cast<std::uint32_t>(k);
  }
}

std::span<const std::uint32_t> Cut::bodies_of(const Item& it) const { return h_->bodies(it.level, it.group); }

std::span<const std::uint32_t> Cut::bodies(std::size_t item) const { return bodies_of(items_.at(item)); }

std::size_t Cut::item_of_body(std::size_t body) const { return item_of_body_.at(body); }

bool Cut::open(std::size_t item) {
  const Item it = items_.at(item);
  if (it.level == 0) return false;
  items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(item));
  for (const std::uint32_t c : h_->children(it.level, it.group)) items_.push_back({it.level - 1, c});
  reindex();
  return true;
}

bool Cut::close(std::size_t item) {
  const Item it = items_.at(item);
  if (it.level + 1 >= h_->level_count()) return false;
  const Item up{it.level + 1, h_->parent(it.level, it.group)};
  const auto members = h_->bodies(up.level, up.group);
  // Every item whose bodies lie in the parent goes (they tile it, whatever their levels).
  std::erase_if(items_, [&](const Item& x) { return std::binary_search(members.begin(), members.end(), bodies_of(x).front()); });
  items_.push_back(up);
  reindex();
  return true;
}

void aggregate(const Cut& cut, const Metadata& meta, const FrameView& f, AggregateFrame& out) {
  const auto items = static_cast<Eigen::Index>(cut.items().size());
  const auto s = static_cast<Eigen::Index>(meta.stat_count());
  out.positions.setZero(3, items);
  out.velocities.setZero(3, items);
  out.stats.setZero(s, items);
  std::vector<bool> mean(static_cast<std::size_t>(s));
  for (Eigen::Index j = 0; j < s; ++j) mean[static_cast<std::size_t>(j)] = is_fraction_stat(meta.stat_names[static_cast<std::size_t>(j)]);
  for (Eigen::Index k = 0; k < items; ++k) {
    const auto members = cut.bodies(static_cast<std::size_t>(k));
    for (const std::uint32_t b : members) {
      out.positions.col(k) += f.positions.col(b);
      out.velocities.col(k) += f.velocities.col(b);
      if (s > 0) out.stats.col(k) += f.stats.col(b);
    }
    const double count = static_cast<double>(members.size());
    out.positions.col(k) /= count;
    out.velocities.col(k) /= count;
    for (Eigen::Index j = 0; j < s; ++j) {
      if (mean[static_cast<std::size_t>(j)]) out.stats(j, k) /= count;
    }
  }
}

}  // namespace kanoko::trajectory
