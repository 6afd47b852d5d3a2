// A folder holding a native trace and a mapping, and simulate options that read them and write
// run.kntj beside them without a progress bar: what the simulate tests start from.
#pragma once

#include <string>

#include "src/sim/simulate.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::test {

struct SimFixture {
  TempDir dir;
  sim::SimulateOptions options;
  SimFixture(const std::string& mapping, const std::string& trace) {
    write_text(dir / "t.kntr", trace);
    write_text(dir / "m.toml", mapping);
    options.trace = dir / "t.kntr";
    options.mapping = dir / "m.toml";
    options.output = dir / "run.kntj";
    options.progress = false;
  }
};

}  // namespace kanoko::test
