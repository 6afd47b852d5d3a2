// The views' models: what each companion view shows, computed from a TraceIndex for a time window
// and a drawing resolution, with no drawing code, so they are tested against known answers.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "src/trace/efficiency.hpp"
#include "src/views/trace_index.hpp"

namespace kanoko::views {

// ---- space-time diagram ----------------------------------------------------------------------

/// Class time per pixel column summed over groups of entities (the space-time view's rows when
/// there are more entities than pixel rows, and the utilisation view's single row): entity
/// `first + i` adds to row `row_of[i]` (skipped when it is kNoRow). Each cell holds the shared
/// split (trace::split_time, docs/statistics.md) of its row: no-state time is what is left of
/// the member count × the column width.
struct StateGrid {
  double t0_s = 0;
  double t1_s = 0;
  std::size_t columns = 0;
  std::size_t rows = 0;
  bool exact = true;                    ///< from the raw segments (else from the bins)
  std::vector<ClassSeconds> cells;      ///< [row * columns + column]
  std::vector<std::uint32_t> members;   ///< entities per row
  [[nodiscard]] const ClassSeconds& cell(std::size_t row, std::size_t c) const { return cells[row * columns + c]; }
  [[nodiscard]] double column_width_s() const { return (t1_s - t0_s) / static_cast<double>(columns); }
  /// Seconds of column c (the last one ends at t1_s exactly).
  [[nodiscard]] double column_span_s(std::size_t c) const {
    return c + 1 == columns ? t1_s - (t0_s + static_cast<double>(c) * column_width_s()) : column_width_s();
  }
  /// The class with the most time in a cell, no-state time included (dominant_class).
  [[nodiscard]] StateClass dominant(std::size_t row, std::size_t c) const;
};
inline constexpr std::uint32_t kNoRow = std::numeric_limits<std::uint32_t>::max();

/// Per entity and pixel column, the seconds spent in each class (the VENUS level-of-detail merge:
/// everything inside one pixel becomes one cell): a StateGrid with one row per entity.
struct StateColumns : StateGrid {
  std::size_t entities = 0;
};

/// The class with the most time in a cell of `span_s` seconds, None when the cell's no-state
/// time (the span minus its classes) is the most (ties: busy, overhead, idle, then no state).
StateClass dominant_class(const ClassSeconds& cell, double span_s);

/// Class time per entity per column over [t0, t1). Uses the raw segments when the detail is
/// complete and the visible segments are few enough to sweep, otherwise the bins.
StateColumns state_columns(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns);

/// The grid over [t0, t1) for entities [first, first + row_of.size()). Sweeps the raw segments
/// when the detail is complete and the visible segments are few enough for the pixels (or the
/// bins are coarser than a column), else spreads the bins over the columns. Work: the visible
/// segments (or bins) plus entities × columns at most, and memory rows × columns.
StateGrid state_grid(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns, EntityIndex first,
                     const std::vector<std::uint32_t>& row_of, std::size_t rows);

/// Message ends per cell of a rows × columns grid (the space-time view's density when there are
/// more messages than lines can show): each message adds 1 at its send (column, row of the
/// sender) and 1 at its receive (column, row of the receiver) when they are in the window and
/// the entity has a row (`row_of` as for state_grid). Without the raw detail, each bin's traffic
/// is spread evenly over the columns the bin covers.
struct MessageDensity {
  std::size_t columns = 0;
  std::size_t rows = 0;
  bool exact = true;
  std::vector<float> ends;   ///< [row * columns + column]
  float max_ends = 0;        ///< largest cell
  std::uint64_t messages = 0;  ///< messages with at least one end counted
};
MessageDensity message_density(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns,
                               EntityIndex first, const std::vector<std::uint32_t>& row_of, std::size_t rows);

/// Messages sent or received in [t0, t1] (or crossing it) whose sender or receiver is in
/// [first, last), counting at most `limit` (so the caller can tell "few" cheaply); from the
/// raw detail, or from the bins' traffic (by send time) without it.
std::uint64_t count_visible_messages(const TraceIndex& index, double t0_s, double t1_s, EntityIndex first,
                                     EntityIndex last, std::uint64_t limit);

/// Messages merged by pixel: every message of one (sender, receiver, send column, receive column)
/// becomes one bundle that keeps their count and bytes, so none is lost from the totals.
struct MessageBundle {
  EntityIndex src = 0;
  EntityIndex dst = 0;
  std::int32_t send_column = 0;  ///< -1 before the window, `columns` after it
  std::int32_t recv_column = 0;  ///< the send column when the receive time is unknown
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  std::size_t first_message = 0;  ///< index in TraceIndex::messages (when exact)
};

struct MessageBundles {
  std::vector<MessageBundle> bundles;
  std::uint64_t messages = 0;  ///< sum of the bundles' counts
  bool exact = true;           ///< from the raw messages (else from the traffic bins)
};

/// Bundles of the messages that touch [t0, t1] (sent or received in it, or crossing it).
MessageBundles bundle_messages(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns);

// ---- communication matrix --------------------------------------------------------------------

/// Sender × receiver totals over [t0, t1): messages sent in the window.
struct MatrixModel {
  std::size_t n = 0;
  double t0_s = 0;
  double t1_s = 0;
  std::vector<std::uint64_t> messages;  ///< [src * n + dst]
  std::vector<std::uint64_t> bytes;
  std::uint64_t max_messages = 0;
  std::uint64_t max_bytes = 0;
  [[nodiscard]] std::uint64_t count(EntityIndex s, EntityIndex d) const { return messages[s * n + d]; }
};

/// Largest entity count the matrix accepts (4096² cells).
inline constexpr std::size_t kMaxMatrixEntities = 4096;

/// The matrix of messages sent in [t0, t1) (a send at the end of the run counts in a window that
/// ends there). Throws InputError when there are more than kMaxMatrixEntities entities.
MatrixModel compute_matrix(const TraceIndex& index, double t0_s, double t1_s);

/// The matrix of entities [first, last) in `cells` × `cells` blocks (what the pixels can show):
/// cell (i, j) sums what the entities of block i sent to those of block j in [t0, t1) (as
/// compute_matrix counts); entity e is in block (e - first) × cells / (last - first). `n` is the
/// cell count; any number of entities, memory cells².
MatrixModel compute_matrix_blocks(const TraceIndex& index, double t0_s, double t1_s, EntityIndex first,
                                  EntityIndex last, std::size_t cells);

// ---- utilisation -----------------------------------------------------------------------------

/// Busy fraction per entity over [t0, t1) (the VENUS Kiviat: 0 at the centre, 1 on the circle).
struct KiviatModel {
  double t0_s = 0;
  double t1_s = 0;
  std::vector<double> busy_fraction;
  std::vector<trace::TimeSplit> split;  ///< the whole split of each entity's interval
};
KiviatModel compute_kiviat(const TraceIndex& index, double t0_s, double t1_s);

/// Number of entities in each class over time, one sample per column (VENUS Utilization Count):
/// counts[c][k] = Σ entities' share of column c spent in class k (no-state time in none).
struct UtilisationModel {
  double t0_s = 0;
  double t1_s = 0;
  std::vector<ClassSeconds> counts;
  std::size_t entities = 0;
};
UtilisationModel compute_utilisation(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns);

// ---- summary table ---------------------------------------------------------------------------

/// One row of the per-entity summary (VENUS Utilization Summary + Communication Summary).
struct SummaryRow {
  EntityIndex entity = 0;
  trace::TimeSplit time;  ///< seconds of the range: computing, communicating, waiting, no state
  ClassSeconds share{};   ///< busy, overhead, idle as fractions of the range
  double no_state_share = 0;  ///< the rest of the range (with share: sum 1)
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
};
struct SummaryModel {
  double t0_s = 0;  ///< the range summed
  double t1_s = 0;
  std::vector<SummaryRow> rows;
  ClassSeconds overall{};       ///< accumulated utilisation over all entities (fractions of their time)
  double overall_no_state = 0;  ///< the rest
};
/// The summary over [begin, until_s] (the whole run when until_s is at or past the end: exact
/// totals). Before the end, messages count by send time (sent and received alike), and the
/// time split comes from the segments (or the bins without raw detail).
SummaryModel compute_summary(const TraceIndex& index, double until_s = std::numeric_limits<double>::infinity());

// ---- efficiency (the summary view's block) ---------------------------------------------------

/// The POP metrics and outlier entities from the start up to until_s, by
/// trace::compute_efficiency (the code `kanoko info` uses) on the rows of `summary`
/// (compute_summary(index, until_s)): the rows' computing, communicating and waiting seconds
/// (docs/statistics.md, docs/efficiency.md).
trace::Efficiency compute_summary_efficiency(const TraceIndex& index, const SummaryModel& summary,
                                             double until_s = std::numeric_limits<double>::infinity());
/// The lines of the summary view's efficiency block, at most `max_lines` (at least 1): the three
/// metrics in one line (or why they are unavailable), then one outlier per line ("outliers:
/// none" when there is none), the last one saying how many more there are.
std::vector<std::string> summary_efficiency_lines(const TraceIndex& index, const trace::Efficiency& e,
                                                  std::size_t max_lines);

}  // namespace kanoko::views
