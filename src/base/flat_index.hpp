// A hash index from 64-bit keys to 32-bit values for the trace readers' hot paths (node ids →
// entities, the open bin's pairs → their slot): open addressing with linear probing in one flat
// array, no allocation per insertion, and clear() in time proportional to the entries, not to the
// capacity. About three times faster than std::unordered_map on the native reader's workload
// (bench/bench_pipeline.cpp, ReadNative).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/base/check.hpp"

namespace kanoko {

/// The value of `s` when it is one to `max_digits` decimal digits and nothing else (at most 19
/// digits, so that it cannot overflow).
inline bool decimal_digits(std::string_view s, std::size_t max_digits, std::size_t& out) {
  if (s.empty() || s.size() > max_digits || s.size() > 19) return false;
  std::size_t v = 0;
  for (const char c : s) {
    const auto d = static_cast<unsigned>(c - '0');
    if (d > 9) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

/// Fibonacci hashing: the top `bits` bits of key × 2⁶⁴/φ, which spread consecutive ids (and
/// packed pairs of them) over a table of 2^bits slots.
inline std::size_t fibonacci_slot(std::uint64_t key, unsigned bits) {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> (64U - bits));
}

class FlatIndex {
 public:
  /// The one key that cannot be stored (it marks empty slots).
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  /// The value stored for `key`, or nullptr.
  [[nodiscard]] const std::uint32_t* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }

  /// Stores key → value unless the key is there; returns the stored value and whether it was
  /// inserted.
  std::pair<std::uint32_t*, bool> try_emplace(std::uint64_t key, std::uint32_t value) {
    KANOKO_ASSERT(key != kEmpty, "FlatIndex cannot store its empty marker");
    if (2 * (used_.size() + 1) > slots_.size()) grow();
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) return {&s.value, false};
      if (s.key == kEmpty) {
        s = Slot{key, value};
        used_.push_back(i);
        return {&s.value, true};
      }
    }
  }

  [[nodiscard]] std::size_t size() const { return used_.size(); }

  /// Removes every entry; keeps the capacity.
  void clear() {
    for (const std::size_t i : used_) slots_[i].key = kEmpty;
    used_.clear();
  }

 private:
  struct Slot {
    std::uint64_t key = kEmpty;
    std::uint32_t value = 0;
  };

  [[nodiscard]] std::size_t home(std::uint64_t key) const { return fibonacci_slot(key, 64U - shift_) & mask_; }

  void grow() {
    const std::size_t capacity = slots_.empty() ? 64 : 2 * slots_.size();
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1U) --shift_;
    std::vector<std::size_t> old_used;
    old_used.swap(used_);
    used_.reserve(old_used.size());
    for (const std::size_t i : old_used) (void)try_emplace(old[i].key, old[i].value);
  }

  std::vector<Slot> slots_;
  std::vector<std::size_t> used_;  ///< occupied slots, for clear()
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
};

/// An index from (source, destination) pairs of dense entity indexes to 32-bit values, for
/// traffic, where a source talks to few destinations: each source's first kNear destinations are
/// kept beside it (one cache line a source, no hashing), a FlatIndex holds the others. Looking up
/// 14 million messages of a 10,000-rank halo exchange in a FlatIndex alone took 0.6 s.
class PairIndex {
 public:
  static constexpr std::size_t kNear = 7;
  /// Sources from this index up go to the FlatIndex alone (64 bytes a source below it).
  static constexpr std::uint32_t kMaxNearSources = std::uint32_t{1} << 22U;

  /// The value stored for (src, dst), or nullptr.
  [[nodiscard]] const std::uint32_t* find(std::uint32_t src, std::uint32_t dst) const {
    if (src < sources_.size()) {
      const Source& s = sources_[src];
      for (std::uint32_t k = 0; k < s.count; ++k) {
        if (s.dst[k] == dst) return &s.value[k];
      }
      if (s.count < kNear) return nullptr;
    }
    return far_.find(key(src, dst));
  }

