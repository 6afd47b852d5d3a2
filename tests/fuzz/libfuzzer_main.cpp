// libFuzzer's entry point for one fuzz target: built once per target as fuzz_<name>, with
// KANOKO_FUZZ_ENTRY naming the target's function (tests/fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kanoko::fuzz::KANOKO_FUZZ_ENTRY(data, size);
  return 0;
}
