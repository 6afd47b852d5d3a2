// parse_double (src/trace/text_input.hpp): the text readers' number parser gives std::from_chars's
// verdict and correctly rounded value, bit for bit, on its fast path and off it.
#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "src/trace/text_input.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

TEST(TextInput, ParseDoubleGivesFromCharsResultBitForBit) {
  std::mt19937_64 rng(20261126);
  const auto digits = [&](std::size_t n, bool leading_zeros) {
    std::string d;
    for (std::size_t i = 0; i < n; ++i) d += static_cast<char>('0' + rng() % 10);
    if (!leading_zeros && !d.empty() && d[0] == '0') d[0] = '1';
    return d;
  };
  std::vector<std::string> cases{"0", "0.0", "1000000000.000000", "9007199254740992", "9007199254740993",
                                 "9007199254740992.0", "900719925474099.3", "9007199254740993.0", "18446744073709551615",
                                 "18446744073709551616", "1844674407370955161.5", "0.0000000000000000001", ".5", "5.",
                                 ".", "-", "", "-0", "-0.000", "1e5", "1.5e-3", "00000000000000000000.25",
                                 "12345678901234567890", "0.10000000000000000001", "123456789012345678.9"};
  for (int i = 0; i < 200000; ++i) {
    // Integer and fraction parts of 0 to 21 digits, SimGrid's trailing zeros, signs.
    const std::size_t a = rng() % 22;
    const std::size_t b = rng() % 22;
    std::string s = (rng() % 8 == 0 ? "-" : "") + digits(a, rng() % 4 == 0);
    if (rng() % 4 != 0) s += "." + digits(b, true) + std::string(rng() % 3 == 0 ? rng() % 8 : 0, '0');
    cases.push_back(s);
  }
  for (const std::string& s : cases) {
    double want = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), want);
    const bool ok = r.ec == std::errc() && r.ptr == s.data() + s.size();
    double got = 0;
    ASSERT_EQ(parse_double(s, got), ok) << "'" << s << "'";
    if (ok) {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want)) << "'" << s << "'";
    }
  }
}

}  // namespace
}  // namespace kanoko::trace
