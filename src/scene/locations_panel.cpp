#include "src/scene/locations_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <unordered_map>

#include "src/base/progress.hpp"
#include "src/scene/inspect.hpp"
#include "src/scene/model/timeline.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

namespace {

/// What the panel says before the trace is read (start_reading()).
constexpr const char* kWaitingText =
    "the trace is read once the first frame is drawn and the simulation has finished (reading it "
    "meanwhile would slow both down)";

/// True when a background job has its result (without waiting).
template <typename T>
bool finished(const std::future<T>& f) {
  return f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

const char* by_name(profile::GroupBy by) {
  switch (by) {
    case profile::GroupBy::Line: return "line";
    case profile::GroupBy::Function: return "function";
    case profile::GroupBy::Path: return "path";
  }
  return "line";
}

struct Column {
  const char* title;
  const char* key;
  profile::SortBy sort;
};
constexpr Column kColumns[] = {{"location", "location", profile::SortBy::location},
                               {"wait", "waiting", profile::SortBy::waiting},
                               {"comm.", "communicating", profile::SortBy::communicating},
                               {"comp.", "computing", profile::SortBy::computing},
                               {"calls", "calls", profile::SortBy::calls}};

void monospace_text(const std::string& text) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.Fonts->Fonts.Size > 1) ImGui::PushFont(io.Fonts->Fonts[1]);
  ImGui::TextUnformatted(text.c_str());
  if (io.Fonts->Fonts.Size > 1) ImGui::PopFont();
}

}  // namespace

LocationsPanel::LocationsPanel(const trajectory::Reader& reader, TrajectoryScene& scene, const ReplayClock& clock,
                               TimelineView& timeline, LocationsOptions options)
    : reader_(reader), scene_(scene), clock_(clock), timeline_(timeline), options_(std::move(options)) {
  if (options_.trace.empty()) {
    error_ = options_.missing.empty() ? "no trace for this run: code locations need it (--trace PATH)" : options_.missing;
  }
}

void LocationsPanel::start_reading() {
  if (reading_started_ || !error_.empty()) return;
  reading_started_ = true;
  source_job_ = std::async(std::launch::async, [path = options_.trace, format = options_.format] {
    return std::shared_ptr<const profile::LocationSource>(
        std::make_shared<profile::LocationSource>(profile::read_location_source(path, format)));
  });
}

LocationsPanel::~LocationsPanel() = default;  // the futures wait for their jobs

std::optional<std::size_t> LocationsPanel::entity_of_body(std::size_t body) const {
  for (std::size_t e = 0; e < body_of_entity_.size(); ++e) {
    if (body_of_entity_[e] == body) return e;
  }
  return std::nullopt;
}

