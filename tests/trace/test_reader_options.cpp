// Reader options a mapping's [trace] section sets: the Paraver load event named by its .pcf
// label (whole or first word), with the errors for an unknown label and a missing .pcf.
#include <gtest/gtest.h>

#include <string>

#include "src/base/error.hpp"
#include "src/trace/paraver_reader.hpp"
#include "tests/support/input_error.hpp"
#include "tests/trace/stream_recorder.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

const std::string kPrv =
    "#Paraver (01/01/24 at 10:00):1000_ms:1(2):1:2(1:1,1:1)\n"
    "1:1:1:1:1:0:500:1\n"
    "2:1:1:1:1:100:42000050:7\n"
    "2:2:1:2:1:200:42000050:9:42000059:100\n"
    "2:2:1:2:1:300:42000059:250\n";
const std::string kPcf =
    "EVENT_TYPE\n7  42000050 PAPI_TOT_INS ([Instr completed])\n7  42000059 PAPI_TOT_CYC ([Total cycles])\n";

testing::StreamRecorder read(const std::string& pcf, const std::string& load_event, std::int64_t type = 0) {
  testing::StreamRecorder c;
  ParaverOptions o;
  o.load_event = load_event;
  o.load_event_type = type;
  read_paraver_trace_text(kPrv, pcf, "", "o.prv", c, o);
  return c;
}

std::string error_of(const std::string& pcf, const std::string& load_event) {
  return test::input_error_of([&] { read(pcf, load_event); });
}

TEST(ReaderOptions, ParaverLoadEventByPcfLabel) {
  const auto cycles = read(kPcf, "PAPI_TOT_CYC");
  ASSERT_EQ(cycles.loads.size(), 2U);
  EXPECT_EQ(cycles.loads[0].entity, 1U);
  EXPECT_DOUBLE_EQ(cycles.loads[0].time_s, 0.2);
  EXPECT_DOUBLE_EQ(cycles.loads[0].value, 100.0);
  EXPECT_DOUBLE_EQ(cycles.loads[1].value, 250.0);

  const auto whole = read(kPcf, "PAPI_TOT_INS ([Instr completed])");
  ASSERT_EQ(whole.loads.size(), 2U);
  EXPECT_EQ(whole.loads[0].entity, 0U);
  EXPECT_DOUBLE_EQ(whole.loads[0].value, 7.0);
  EXPECT_DOUBLE_EQ(whole.loads[1].value, 9.0);

  // The label decides over a number given beside it; no label: the number.
  EXPECT_EQ(read(kPcf, "PAPI_TOT_INS", 42000059).loads.size(), 2U);
  EXPECT_DOUBLE_EQ(read(kPcf, "PAPI_TOT_INS", 42000059).loads[0].value, 7.0);
  EXPECT_DOUBLE_EQ(read(kPcf, "", 42000059).loads[0].value, 100.0);
  EXPECT_TRUE(read(kPcf, "").loads.empty());
}

TEST(ReaderOptions, ParaverUnknownLabelOrMissingPcfIsAnError) {
  EXPECT_NE(error_of(kPcf, "PAPI_TOT_CY").find("o.pcf: error: the .pcf defines no event type labelled 'PAPI_TOT_CY' "
                                              "(did you mean 'PAPI_TOT_CYC'?)"),
            std::string::npos)
      << error_of(kPcf, "PAPI_TOT_CY");
  EXPECT_NE(error_of("", "PAPI_TOT_CYC").find("o.pcf: error: the load event 'PAPI_TOT_CYC' is named by its .pcf label, but there is no .pcf"),
            std::string::npos);
}

}  // namespace
}  // namespace kanoko::trace
