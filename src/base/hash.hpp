// FNV-1a, 64 bit: the input digest that keys the trajectory cache and the trajectory checksum.
// Not cryptographic; it only has to notice that an input changed or a file was cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kanoko {

class Fnv1a64 {
 public:
  static constexpr std::uint64_t kOffset = 0xcbf29ce484222325ULL;
  static constexpr std::uint64_t kPrime = 0x100000001b3ULL;

  void update(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::uint64_t h = state_;
    for (std::size_t i = 0; i < bytes; ++i) {
      h ^= p[i];
      h *= kPrime;
    }
    state_ = h;
  }
  void update(std::string_view s) { update(s.data(), s.size()); }
  template <class T>
  void update_value(const T& v) {
    update(&v, sizeof v);
  }
  [[nodiscard]] std::uint64_t digest() const { return state_; }

 private:
  std::uint64_t state_ = kOffset;
};

}  // namespace kanoko
