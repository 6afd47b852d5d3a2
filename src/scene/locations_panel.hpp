// The viewer's code locations (issue 19, docs/profile.md "In the viewer"): the run's profile by
// code location as a side-panel table (sortable, by line, function or call path), a selected
// body's top locations under its inspect text (this interval and the whole run), and a chosen
// location's bodies and times: highlighted in the 3-D scene, marked on the timeline, the body where
// it waits most selected (companion views follow), and its source lines when the file is found
// under the user's source search paths. The numbers are src/profile's (ProfileBuilder), the
// profile of `kanoko profile`; the trace is read once in the background.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/profile/location_view.hpp"
#include "src/profile/source_lines.hpp"
#include "src/views/location_colours.hpp"
#include "src/views/view.hpp"

namespace kanoko::trajectory {
class Reader;
}

namespace kanoko::scene {

class TrajectoryScene;
class ReplayClock;
class TimelineView;

/// Where the locations come from.
struct LocationsOptions {
  std::filesystem::path trace;  ///< the run's trace; empty: `missing` says why there is none
  std::string format = "auto";
  std::string missing;
  std::vector<std::filesystem::path> source_roots;  ///< canonical (profile::checked_source_roots)
};

class LocationsPanel {
 public:
  /// Rows the table shows; the inspect panel shows a body's first kBodyRows.
  static constexpr std::size_t kTableRows = 20;
  static constexpr std::size_t kBodyRows = 5;
  using Note = std::function<void(const std::string&)>;

  /// `reader`, `scene`, `clock` and `timeline` must outlive the panel. The trace is read in the
  /// background from start_reading() on (or when the user asks for it in the panel).
  LocationsPanel(const trajectory::Reader& reader, TrajectoryScene& scene, const ReplayClock& clock,
                 TimelineView& timeline, LocationsOptions options);
  ~LocationsPanel();
  LocationsPanel(const LocationsPanel&) = delete;
  LocationsPanel& operator=(const LocationsPanel&) = delete;

  /// Starts reading the trace in the background unless it is read or being read. The viewer
  /// calls it once the first frame is drawn and no simulation is being followed: reading a big
  /// trace takes a core, which the first frame and a running simulation need more.
  void start_reading();
  /// Under a selected body's inspect text (ImGui frame): its top locations.
  void build_selection(const Note& note, std::map<std::string, std::string>& texts);
  /// The "Code locations" and "Source" sections of the side panel (ImGui frame).
  void build_sections(const Note& note, std::map<std::string, std::string>& texts);
  /// Companion views: told the chosen location's body and first time (ViewPanels::hub()).
  void set_share_selection(std::function<void(const views::Selection&)> share) { share_ = std::move(share); }
  /// Companion views: the space-time panel's colouring by location (null: by class).
  void set_colour_views(std::function<void(std::shared_ptr<const views::LocationColouring>)> colour) {
    colour_views_ = std::move(colour);
  }

 private:
  void poll();
  void choose(const profile::ProfileRow& row);
  void clear_choice();
  void apply_dominance();
  [[nodiscard]] std::optional<std::size_t> entity_of_body(std::size_t body) const;

  const trajectory::Reader& reader_;
  TrajectoryScene& scene_;
  const ReplayClock& clock_;
  TimelineView& timeline_;
  LocationsOptions options_;
  std::function<void(const views::Selection&)> share_;
  std::function<void(std::shared_ptr<const views::LocationColouring>)> colour_views_;
  bool colouring_views_ = false;

  bool reading_started_ = false;
  std::future<std::shared_ptr<const profile::LocationSource>> source_job_;
  std::shared_ptr<const profile::LocationSource> source_;
  std::string error_;
  std::vector<std::optional<std::size_t>> body_of_entity_;

  profile::GroupBy by_ = profile::GroupBy::Line;
  profile::SortBy sort_ = profile::SortBy::waiting;
  bool reverse_ = false;
  std::future<profile::Profile> run_job_;
  std::optional<profile::Profile> run_;  ///< in the profile's own order
  std::optional<profile::GroupBy> run_for_;

  /// A body's profiles: this interval, the whole run.
  using BodyProfiles = std::pair<profile::Profile, profile::Profile>;
  struct BodyKey {
    std::size_t body = 0;
    std::size_t interval = 0;
    profile::GroupBy by = profile::GroupBy::Line;
    bool operator==(const BodyKey&) const = default;
  };
  std::future<BodyProfiles> body_job_;
  std::optional<BodyKey> body_job_for_;
  std::optional<BodyKey> body_for_;
  std::string body_text_;

  std::optional<profile::ProfileRow> chosen_;
  std::future<profile::Dominance> dominance_job_;
  std::optional<profile::ProfileRow> dominance_row_;  ///< the row dominance_job_ is for
  bool highlighted_ = false;  ///< the scene's highlight is this panel's
  std::optional<profile::Dominance> dominance_;
  std::optional<profile::SourceExcerpt> excerpt_;
};

}  // namespace kanoko::scene
