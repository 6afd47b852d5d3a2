// Image dimensions read from a PNG or JPEG header before decoding, so that a small file that
// declares an enormous picture (a "decompression bomb") is refused instead of decoded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "src/base/error.hpp"

namespace kanoko {

/// Width and height in pixels.
struct ImageSize {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

/// The largest side and pixel count an image may declare to be decoded: 16384 pixels per side,
/// 64 Mpixel (256 MiB as RGBA).
inline constexpr std::uint32_t kMaxImageSide = 16384;
inline constexpr std::uint64_t kMaxImagePixels = std::uint64_t{64} << 20U;

/// The dimensions a PNG (its IHDR chunk) or a JPEG (its first start-of-frame marker) declares,
/// read without decoding; nullopt for other formats, headers too short to tell and files that
/// cannot be opened (the decoder then reports them).
std::optional<ImageSize> image_size(const std::filesystem::path& file);

/// Throws InputError at `where`, naming `file`, when it declares more than kMaxImageSide pixels on
/// a side or kMaxImagePixels in all.
void check_image_size(const std::filesystem::path& file, const FileLoc& where);

}  // namespace kanoko
