#include "src/base/image_size.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace kanoko {
namespace {

std::uint32_t big_endian(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8U) | p[i];
  return v;
}

/// JPEG markers: the start-of-frame ones carry the size (C0–CF except DHT C4, JPG C8, DAC CC);
/// RST0–7, SOI, EOI and TEM stand alone.
bool start_of_frame(unsigned m) { return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC; }
bool standalone(unsigned m) { return (m >= 0xD0 && m <= 0xD9) || m == 0x01; }

std::optional<ImageSize> jpeg_size(std::ifstream& in) {
  // Segments follow SOI: FF marker, then (unless standalone) a 2-byte length that counts itself.
  for (int segments = 0; segments < 4096 && in; ++segments) {
    int c = in.get();
    if (c != 0xFF) return std::nullopt;
    while (c == 0xFF) c = in.get();  // fill bytes
    if (c == EOF) return std::nullopt;
    const auto marker = static_cast<unsigned>(c);
    if (standalone(marker)) continue;
    std::array<unsigned char, 2> len{};
    if (!in.read(reinterpret_cast<char*>(len.data()), 2)) return std::nullopt;
    const std::uint32_t length = big_endian(len.data(), 2);
    if (length < 2) return std::nullopt;
    if (start_of_frame(marker)) {
      std::array<unsigned char, 5> sof{};  // precision, height, width
      if (length < 7 || !in.read(reinterpret_cast<char*>(sof.data()), 5)) return std::nullopt;
      return ImageSize{big_endian(sof.data() + 3, 2), big_endian(sof.data() + 1, 2)};
    }
    if (marker == 0xDA) return std::nullopt;  // scan data before any frame header: not a JPEG we can size
    in.seekg(static_cast<std::streamoff>(length) - 2, std::ios::cur);
  }
  return std::nullopt;
}

}  // namespace

std::optional<ImageSize> image_size(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;  // the decoder says what is wrong with the file
  std::array<unsigned char, 24> head{};
  in.read(reinterpret_cast<char*>(head.data()), head.size());
  const auto got = static_cast<std::size_t>(in.gcount());
  static constexpr unsigned char kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (got >= 24 && std::memcmp(head.data(), kPng, 8) == 0 && std::memcmp(head.data() + 12, "IHDR", 4) == 0) {
    return ImageSize{big_endian(head.data() + 16, 4), big_endian(head.data() + 20, 4)};
  }
  if (got >= 2 && head[0] == 0xFF && head[1] == 0xD8) {
    in.clear();
    in.seekg(2);
    return jpeg_size(in);
  }
  return std::nullopt;
}

void check_image_size(const std::filesystem::path& file, const FileLoc& where) {
  const std::optional<ImageSize> size = image_size(file);
  if (!size) return;
  const std::uint64_t pixels = std::uint64_t{size->width} * size->height;
  if (size->width <= kMaxImageSide && size->height <= kMaxImageSide && pixels <= kMaxImagePixels) return;
  throw InputError(where, "'" + file.string() + "' declares " + std::to_string(size->width) + " × " +
                              std::to_string(size->height) + " pixels (" + std::to_string(pixels * 4 >> 20U) +
                              " MiB decoded), more than the " + std::to_string(kMaxImageSide) + " per side and " +
                              std::to_string(kMaxImagePixels >> 20U) + " Mpixel an image may have; scale it down");
}

}  // namespace kanoko
