// Re-sealing a tampered trajectory file, as a deliberate forger would: every checksum the format
// has is recomputed over the changed bytes (docs/trajectory-format.md), so that what remains must
// be caught by the structural and value checks. Shared by the unit tests and fuzz_trajectory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "src/base/hash.hpp"

namespace kanoko::trajectory::testing {

/// Writes `value` at byte `offset` of `bytes`.
template <class T>
void poke(std::string& bytes, std::size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}
/// Reads a T at byte `offset` of `bytes`.
template <class T>
T peek(const std::string& bytes, std::size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

/// FNV-1a 64 of bytes [begin, end) of `bytes`.
inline std::uint64_t fnv(const std::string& bytes, std::size_t begin, std::size_t end) {
  Fnv1a64 h;
  h.update(bytes.data() + begin, end - begin);
  return h.digest();
}

/// Format 1: file_size, the header hash and the trailer checksum.
inline void reseal_v1(std::string& bytes) {
  if (bytes.size() < 96 + 16) return;
  poke<std::uint64_t>(bytes, 72, bytes.size());
  poke<std::uint64_t>(bytes, 80, fnv(bytes, 0, 80));
  poke<std::uint64_t>(bytes, bytes.size() - 16, fnv(bytes, 96, bytes.size() - 16));
}

/// Formats 2 (FNV-1a 64) and 3 (XXH3-64, the same layout): the sections hash, every block's
/// checksum and footer hash (as far as the header's layout and the completion record's frame count
/// find them), the completion record's file size, footer digest and own hash (when it is present),
/// then the header hash.
template <class Hash>
void reseal_blocks(std::string& bytes) {
  const auto digest = [&bytes](std::size_t begin, std::size_t end) {
    Hash h;
    h.update(bytes.data() + begin, end - begin);
    return h.digest();
  };
  constexpr std::size_t kSections = 144, kFooter = 48;
  if (bytes.size() < kSections) return;
  const auto frames_offset = peek<std::uint64_t>(bytes, 32);
  const auto stride = peek<std::uint64_t>(bytes, 40);
  const auto block_frames = peek<std::uint32_t>(bytes, 24);
  if (frames_offset >= kSections && frames_offset <= bytes.size()) {
    poke<std::uint64_t>(bytes, 80, digest(kSections, frames_offset));
    const bool complete = peek<std::uint64_t>(bytes, 96) != 0;
    std::uint64_t remaining = complete ? peek<std::uint64_t>(bytes, 104) : ~std::uint64_t{0};
    Hash footers;
    std::uint64_t pos = frames_offset;
    while (stride > 0 && stride < bytes.size() && block_frames > 0 && remaining > 0) {
      const std::uint64_t n = std::min<std::uint64_t>(block_frames, remaining);
      if (n > (bytes.size() - pos) / stride || bytes.size() - pos - n * stride < kFooter) break;
      const std::uint64_t footer = pos + n * stride;
      poke<std::uint64_t>(bytes, footer + 32, digest(pos, footer));
      poke<std::uint64_t>(bytes, footer + 40, digest(footer, footer + 40));
      footers.update(bytes.data() + footer, kFooter);
      pos = footer + kFooter;
      remaining -= n;
    }
    if (complete) {
      poke<std::uint64_t>(bytes, 112, bytes.size());
      poke<std::uint64_t>(bytes, 120, footers.digest());
      poke<std::uint64_t>(bytes, 136, digest(96, 136));
    }
  }
  poke<std::uint64_t>(bytes, 88, digest(0, 88));
}

/// Reseals by the file's own major version (bytes 8–9).
inline void reseal(std::string& bytes) {
  if (bytes.size() < 10) return;
  const auto major = peek<std::uint16_t>(bytes, 8);
  if (major == 1) {
    reseal_v1(bytes);
  } else if (major == 2) {
    reseal_blocks<Fnv1a64>(bytes);
  } else {
    reseal_blocks<Xxh3_64>(bytes);
  }
}

}  // namespace kanoko::trajectory::testing
