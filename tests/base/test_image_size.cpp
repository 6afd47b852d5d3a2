// Image dimensions from PNG and JPEG headers, read before decoding (the texture bomb guard).
#include <gtest/gtest.h>

#include <string>

#include "src/base/image_size.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24U), static_cast<char>((v >> 16U) & 0xFFU), static_cast<char>((v >> 8U) & 0xFFU),
          static_cast<char>(v & 0xFFU)};
}

/// A PNG signature and an IHDR chunk declaring width × height, then junk instead of pixel data:
/// the file is small whatever it declares.
std::string png_header(std::uint32_t width, std::uint32_t height) {
  return std::string("\x89PNG\r\n\x1a\n", 8) + be32(13) + "IHDR" + be32(width) + be32(height) +
         std::string("\x08\x06\x00\x00\x00", 5) + be32(0) + std::string(64, 'x');
}

/// SOI, an APP0 segment to skip, then a baseline SOF0 declaring width × height.
std::string jpeg_header(std::uint16_t width, std::uint16_t height) {
  std::string s("\xFF\xD8", 2);
  s += std::string("\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00", 18);
  s += std::string("\xFF\xC0\x00\x11\x08", 5);
  s += static_cast<char>(height >> 8U);
  s += static_cast<char>(height & 0xFFU);
  s += static_cast<char>(width >> 8U);
  s += static_cast<char>(width & 0xFFU);
  return s + std::string(12, '\0');
}

TEST(ImageSize, ReadsPngAndJpegHeaders) {
  test::TempDir dir;
  test::write_text(dir / "a.png", png_header(640, 480));
  test::write_text(dir / "b.jpg", jpeg_header(1920, 1080));
  test::write_text(dir / "c.txt", "not an image");
  const auto png = image_size(dir / "a.png");
  ASSERT_TRUE(png.has_value());
  EXPECT_EQ(png->width, 640U);
  EXPECT_EQ(png->height, 480U);
  const auto jpeg = image_size(dir / "b.jpg");
  ASSERT_TRUE(jpeg.has_value());
  EXPECT_EQ(jpeg->width, 1920U);
  EXPECT_EQ(jpeg->height, 1080U);
  EXPECT_FALSE(image_size(dir / "c.txt").has_value());
  EXPECT_FALSE(image_size(dir / "missing.png").has_value());
  // A real PNG from the repository's assets.
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "assets" / "textures")) {
    if (entry.path().extension() != ".png") continue;
    const auto asset = image_size(entry.path());
    ASSERT_TRUE(asset.has_value()) << entry.path();
    EXPECT_GT(asset->width, 0U);
    break;
  }
}

TEST(ImageSize, ABombIsRefusedNamingTheFileAndTheKey) {
  test::TempDir dir;
  test::write_text(dir / "bomb.png", png_header(40000, 40000));
  test::write_text(dir / "wide.jpg", jpeg_header(20000, 10));
  test::write_text(dir / "fine.png", png_header(8192, 8192));
  const FileLoc key{"m.toml", 12, 11};
  const std::string bomb = test::input_error_of([&] { check_image_size(dir / "bomb.png", key); });
  EXPECT_NE(bomb.find("m.toml:12:11: error: '"), std::string::npos) << bomb;
  EXPECT_NE(bomb.find("bomb.png' declares 40000 × 40000 pixels"), std::string::npos) << bomb;
  EXPECT_NE(test::input_error_of([&] { check_image_size(dir / "wide.jpg", key); }).find("20000 × 10"), std::string::npos);
  EXPECT_EQ(test::input_error_of([&] { check_image_size(dir / "fine.png", key); }), "");
}

}  // namespace
}  // namespace kanoko
