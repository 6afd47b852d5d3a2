// The fuzz targets as plain functions: libFuzzer's entry point calls one of them
// (libfuzzer_main.cpp), and the replay test (test_replay.cpp) runs every seed and every past
// finding under tests/fuzz/ through them in the ordinary and the ASan builds. Each accepts any
// bytes; accepting the input or throwing kanoko::InputError (caught inside) are the only allowed
// outcomes, so anything escaping a target, a crash or a sanitizer report is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "src/trace/timeline.hpp"

namespace kanoko::fuzz {

/// Where a target leaves what it read, so that the reads cannot be optimised away.
inline volatile double g_sink = 0;
inline volatile std::size_t g_count_sink = 0;

/// A native trace (.kntr) into a timeline (fuzz_native_trace.cpp).
void run_native_trace(const std::uint8_t* data, std::size_t size);
/// A Pajé trace into a timeline (fuzz_paje.cpp).
void run_paje(const std::uint8_t* data, std::size_t size);
/// Chrome/Perfetto trace-event JSON into a timeline (fuzz_chrome.cpp).
void run_chrome(const std::uint8_t* data, std::size_t size);
/// A mapping file, then every formula compiled and evaluated (fuzz_mapping.cpp).
void run_mapping(const std::uint8_t* data, std::size_t size);
/// A control byte + a trajectory file, read through every frame (fuzz_trajectory.cpp).
void run_trajectory(const std::uint8_t* data, std::size_t size);
/// A Paraver .prv (+ form feed + .pcf + form feed + .row) into a timeline (fuzz_paraver.cpp).
void run_paraver(const std::uint8_t* data, std::size_t size);
/// A SimGrid time-independent action file into a timeline (fuzz_simgrid_ti.cpp).
void run_simgrid_ti(const std::uint8_t* data, std::size_t size);
/// A selector byte + one file of an OTF2 archive, read into a timeline (fuzz_otf2.cpp).
void run_otf2(const std::uint8_t* data, std::size_t size);
/// A control byte + a view group file or a native trace through every view (fuzz_views.cpp).
void run_views(const std::uint8_t* data, std::size_t size);
/// A control byte + a viewer --script file or a session (fuzz_viewer_files.cpp).
void run_viewer_files(const std::uint8_t* data, std::size_t size);

/// One fuzz target: its name (the folder under seeds/ and regressions/, and the libFuzzer
/// program `fuzz_<name>`) and its entry function.
struct Target {
  std::string_view name;                                 ///< e.g. "native_trace"
  void (*run)(const std::uint8_t* data, std::size_t size);  ///< the entry function
};

/// Every fuzz target, in a fixed order.
[[nodiscard]] std::span<const Target> targets();

/// Reads every bin of a timeline as a model does (traffic, loads, busy fractions) and returns a
/// sum of it, so that the fuzz targets reach the timeline's accessors and the reads stay.
[[nodiscard]] double touch(const trace::Timeline& tl);

}  // namespace kanoko::fuzz
