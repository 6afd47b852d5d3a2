// The last few names looked up, with what a search found for them: a trace's states take a few
// names over and over, and a comparison against those is cheaper than a search of a map (the
// survey's std::map and the state classifier's hash map each took about a tenth of their
// thread's time at 10,000 ranks).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace kanoko::trace {

template <typename Value>
class RecentNames {
 public:
  /// What was remembered for `name`, or nullptr. Sizes and first characters are compared
  /// first: the full comparison runs on a (near-certain) match.
  [[nodiscard]] const Value* find(std::string_view name) const {
    for (const Entry& e : entries_) {
      if (e.used && e.name.size() == name.size() && (name.empty() || e.name[0] == name[0]) && e.name == name) {
        return &e.value;
      }
    }
    return nullptr;
  }
  /// Remembers `value` for `name` (a copy of it: the caller's buffer may change), in place of
  /// the oldest.
  void remember(std::string_view name, const Value& value) {
    entries_[next_++ % entries_.size()] = Entry{true, std::string(name), value};
  }

 private:
  struct Entry {
    bool used = false;
    std::string name;
    Value value{};
  };
  std::array<Entry, 4> entries_{};
  std::size_t next_ = 0;
};

}  // namespace kanoko::trace
