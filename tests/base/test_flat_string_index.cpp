// FlatStringIndex against std::unordered_map, with full digests and with digests cut to a few
// bits (every lookup then goes through collisions).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>

#include "src/base/flat_index.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

/// Keys of up to 23 letters from `alphabet` (digits: decimal names, some with leading zeros or
/// too large for the direct array).
void agrees_with_unordered_map(std::uint64_t mask, char first, std::uint32_t alphabet) {
  FlatStringIndex index(mask);
  std::unordered_map<std::string, std::uint32_t> reference;
  std::mt19937 rng(7);
  for (std::uint32_t i = 0; i < 5000; ++i) {
    std::string key;
    const auto length = rng() % 24;
    for (std::uint32_t c = 0; c < length; ++c) key += static_cast<char>(first + static_cast<char>(rng() % alphabet));
    const auto [value, inserted] = index.try_emplace(key, i);
    const auto [it, added] = reference.try_emplace(key, i);
    ASSERT_EQ(inserted, added) << key;
    ASSERT_EQ(*value, it->second) << key;
    if (i % 7 == 0) *value = it->second = i + 100000;  // values can be replaced through the pointer
  }
  EXPECT_EQ(index.size(), reference.size());
  for (const auto& [key, value] : reference) {
    const std::uint32_t* found = index.find(key);
    ASSERT_NE(found, nullptr) << key;
    EXPECT_EQ(*found, value) << key;
  }
  EXPECT_EQ(index.find("not a key: too long and has spaces"), nullptr);
}

TEST(FlatStringIndex, AgreesWithUnorderedMap) { agrees_with_unordered_map(~std::uint64_t{0}, 'a', 3); }

TEST(FlatStringIndex, CollidingDigestsStayCorrect) { agrees_with_unordered_map(0xF, 'a', 3); }

TEST(FlatStringIndex, DecimalNamesDirectAndHashed) {
  agrees_with_unordered_map(~std::uint64_t{0}, '0', 10);
  agrees_with_unordered_map(0x3, '0', 10);
  FlatStringIndex index;
  EXPECT_TRUE(index.try_emplace("7", 1).second);
  EXPECT_TRUE(index.try_emplace("07", 2).second);  // another name than "7"
  EXPECT_TRUE(index.try_emplace("1048576", 3).second);  // 2^20: past the direct array
  EXPECT_EQ(*index.find("7"), 1U);
  EXPECT_EQ(*index.find("07"), 2U);
  EXPECT_EQ(*index.find("1048576"), 3U);
  EXPECT_EQ(index.find("8"), nullptr);
  EXPECT_EQ(index.find("1048575"), nullptr);
  EXPECT_EQ(index.size(), 3U);
}

TEST(FlatStringIndex, EmptyIndexAndEmptyString) {
  FlatStringIndex index;
  EXPECT_EQ(index.find(""), nullptr);
  EXPECT_TRUE(index.try_emplace("", 3).second);
  ASSERT_NE(index.find(""), nullptr);
  EXPECT_EQ(*index.find(""), 3U);
  EXPECT_EQ(index.find(std::string(1, '\0')), nullptr);
  EXPECT_NE(FlatStringIndex::digest("abcdefgh"), FlatStringIndex::digest("abcdefgi"));
}

TEST(FlatStringIndex, EqualAgreesWithStringComparison) {
  const std::string text = "0123456789abcdefghij0123456789abcdefghij";
  for (std::size_t a = 0; a < 20; ++a) {
    for (std::size_t la = 0; la <= 20; ++la) {
      for (std::size_t b = 0; b < 20; ++b) {
        const std::string_view x(text.data() + a, la);
        const std::string_view y(text.data() + b, la);
        ASSERT_EQ(FlatStringIndex::equal(x, y), x == y) << x << " " << y;
        ASSERT_FALSE(FlatStringIndex::equal(x, std::string_view(text.data() + b, la + 1)));
      }
    }
  }
}

}  // namespace
}  // namespace kanoko