  /// Stores (src, dst) → value unless the pair is there; returns the stored value and whether it
  /// was inserted.
  std::pair<std::uint32_t*, bool> try_emplace(std::uint32_t src, std::uint32_t dst, std::uint32_t value) {
    if (src < kMaxNearSources) {
      if (src >= sources_.size()) sources_.resize(std::max<std::size_t>(std::size_t{src} + 1, 2 * sources_.size()));
      Source& s = sources_[src];
      for (std::uint32_t k = 0; k < s.count; ++k) {
        if (s.dst[k] == dst) return {&s.value[k], false};
      }
      if (s.count < kNear) {
        s.dst[s.count] = dst;
        s.value[s.count] = value;
        return {&s.value[s.count++], true};
      }
    }
    return far_.try_emplace(key(src, dst), value);
  }

 private:
  struct Source {
    std::uint32_t count = 0;
    std::uint32_t dst[kNear] = {};
    std::uint32_t value[kNear] = {};
  };
  static std::uint64_t key(std::uint32_t src, std::uint32_t dst) { return std::uint64_t{src} << 32U | dst; }

  std::vector<Source> sources_;
  FlatIndex far_;
};

/// A hash index from strings to 32-bit values for the trace readers' names (Pajé container and
/// type aliases, state values): one FlatIndex probe on a 64-bit digest of the string and one
/// comparison with the stored string, no allocation per lookup. Two strings with the same digest
/// (rare) are kept correct by a fallback map. Names that are decimal numbers below 2^20 without
/// leading zeros (SimGrid's aliases) skip the hash: they index an array directly. Pointers
/// returned are valid until the next insertion.
class FlatStringIndex {
 public:
  /// `digest_mask` keeps only some bits of the digest: tests make collisions common with it.
  explicit FlatStringIndex(std::uint64_t digest_mask = ~std::uint64_t{0}) : mask_(digest_mask) {}

  /// What a lookup computes from the string before it probes: the number of a small decimal
  /// name, or the digest of any other. Computing it elsewhere (a reader's worker thread) leaves
  /// only the probe to find().
  struct Key {
    std::uint64_t digest = 0;  ///< for names that are not small numbers
    std::size_t number = 0;
    bool is_number = false;
  };
  static Key key_of(std::string_view s) {
    Key k;
    k.is_number = small_number(s, k.number);
    if (!k.is_number) k.digest = digest(s);
    return k;
  }
  /// The same for a string a scanner has read: its first `digits` bytes are decimal digits whose
  /// value is `value` (meaningless beyond 19 digits).
  static Key key_of(std::string_view s, std::size_t digits, std::size_t value) {
    Key k;
    k.is_number = digits == s.size() && digits <= 7 && small_decimal(s, value);
    if (k.is_number) {
      k.number = value;
    } else {
      k.digest = digest(s);
    }
    return k;
  }

  /// The value stored for `s`, or nullptr.
  [[nodiscard]] const std::uint32_t* find(std::string_view s) const { return find(s, key_of(s)); }
  /// The same with `s`'s key_of(s).
  [[nodiscard]] const std::uint32_t* find(std::string_view s, const Key& k) const {
    if (k.is_number) {
      return k.number < direct_.size() && direct_[k.number] != kNoValue ? &direct_[k.number] : nullptr;
    }
    const std::uint32_t* slot = by_digest_.find(k.digest & mask_);
    if (slot == nullptr) return nullptr;
    const Entry& e = entries_[*slot];
    if (equal(e.text, s)) return &e.value;
    return find_collision(s);
  }

