#include "src/trace/state_collectives.hpp"

namespace kanoko::trace {

const MpiCall* CollectivesFromStates::collective_call(std::string_view name) {
  if (const std::uint32_t* i = names_.find(name)) return calls_[*i];
  const MpiCall* c = find_mpi_call(name);
  if (c != nullptr && c->collective == CollectiveKind::None) c = nullptr;
  names_.try_emplace(name, static_cast<std::uint32_t>(calls_.size()));
  calls_.push_back(c);
  return c;
}

const MpiCall* CollectivesFromStates::state_call(std::string_view name) {
  if (name.empty()) return nullptr;
  Recent& r = recent_[(name.size() + 3 * static_cast<unsigned char>(name.back())) % recent_.size()];
  if (r.used && FlatStringIndex::equal(r.name, name)) return r.call;
  r.name.assign(name);
  r.call = has_mpi_prefix(name) ? collective_call(name) : nullptr;
  r.used = true;
  return r.call;
}

void CollectivesFromStates::on_state(const StateInterval& s) {
  down_.on_state(s);
  if (!active_) return;
  const MpiCall* call = state_call(s.name);
  if (call == nullptr) return;
  const auto op = static_cast<std::uint64_t>(call - mpi_calls().data());
  std::uint64_t& calls = counts_[(std::uint64_t{s.entity} << 32U) | op];
  group_.assign(call->name);
  group_ += '#';
  group_ += std::to_string(calls++);
  Collective c;
  c.begin_s = s.begin_s;
  c.end_s = s.end_s;
  c.entity = s.entity;
  c.name = s.name;
  c.group = group_;
  ++added_;
  down_.on_collective(c);
}

void CollectivesFromStates::on_collective(const Collective& c) {
  active_ = false;
  down_.on_collective(c);
}

void CollectivesFromStates::on_collective_records() {
  active_ = false;
  down_.on_collective_records();
}

}  // namespace kanoko::trace
