// Zero configuration: a mapping inferred from what a trace holds, for a debugging purpose (the
// paper's "standard mappings for each debugging purpose"). The result is mapping text with a
// comment on every choice, so `kanoko init` can hand it to the user and `simulate`/`view` can use
// it as it is. Reference: docs/zero-configuration.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/ingest/survey.hpp"
#include "src/ingest/window.hpp"

namespace kanoko::ingest {

/// The question a picture answers.
enum class Purpose { Balance, Communication, Waiting, Placement };

/// A purpose preset: its name, the question it answers and what to look for in the picture.
struct PurposeInfo {
  Purpose purpose;
  const char* name;      ///< "balance"
  const char* question;  ///< one line
  const char* look_for;  ///< one paragraph: what an anomaly looks like
};

/// Every preset, in a fixed order (balance first: the default).
const std::vector<PurposeInfo>& purposes();
/// The preset named `name`; an InputError located at `where` naming the valid ones otherwise.
const PurposeInfo& find_purpose(const std::string& name, const FileLoc& where);

/// How to infer.
struct InferOptions {
  Purpose purpose = Purpose::Balance;
  std::string format = "auto";  ///< reader name or "auto"
  TimeWindow window;            ///< the survey's window
  bool write_window = true;     ///< write the window into the mapping as [trace] from / to
  /// Keep the survey's stream, within this many bytes, for the timeline read that follows
  /// (survey_trace's keep_events_bytes); 0: not kept.
  std::size_t keep_events_bytes = 0;
};

/// An inferred mapping.
struct InferredMapping {
  std::string text;                   ///< TOML, commented: why each choice was made
  std::string summary;                ///< one line: what was inferred
  std::vector<std::string> warnings;  ///< what the trace lacks for this purpose, with the fix
};

/// Infers a mapping for `survey` (a survey of the whole trace, or of the window). Throws
/// InputError naming the trace when nothing can be shown (no entity at all).
InferredMapping infer_mapping(const TraceSurvey& survey, const InferOptions& options);

/// Surveys `trace` with the format's default reader options and infers a mapping for it.
InferredMapping infer_mapping(const std::filesystem::path& trace, const InferOptions& options);

}  // namespace kanoko::ingest
