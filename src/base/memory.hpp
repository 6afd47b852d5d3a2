// The machine's memory, for the budgets that are a share of it.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <optional>

namespace kanoko {

/// Physical memory in bytes, or nullopt when the system does not say.
inline std::optional<std::uint64_t> physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

}  // namespace kanoko