  /// Stores s → value (any but 2^32 - 1) unless s is there; returns the stored value and whether
  /// it was inserted.
  std::pair<std::uint32_t*, bool> try_emplace(std::string_view s, std::uint32_t value) {
    KANOKO_ASSERT(value != kNoValue, "FlatStringIndex cannot store its free marker");
    std::size_t number = 0;
    if (small_number(s, number)) {
      if (number >= direct_.size()) direct_.resize(std::max(number + 1, 2 * direct_.size()), kNoValue);
      std::uint32_t& v = direct_[number];
      const bool inserted = v == kNoValue;
      if (inserted) {
        v = value;
        ++direct_count_;
      }
      return {&v, inserted};
    }
    const auto next = static_cast<std::uint32_t>(entries_.size());
    const auto [slot, inserted] = by_digest_.try_emplace(digest(s) & mask_, next);
    if (inserted) {
      entries_.push_back(Entry{std::string(s), value});
      return {&entries_.back().value, true};
    }
    Entry& e = entries_[*slot];
    if (equal(e.text, s)) return {&e.value, false};
    const auto [it, added] = collisions_.try_emplace(std::string(s), value);
    return {&it->second, added};
  }

  [[nodiscard]] std::size_t size() const { return direct_count_ + entries_.size() + collisions_.size(); }

  /// 64-bit digest of a string, eight bytes at a time; never FlatIndex::kEmpty. The last one to
  /// seven bytes are read with fixed-size (overlapping) loads, never past the string.
  static std::uint64_t digest(std::string_view s) {
    const char* p = s.data();
    const std::size_t n = s.size();
    std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      h = (h ^ load<std::uint64_t>(p + i)) * 0xFF51AFD7ED558CCDULL;
      h ^= h >> 32U;
    }
    const std::size_t rest = n - i;
    std::uint64_t w = 0;
    if (rest >= 4) {
      w = load<std::uint32_t>(p + i) | (std::uint64_t{load<std::uint32_t>(p + n - 4)} << 32U);
    } else if (rest > 0) {
      w = static_cast<unsigned char>(p[i]) | (std::uint64_t{static_cast<unsigned char>(p[i + rest / 2])} << 8U) |
          (std::uint64_t{static_cast<unsigned char>(p[n - 1])} << 16U);
    }
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 29U;
    return h == FlatIndex::kEmpty ? 0 : h;
  }

 private:
  struct Entry {
    std::string text;
    std::uint32_t value;
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  static constexpr std::uint32_t kNoValue = ~std::uint32_t{0};  ///< marks free direct slots
  static constexpr std::size_t kDirectLimit = std::size_t{1} << 20U;

  /// A decimal number below kDirectLimit written without leading zeros ("0", "17", "113").
  static bool small_number(std::string_view s, std::size_t& out) { return decimal_digits(s, 7, out) && small_decimal(s, out); }
  /// The rest of that rule for `s`, all decimal digits of value `value`.
  static bool small_decimal(std::string_view s, std::size_t value) {
    return !s.empty() && (s.size() == 1 || s[0] != '0') && value < kDirectLimit;
  }

  template <typename T>
  static T load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }

 public:
  /// String equality without a library call for the short names of traces.
  static bool equal(std::string_view a, std::string_view b) {
    const std::size_t n = b.size();
    if (a.size() != n) return false;
    const char* x = a.data();
    const char* y = b.data();
    if (n >= 8) {
      if (n > 16) return std::memcmp(x, y, n) == 0;
      // Two overlapping words cover 8 to 16 bytes.
      return ((load<std::uint64_t>(x) ^ load<std::uint64_t>(y)) | (load<std::uint64_t>(x + n - 8) ^ load<std::uint64_t>(y + n - 8))) == 0;
    }
    if (n >= 4) {
      return ((load<std::uint32_t>(x) ^ load<std::uint32_t>(y)) | (load<std::uint32_t>(x + n - 4) ^ load<std::uint32_t>(y + n - 4))) == 0;
    }
    return n == 0 || (x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1]);
  }

 private:
  [[nodiscard]] const std::uint32_t* find_collision(std::string_view s) const {
    if (collisions_.empty()) return nullptr;
    const auto it = collisions_.find(s);
    return it == collisions_.end() ? nullptr : &it->second;
  }

  std::uint64_t mask_;
  std::vector<std::uint32_t> direct_;  ///< small decimal names → value, kNoValue when absent
  std::size_t direct_count_ = 0;
  FlatIndex by_digest_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> collisions_;
};

}  // namespace kanoko
