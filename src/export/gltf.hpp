// A run as a glTF 2.0 binary (.glb) for 3-D tools (Blender, three.js, any glTF reader): one node per
// body (named as the body, scaled to the radius the desktop viewer draws: src/trajectory/body_size.hpp)
// sharing one sphere mesh, one material per body colour, the motion as one animation (a translation
// channel per body, and a scale channel per body when the run's masses change the sizes; LINEAR,
// times in seconds from the run's first frame), and the springs as a LINES primitive skinned to the body nodes (each
// vertex weighted 1.0 to its body's joint) so they follow the bodies. Layout: docs/outputs.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "src/trajectory/trajectory.hpp"

namespace kanoko::exporting {

/// What to write.
struct GltfOptions {
  double fps = 0;  ///< keyframes per run second (decimation); 0: every stored frame
};

/// The stored frames kept as keyframes: every frame with fps = 0; otherwise the first frame at or
/// after each tick of begin + j / fps (each frame once), and always the first and the last.
[[nodiscard]] std::vector<std::size_t> gltf_keyframes(const trajectory::Reader& reader, double fps);

/// Exact size in bytes of the .glb for `reader` with these keyframes (gltf_keyframes), JSON chunk
/// included; reads no positions, only the masses of the keyframes until one changes a body's size
/// (all of them when none does). 0 for a run without bodies.
[[nodiscard]] std::uint64_t gltf_size(const trajectory::Reader& reader, const std::vector<std::size_t>& keyframes);

/// What write_gltf() wrote.
struct GltfSummary {
  std::size_t bodies = 0;
  std::size_t keyframes = 0;
  std::size_t springs = 0;
  std::size_t materials = 0;
  std::uint64_t bytes = 0;
  std::string note;  ///< what could not be exported, if anything ("" otherwise)
};

/// Writes the run read by `reader` (named `run` in messages) to `output` atomically. Throws
/// InputError naming the run for a run without bodies or frames (before anything is written), and
/// as the reader does for a damaged block (nothing is left). The caller bounds the size first
/// (gltf_size).
GltfSummary write_gltf(const trajectory::Reader& reader, const std::string& run, const GltfOptions& options,
                       const std::filesystem::path& output);

}  // namespace kanoko::exporting
