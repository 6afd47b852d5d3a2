// Writes the native text trace (.kntr) from a stream of events: a TraceSink, so any reader can be
// converted to the native format by connecting it to this writer.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "src/trace/event.hpp"

namespace kanoko::trace {

/// Streams events to `out` as native trace entries. Events must arrive in non-decreasing time
/// order (as every reader delivers them). Numbers are written in their shortest exact decimal
/// form, so a write → read round trip is exact, with one limit of the format: a state is stored
/// as begin and duration, and an end that is not begin + some double (a rounding tie) comes back
/// one ulp away. Line breaks in names become spaces.
class NativeWriter final : public TraceSink {
 public:
  explicit NativeWriter(std::ostream& out, const std::string& comment = {});

  void on_entity(const Entity& e) override;
  void on_link(const Link& l) override;
  void on_message(const Message& m) override;
  void on_load(const LoadSample& s) override;
  void on_state(const StateInterval& s) override;
  void on_collective(const Collective& c) override;
  void on_end(double end_s) override;

 private:
  std::ostream& out_;
  std::vector<std::int64_t> entity_ids_;  ///< index -> id, to write the file's ids back
  double last_time_s_ = 0;                ///< entity/link declarations carry the latest time seen
};

/// A string as a native-trace field: bare when possible, otherwise quoted and escaped.
std::string quote_native_string(std::string_view s);

}  // namespace kanoko::trace