void LocationsPanel::poll() {
  if (finished(source_job_)) {
    try {
      source_ = source_job_.get();
      // Bodies and entities match by name (simulate names bodies after entities), else by order.
      const auto& bodies = reader_.meta().bodies;
      const auto& entities = source_->trace.entities();
      std::unordered_map<std::string, std::size_t> body_named;
      for (std::size_t b = 0; b < bodies.size(); ++b) body_named.emplace(bodies[b].name, b);
      body_of_entity_.assign(entities.size(), std::nullopt);
      for (std::size_t e = 0; e < entities.size(); ++e) {
        if (const auto it = body_named.find(entities[e].name); it != body_named.end()) {
          body_of_entity_[e] = it->second;
        } else if (bodies.size() == entities.size()) {
          body_of_entity_[e] = e;
        }
      }
      if (!source_->trace.complete()) {
        error_ = options_.trace.string() + ": " + std::to_string(source_->trace.records()) +
                 " states and messages, more than the viewer keeps (" +
                 std::to_string(profile::RecordedTrace::kMaxRecords) + "): use kanoko profile " + options_.trace.string();
      }
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }
  if (!source_ || !source_->no_locations.empty() || !error_.empty()) return;
  if (finished(run_job_)) run_ = run_job_.get();
  if (run_for_ != by_ && !run_job_.valid()) {
    run_for_ = by_;
    run_.reset();
    profile::ProfileOptions o = source_->defaults;
    o.by = by_;
    run_job_ = std::async(std::launch::async, [s = source_, o] { return profile::profile_of(s->trace, o); });
  }
  if (finished(body_job_)) {
    const BodyProfiles p = body_job_.get();
    body_for_ = body_job_for_;
    body_text_ = profile::locations_text(p.first, p.second, kBodyRows);
  }
  if (finished(dominance_job_)) {
    profile::Dominance d = dominance_job_.get();
    // A job for a location chosen before the current one is dropped (and asked again below).
    if (chosen_ && dominance_row_ && profile::same_row(*chosen_, *dominance_row_)) {
      dominance_ = std::move(d);
      apply_dominance();
    }
  }
  if (chosen_ && !dominance_ && !dominance_job_.valid()) {
    dominance_row_ = chosen_;
    profile::ProfileOptions o = source_->defaults;
    o.by = by_;
    dominance_job_ = std::async(std::launch::async,
                                [s = source_, o, row = *chosen_] { return profile::dominance(s->trace, o, row); });
  }
}

void LocationsPanel::build_selection(const Note& note, std::map<std::string, std::string>& texts) {
  poll();
  const auto& sel = scene_.selection();
  if (!sel || sel->kind != Pick::Kind::body) return;
  std::string text;
  if (!error_.empty()) {
    text = error_;
  } else if (!source_) {
    text = reading_started_ ? "code locations: reading the trace..." : std::string("code locations: ") + kWaitingText;
  } else if (!source_->no_locations.empty()) {
    text = source_->no_locations;
  } else if (const auto entity = entity_of_body(sel->index); !entity) {
    text = "code locations: this body is no entity of the trace";
  } else {
    const trajectory::Metadata& meta = reader_.meta();
    const BodyKey key{sel->index, meta.interval_of(clock_.time_s()), by_};
    if (key != body_job_for_ && !body_job_.valid()) {
      body_job_for_ = key;
      profile::ProfileOptions whole = source_->defaults;
      whole.by = by_;
      profile::ProfileOptions interval = whole;
      if (meta.interval_s > 0) {
        interval.from_s = meta.trace_begin_s + meta.interval_s * static_cast<double>(key.interval);
        interval.to_s = interval.from_s + meta.interval_s;
      }
      body_job_ = std::async(std::launch::async, [s = source_, whole, interval, e = static_cast<trace::EntityIndex>(*entity)] {
        return BodyProfiles{profile::profile_of(s->trace, interval, e), profile::profile_of(s->trace, whole, e)};
      });
    }
    text = body_for_ && body_for_->body == sel->index ? body_text_ : "code locations: computing...";
  }
  ImGui::Separator();
  if (!source_ || !error_.empty() || !source_->no_locations.empty() || text.find('\n') == std::string::npos) {
    ImGui::TextWrapped("%s", text.c_str());
  } else {
    monospace_text(text);
  }
  note("side.selection.locations");
  texts["selection.locations"] = text;
}

void LocationsPanel::build_sections(const Note& note, std::map<std::string, std::string>& texts) {
  poll();
  if (!ImGui::CollapsingHeader("Code locations", ImGuiTreeNodeFlags_DefaultOpen)) return;
  note("side.locations");
  if (!error_.empty() || !source_ || !source_->no_locations.empty()) {
    const std::string text = !error_.empty() ? error_
                             : source_      ? source_->no_locations
                             : reading_started_ ? std::string("reading the trace...")
                                                : std::string(kWaitingText);
    ImGui::TextWrapped("%s", text.c_str());
    texts["locations"] = text;
    if (error_.empty() && !reading_started_) {
      if (ImGui::Button("read the trace now")) start_reading();
      note("locations.read-now");
    }
    return;
  }
  ImGui::TextUnformatted("one row per");
  for (const profile::GroupBy by : {profile::GroupBy::Line, profile::GroupBy::Function, profile::GroupBy::Path}) {
    ImGui::SameLine();
    if (ImGui::RadioButton(by_name(by), by_ == by) && by_ != by) {
      by_ = by;
      clear_choice();
    }
    note(std::string("locations.by.") + by_name(by));
  }
  if (colour_views_) {
    if (ImGui::Checkbox("colour the space-time view by location", &colouring_views_)) {
      colour_views_(colouring_views_ ? std::make_shared<const views::LocationColouring>(views::location_colouring(source_))
                                     : nullptr);
    }
    note("locations.colour-views");
  }
  if (!run_) {
    ImGui::TextUnformatted("computing the profile...");
    texts["locations"] = "computing the profile...";
    return;
  }
  profile::Profile sorted = *run_;
  // The table: the profile's rows, sorted by the chosen column (waiting first by default).
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                     ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("locations", static_cast<int>(std::size(kColumns)), kFlags)) {
    for (const Column& c : kColumns) {
      ImGuiTableColumnFlags f = c.sort == profile::SortBy::location ? ImGuiTableColumnFlags_WidthStretch
                                                                    : ImGuiTableColumnFlags_PreferSortDescending;
      if (c.sort == profile::SortBy::waiting) f |= ImGuiTableColumnFlags_DefaultSort;
      ImGui::TableSetupColumn(c.title, f, 0.0F, static_cast<ImGuiID>(c.sort));
    }
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs != nullptr && specs->SpecsCount > 0) {
      const ImGuiTableColumnSortSpecs& s = specs->Specs[0];
      sort_ = static_cast<profile::SortBy>(s.ColumnUserID);
      // Numbers: descending is the largest first; labels: ascending is A first.
      reverse_ = sort_ == profile::SortBy::location ? s.SortDirection == ImGuiSortDirection_Descending
                                                    : s.SortDirection == ImGuiSortDirection_Ascending;
      specs->SpecsDirty = false;
    }
    profile::sort_rows(sorted, sort_, reverse_);
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    for (std::size_t c = 0; c < std::size(kColumns); ++c) {
      ImGui::TableSetColumnIndex(static_cast<int>(c));
      ImGui::TableHeader(kColumns[c].title);
      note(std::string("locations.sort.") + kColumns[c].key);
    }
    char buf[32];
    const auto cell = [&](double v) {
      ImGui::TableNextColumn();
      std::snprintf(buf, sizeof buf, "%.4g", v);
      ImGui::TextUnformatted(buf);
    };
    for (std::size_t i = 0; i < sorted.rows.size() && i < kTableRows; ++i) {
      const profile::ProfileRow& r = sorted.rows[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const bool chosen = chosen_ && profile::same_row(*chosen_, r);
      const std::string label = profile::printable(r.label) + "##" + std::to_string(i);
      if (ImGui::Selectable(label.c_str(), chosen, ImGuiSelectableFlags_SpanAllColumns)) {
        if (chosen) {
          clear_choice();
        } else {
          choose(r);
        }
      }
      note("locations.row." + std::to_string(i));
      cell(r.waiting_s);
      cell(r.communicating_s);
      cell(r.computing_s);
      cell(static_cast<double>(r.calls));
    }
    ImGui::EndTable();
  }
  const char* sort_key = "waiting";
  for (const Column& c : kColumns) {
    if (c.sort == sort_) sort_key = c.key;
  }
  texts["locations"] = std::string("by ") + by_name(by_) + ", sorted by " + sort_key + (reverse_ ? " (reversed)" : "") +
                       "\n" + profile::profile_text(sorted, kTableRows);
  if (sorted.rows.size() > kTableRows) ImGui::Text("(%zu more rows: kanoko profile)", sorted.rows.size() - kTableRows);
  if (!chosen_) {
    ImGui::TextWrapped("Choose a location to highlight the bodies and mark the times where it dominates.");
    return;
  }
  std::string about = "chosen: " + profile::printable(chosen_->label) + "\n";
  if (!dominance_) {
    about += "finding where it dominates...";
  } else {
    const profile::Dominance& d = *dominance_;
    const auto bodies = static_cast<std::size_t>(std::count(d.dominant.begin(), d.dominant.end(), true));
    double marked = 0;
    for (const auto& [a, b] : d.spans) marked += b - a;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f %%", 100 * profile::Dominance::kDominantShare);
    about += std::string("dominates ") + std::to_string(bodies) + " of " + std::to_string(d.dominant.size()) +
             " bodies (highlighted) and " + format_seconds(marked) + " of the run (marked on the timeline): there its " +
             (d.by_waiting ? "waiting" : "time") + " is the largest or at least " + buf;
  }
  ImGui::TextWrapped("%s", about.c_str());
  texts["locations.chosen"] = about;
  if (ImGui::SmallButton("clear choice")) clear_choice();
  note("button.locations-clear");
  if (excerpt_ && ImGui::CollapsingHeader("Source", ImGuiTreeNodeFlags_DefaultOpen)) {
    note("side.source");
    const std::string text = profile::excerpt_text(*excerpt_);
    texts["source"] = text;
    const profile::SourceExcerpt& e = *excerpt_;
    ImGui::TextWrapped("%s", (e.status == profile::SourceExcerpt::Status::ok ? e.path.string() + ":" + std::to_string(e.line)
                                                                             : e.note)
                                 .c_str());
    const ImGuiIO& io = ImGui::GetIO();
    if (io.Fonts->Fonts.Size > 1) ImGui::PushFont(io.Fonts->Fonts[1]);
    char num[24];
    for (std::size_t k = 0; k < e.lines.size(); ++k) {
      const std::int64_t n = e.first_line + static_cast<std::int64_t>(k);
      std::snprintf(num, sizeof num, "%5lld  ", static_cast<long long>(n));
      const std::string line = num + e.lines[k];
      if (n == e.line) {
        ImGui::TextColored(ImVec4(1.0F, 0.55F, 0.9F, 1.0F), "%s", line.c_str());
        note("source.line");
      } else {
        ImGui::TextUnformatted(line.c_str());
      }
    }
    if (io.Fonts->Fonts.Size > 1) ImGui::PopFont();
  }
}

