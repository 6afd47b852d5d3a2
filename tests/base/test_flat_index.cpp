// FlatIndex against std::unordered_map on random keys, with clears between rounds.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "src/base/flat_index.hpp"

namespace kanoko {
namespace {

TEST(FlatIndex, AgreesWithUnorderedMapThroughGrowthAndClears) {
  std::mt19937_64 rng(7);
  FlatIndex index;
  for (int round = 0; round < 5; ++round) {
    std::unordered_map<std::uint64_t, std::uint32_t> reference;
    const int inserts = 1000 << round;
    for (int k = 0; k < inserts; ++k) {
      // Small keys (dense ids) and wide ones (packed pairs), with repeats.
      const std::uint64_t key = k % 3 == 0 ? rng() % 5000 : (rng() % 4096) << 32U | (rng() % 4096);
      const auto value = static_cast<std::uint32_t>(k);
      const auto [stored, inserted] = index.try_emplace(key, value);
      const auto [it, ref_inserted] = reference.try_emplace(key, value);
      ASSERT_EQ(inserted, ref_inserted);
      ASSERT_EQ(*stored, it->second);
    }
    ASSERT_EQ(index.size(), reference.size());
    for (const auto& [key, value] : reference) {
      const std::uint32_t* found = index.find(key);
      ASSERT_NE(found, nullptr);
      ASSERT_EQ(*found, value);
    }
    EXPECT_EQ(index.find(FlatIndex::kEmpty - 1), nullptr);
    index.clear();
    EXPECT_EQ(index.size(), 0U);
    for (const auto& [key, value] : reference) ASSERT_EQ(index.find(key), nullptr);
  }
}

TEST(FlatIndex, EmptyIndexFindsNothing) {
  const FlatIndex index;
  EXPECT_EQ(index.find(0), nullptr);
  EXPECT_EQ(index.size(), 0U);
}

}  // namespace
}  // namespace kanoko
