// Resolves the call-site addresses libkanoko-capture records (return addresses in the objects of
// the program's memory map, `mod` and `cs` records of docs/capture.md) to source file, line and
// function with elfutils' libdwfl, after the program has exited: each object is read again from
// its file at the load bias the rank recorded. Used by the merge (merge.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace kanoko::capture {

/// Where an address is in the source. Every part may be empty (unknown).
struct Frame {
  std::string file;      ///< source file as the debug information names it (programs built with -g)
  std::int64_t line = 0;
  std::string function;  ///< demangled; "symbol+0xOFF" without line information, "object+0xOFF" without a symbol
};

/// How an address resolved: with source lines, with a symbol only, or not at all.
enum class Resolution : std::uint8_t { Line, Symbol, Object, None };

class AddressResolver {
 public:
  AddressResolver();
  ~AddressResolver();
  AddressResolver(const AddressResolver&) = delete;
  AddressResolver& operator=(const AddressResolver&) = delete;

  /// The frame of return address `ra` in the object `path` loaded at `bias` (the rank's
  /// dl_iterate_phdr dlpi_addr). The call itself is at `ra - 1`, so that is what is looked up.
  /// On Resolution::None `problem` says why (the file is gone, is not ELF, ...).
  Frame resolve(const std::string& path, std::uint64_t bias, std::uint64_t ra, Resolution& how, std::string& problem);

 private:
  struct Object;
  Object& object(const std::string& path, std::uint64_t bias);
  std::map<std::string, std::unique_ptr<Object>> objects_;
  std::map<std::pair<std::string, std::uint64_t>, std::pair<Frame, Resolution>> cache_;  ///< (path, ra - bias)
};

}  // namespace kanoko::capture