void LocationsPanel::choose(const profile::ProfileRow& row) {
  chosen_ = row;
  dominance_.reset();  // poll() asks for it
  excerpt_ = profile::source_excerpt(options_.source_roots, row.file, row.line);
}

void LocationsPanel::clear_choice() {
  chosen_.reset();
  dominance_.reset();
  excerpt_.reset();
  timeline_.set_marks({});
  if (scene_.body_filter() == BodyFilter::highlight && highlighted_) scene_.set_body_filter(BodyFilter::none, {});
  highlighted_ = false;
}

void LocationsPanel::apply_dominance() {
  if (!chosen_ || !dominance_) return;
  const profile::Dominance& d = *dominance_;
  std::vector<bool> mask(reader_.meta().body_count(), false);
  std::optional<std::size_t> best;
  for (std::size_t e = 0; e < d.dominant.size() && e < body_of_entity_.size(); ++e) {
    if (!body_of_entity_[e]) continue;
    if (d.dominant[e]) mask[*body_of_entity_[e]] = true;
    if (d.share[e] > 0 && (!best || d.share[e] > d.share[*best])) best = e;
  }
  const bool any = std::find(mask.begin(), mask.end(), true) != mask.end();
  scene_.set_body_filter(any ? BodyFilter::highlight : BodyFilter::none, std::move(mask));
  highlighted_ = any;
  timeline_.set_marks(d.spans);
  if (!best) return;
  views::Selection s;
  s.entity = static_cast<std::int64_t>(*best);
  if (!d.spans.empty()) s.time_s = d.spans.front().first;
  if (share_) {
    share_(s);
  } else {
    scene_.select(Pick{Pick::Kind::body, *body_of_entity_[*best], 0.0});
  }
}

}  // namespace kanoko::scene
