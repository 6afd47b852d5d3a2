// FlatIndex against std::unordered_map on random keys, with clears between rounds; PairIndex
// against std::map.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>
#include <unordered_map>

#include "src/base/flat_index.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

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

TEST(PairIndex, AgreesWithAMapForFewAndManyDestinationsAndFarSources) {
  // Sources with fewer destinations than it keeps beside them, with more (the rest hashed), and
  // sources past kMaxNearSources (hashed alone), in a scrambled order with repeats.
  std::mt19937_64 rng(3);
  PairIndex index;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> reference;
  const std::uint32_t far_sources[] = {PairIndex::kMaxNearSources, PairIndex::kMaxNearSources + 5, 0xFFFFFFFFU};
  for (std::uint32_t k = 0; k < 60000; ++k) {
    const std::uint32_t src = k % 11 == 0 ? far_sources[rng() % 3] : static_cast<std::uint32_t>(rng() % 500);
    const std::uint32_t dst = static_cast<std::uint32_t>(src % 3 == 0 ? rng() % 40 : rng() % 5) + (src % 7);
    const auto [stored, inserted] = index.try_emplace(src, dst, k);
    const auto [it, ref_inserted] = reference.try_emplace({src, dst}, k);
    ASSERT_EQ(inserted, ref_inserted) << src << ">" << dst;
    ASSERT_EQ(*stored, it->second) << src << ">" << dst;
    if (k % 5 == 0) ++*stored, ++it->second;  // values are changed in place, as traffic adds up
  }
  for (const auto& [pair, value] : reference) {
    const std::uint32_t* found = index.find(pair.first, pair.second);
    ASSERT_NE(found, nullptr) << pair.first << ">" << pair.second;
    EXPECT_EQ(*found, value) << pair.first << ">" << pair.second;
  }
  EXPECT_EQ(index.find(1, 100000), nullptr);
  EXPECT_EQ(index.find(600, 1), nullptr) << "a source never seen";
  EXPECT_EQ(index.find(0xFFFFFFFFU, 100000), nullptr);
  EXPECT_EQ(PairIndex().find(0, 0), nullptr);
}

}  // namespace
}  // namespace kanoko
