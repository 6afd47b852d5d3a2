#include "src/views/models.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "src/base/error.hpp"

namespace kanoko::views {

namespace {

// Column of time t in a window of `columns` columns starting at t0 (width cw): -1 before the
// window, `columns` after it.
std::int32_t column_of(double t, double t0, double t1, double cw, std::size_t columns) {
  if (t < t0) return -1;
  if (t > t1) return static_cast<std::int32_t>(columns);
  const double x = std::floor((t - t0) / cw);
  return static_cast<std::int32_t>(std::clamp(x, 0.0, static_cast<double>(columns - 1)));
}

// Number of raw segments of entities [first, last) visible in [t0, t1).
std::size_t visible_segments(const TraceIndex& index, double t0, double t1, EntityIndex first, EntityIndex last) {
  std::size_t n = 0;
  for (EntityIndex e = first; e < last && e < index.segments.size(); ++e) {
    const auto& segs = index.segments[e];
    const auto from = std::upper_bound(segs.begin(), segs.end(), t0,
                                       [](double t, const Segment& s) { return t < s.end_s; });
    const auto to = std::lower_bound(from, segs.end(), t1,
                                     [](const Segment& s, double t) { return s.begin_s < t; });
    n += static_cast<std::size_t>(to - from);
  }
  return n;
}

// Calls add(column, overlap_s) for every column of a window (t0, cw, columns) that [a, b)
// overlaps (a, b inside the window).
template <typename Add>
void for_columns(double a, double b, double t0, double t1, double cw, std::size_t columns, Add&& add) {
  const auto first = static_cast<std::size_t>(column_of(a, t0, t1, cw, columns));
  const auto last = static_cast<std::size_t>(column_of(b, t0, t1, cw, columns));
  for (std::size_t c = first; c <= last && c < columns; ++c) {
    const double c0 = t0 + static_cast<double>(c) * cw;
    const double c1 = c + 1 == columns ? t1 : c0 + cw;
    const double overlap = std::min(b, c1) - std::max(a, c0);
    if (overlap > 0) add(c, overlap);
  }
}

}  // namespace

StateClass dominant_class(const ClassSeconds& cell, double span_s) {
  std::size_t best = 0;
  for (std::size_t c = 1; c < kClassCount; ++c) {
    if (cell[c] > cell[best]) best = c;
  }
  const trace::TimeSplit s = trace::split_time(cell[0], cell[1], cell[2], span_s, false);
  return s.no_state_s > cell[best] ? StateClass::None : static_cast<StateClass>(best);
}

StateClass StateGrid::dominant(std::size_t row, std::size_t c) const {
  return dominant_class(cell(row, c), static_cast<double>(members[row]) * column_span_s(c));
}

StateGrid state_grid(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns, EntityIndex first,
                     const std::vector<std::uint32_t>& row_of, std::size_t rows) {
  StateGrid out;
  out.t0_s = t0_s;
  out.t1_s = t1_s;
  out.columns = std::max<std::size_t>(1, columns);
  out.rows = rows;
  out.cells.assign(rows * out.columns, ClassSeconds{});
  out.members.assign(rows, 0);
  const std::size_t n = index.entity_count();
  const auto last = static_cast<EntityIndex>(std::min<std::size_t>(n, std::size_t{first} + row_of.size()));
  for (EntityIndex e = first; e < last; ++e) {
    if (row_of[e - first] < rows) ++out.members[row_of[e - first]];
  }
  if (!(t1_s > t0_s)) return out;
  const double cw = out.column_width_s();
  const double inv_cw = 1.0 / cw;
  // The VENUS trade: sweep the raw segments only when there are few enough of them for the
  // pixels at hand, or when the bins are coarser than a pixel (zoomed in).
  const std::size_t budget =
      std::max<std::size_t>(out.columns * std::max<std::size_t>(1, last - std::min(first, last)) * 8, std::size_t{1} << 18U);
  out.exact = index.detail_complete &&
              (index.bin_width_s > cw || visible_segments(index, t0_s, t1_s, first, last) <= budget);
  for (EntityIndex e = first; e < last; ++e) {
    const std::uint32_t r = row_of[e - first];
    if (r >= rows) continue;
    ClassSeconds* row = &out.cells[std::size_t{r} * out.columns];
    if (!out.exact) {
      // Each bin's time spread evenly over the columns it covers.
      const auto& bins = index.bin_class_s[e];
      for (std::size_t b = index.bin_of(t0_s); b < index.bin_count; ++b) {
        const double b0 = index.begin_s + static_cast<double>(b) * index.bin_width_s;
        if (b0 >= t1_s) break;
        // The bin's time lies within the run: a bin the end cuts spreads it over its part before
        // the end (as TraceIndex::class_time_from_bins).
        const double b1 = index.end_s > b0 ? std::min(b0 + index.bin_width_s, index.end_s) : b0 + index.bin_width_s;
        const double a = std::max(t0_s, b0);
        const double z = std::min(t1_s, b1);
        if (!(z > a)) continue;
        const double* k = &bins[b * kClassCount];
        for_columns(a, z, t0_s, t1_s, cw, out.columns, [&](std::size_t c, double overlap) {
          const double frac = overlap / (b1 - b0);
          for (std::size_t j = 0; j < kClassCount; ++j) row[c][j] += k[j] * frac;
        });
      }
      continue;
    }
    const auto& segs = index.segments[e];
    auto it = std::upper_bound(segs.begin(), segs.end(), t0_s,
                               [](double t, const Segment& s) { return t < s.end_s; });
    for (; it != segs.end() && it->begin_s < t1_s; ++it) {
      const std::size_t k = cls_index(it->cls);
      const double a = std::max(t0_s, it->begin_s);
      const double z = std::min(t1_s, it->end_s);
      // Most segments of a big run lie inside one column: add them without the general loop.
      const auto c = static_cast<std::size_t>(std::min((a - t0_s) * inv_cw, static_cast<double>(out.columns - 1)));
      const double c0 = t0_s + static_cast<double>(c) * cw;
      const double c1 = c + 1 == out.columns ? t1_s : c0 + cw;
      if (a >= c0 && z <= c1) {
        if (z > a) row[c][k] += z - a;
        continue;
      }
      for_columns(a, z, t0_s, t1_s, cw, out.columns, [&](std::size_t col, double overlap) { row[col][k] += overlap; });
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    ClassSeconds* row = &out.cells[r * out.columns];
    for (std::size_t c = 0; c < out.columns; ++c) {
      // The shared split (docs/statistics.md): overlaps cut, no-state time what is left of the
      // row's members × the column, computing when the trace's gaps count so.
      const trace::TimeSplit split = trace::split_time(row[c][0], row[c][1], row[c][2],
                                                       static_cast<double>(out.members[r]) * out.column_span_s(c),
                                                       index.gaps_computing);
      row[c] = {split.computing_s, split.communicating_s, split.waiting_s};
    }
  }
  return out;
}

StateColumns state_columns(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns) {
  const std::size_t n = index.entity_count();
  std::vector<std::uint32_t> row_of(n);
  for (std::size_t e = 0; e < n; ++e) row_of[e] = static_cast<std::uint32_t>(e);
  StateColumns out;
  static_cast<StateGrid&>(out) = state_grid(index, t0_s, t1_s, columns, 0, row_of, n);
  out.entities = n;
  return out;
}

MessageDensity message_density(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns,
                               EntityIndex first, const std::vector<std::uint32_t>& row_of, std::size_t rows) {
  MessageDensity out;
  out.columns = std::max<std::size_t>(1, columns);
  out.rows = rows;
  out.ends.assign(rows * out.columns, 0.0F);
  if (!(t1_s > t0_s)) return out;
  const double cw = (t1_s - t0_s) / static_cast<double>(out.columns);
  const auto row = [&](EntityIndex e) {
    return e >= first && e - first < row_of.size() && row_of[e - first] < rows ? row_of[e - first] : kNoRow;
  };
  const auto add = [&](std::uint32_t r, std::size_t c, float v) { out.ends[std::size_t{r} * out.columns + c] += v; };
  if (index.detail_complete) {
    const std::size_t from = index.first_message_at(t0_s - index.max_latency_s);
    for (std::size_t i = from; i < index.messages.size(); ++i) {
      const MessageRecord& m = index.messages[i];
      if (m.send_s > t1_s) break;
      bool counted = false;
      const std::uint32_t rs = row(m.src);
      if (rs != kNoRow && m.send_s >= t0_s) {
        add(rs, static_cast<std::size_t>(column_of(m.send_s, t0_s, t1_s, cw, out.columns)), 1.0F);
        counted = true;
      }
      const std::uint32_t rd = row(m.dst);
      if (rd != kNoRow && m.recv_s >= m.send_s && m.recv_s >= t0_s && m.recv_s <= t1_s) {
        add(rd, static_cast<std::size_t>(column_of(m.recv_s, t0_s, t1_s, cw, out.columns)), 1.0F);
        counted = true;
      }
      out.messages += counted ? 1 : 0;
    }
  } else {
    out.exact = false;
    for (std::size_t b = index.bin_of(t0_s); b < index.bin_count; ++b) {
      const double b0 = index.begin_s + static_cast<double>(b) * index.bin_width_s;
      if (b0 > t1_s) break;
      const double a = std::max(t0_s, b0);
      const double z = std::min(t1_s, b0 + index.bin_width_s);
      if (!(z > a)) continue;
      for (const PairAgg& p : index.bin_traffic[b]) {
        const std::uint32_t rs = row(p.src);
        const std::uint32_t rd = row(p.dst);
        if (rs == kNoRow && rd == kNoRow) continue;
        out.messages += p.messages;
        const auto count = static_cast<double>(p.messages);
        for_columns(a, z, t0_s, t1_s, cw, out.columns, [&](std::size_t c, double overlap) {
          const auto v = static_cast<float>(count * overlap / (z - a));
          if (rs != kNoRow) add(rs, c, v);
          if (rd != kNoRow) add(rd, c, v);
        });
      }
    }
  }
  out.max_ends = out.ends.empty() ? 0.0F : *std::max_element(out.ends.begin(), out.ends.end());
  return out;
}

std::uint64_t count_visible_messages(const TraceIndex& index, double t0_s, double t1_s, EntityIndex first,
                                     EntityIndex last, std::uint64_t limit) {
  std::uint64_t n = 0;
  if (!(t1_s > t0_s)) return 0;
  const auto shown = [&](EntityIndex s, EntityIndex d) { return (s >= first && s < last) || (d >= first && d < last); };
  if (index.detail_complete) {
    for (std::size_t i = index.first_message_at(t0_s - index.max_latency_s); i < index.messages.size() && n < limit; ++i) {
      const MessageRecord& m = index.messages[i];
      if (m.send_s > t1_s) break;
      const bool known = m.recv_s >= m.send_s;
      if ((known ? m.recv_s : m.send_s) < t0_s || !shown(m.src, m.dst)) continue;
      ++n;
    }
    return n;
  }
  for (std::size_t b = index.bin_of(t0_s); b < index.bin_count && n < limit; ++b) {
    if (index.begin_s + static_cast<double>(b) * index.bin_width_s > t1_s) break;
    for (const PairAgg& p : index.bin_traffic[b]) {
      if (shown(p.src, p.dst)) n += p.messages;
    }
  }
  return std::min(n, limit);
}

MessageBundles bundle_messages(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns) {
  MessageBundles out;
  columns = std::max<std::size_t>(1, columns);
  if (!(t1_s > t0_s)) return out;
  const double cw = (t1_s - t0_s) / static_cast<double>(columns);
  std::unordered_map<std::uint64_t, std::size_t> where;  // (src, dst, send col, recv col) → bundle
  const auto add = [&](EntityIndex src, EntityIndex dst, std::int32_t sc, std::int32_t rc, std::uint64_t count,
                       std::uint64_t bytes, std::size_t first) {
    // Columns lie in [-1, columns]; 2^20 columns is far beyond any screen.
    const auto pack = [](std::int32_t c) { return static_cast<std::uint64_t>(c + 1) & 0xFFFFFU; };
    const std::uint64_t pair = (std::uint64_t{src} * 0x9E3779B97F4A7C15ULL) ^ (std::uint64_t{dst} * 0xC2B2AE3D27D4EB4FULL);
    std::uint64_t key = pair ^ ((pack(sc) << 20U) | pack(rc));
    // Hash collisions between different bundles are resolved by probing.
    for (;;) {
      const auto it = where.find(key);
      if (it == where.end()) {
        where.emplace(key, out.bundles.size());
        out.bundles.push_back(MessageBundle{src, dst, sc, rc, count, bytes, first});
        break;
      }
      MessageBundle& b = out.bundles[it->second];
      if (b.src == src && b.dst == dst && b.send_column == sc && b.recv_column == rc) {
        b.messages += count;
        b.bytes += bytes;
        break;
      }
      key = key * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    out.messages += count;
  };
  if (index.detail_complete) {
    const std::size_t from = index.first_message_at(t0_s - index.max_latency_s);
    for (std::size_t i = from; i < index.messages.size(); ++i) {
      const MessageRecord& m = index.messages[i];
      if (m.send_s > t1_s) break;
      const bool known = m.recv_s >= m.send_s;
      if (known ? m.recv_s < t0_s : m.send_s < t0_s) continue;
      const std::int32_t sc = column_of(m.send_s, t0_s, t1_s, cw, columns);
      const std::int32_t rc = known ? column_of(m.recv_s, t0_s, t1_s, cw, columns) : sc;
      add(m.src, m.dst, sc, rc, 1, m.bytes, i);
    }
    return out;
  }
  out.exact = false;
  for (std::size_t b = index.bin_of(t0_s); b < index.bin_count; ++b) {
    const double b0 = index.begin_s + static_cast<double>(b) * index.bin_width_s;
    if (b0 > t1_s) break;
    const std::int32_t col = column_of(std::clamp(b0 + index.bin_width_s / 2, t0_s, t1_s), t0_s, t1_s, cw, columns);
    for (const PairAgg& p : index.bin_traffic[b]) add(p.src, p.dst, col, col, p.messages, p.bytes, 0);
  }
  return out;
}

MatrixModel compute_matrix(const TraceIndex& index, double t0_s, double t1_s) {
  const std::size_t n = index.entity_count();
  if (n > kMaxMatrixEntities) {
    throw InputError(FileLoc{"matrix"}, "the trace has " + std::to_string(n) +
                                            " entities; the communication matrix shows at most " +
                                            std::to_string(kMaxMatrixEntities));
  }
  return compute_matrix_blocks(index, t0_s, t1_s, 0, static_cast<EntityIndex>(n), n);
}

MatrixModel compute_matrix_blocks(const TraceIndex& index, double t0_s, double t1_s, EntityIndex first,
                                  EntityIndex last, std::size_t cells) {
  MatrixModel out;
  last = static_cast<EntityIndex>(std::min<std::size_t>(last, index.entity_count()));
  first = std::min(first, last);
  const std::size_t count = last - first;
  out.n = std::min(cells, count);
  out.t0_s = t0_s;
  out.t1_s = t1_s;
  out.messages.assign(out.n * out.n, 0);
  out.bytes.assign(out.n * out.n, 0);
  if (out.n == 0) return out;
  const bool to_end = t1_s >= index.end_s;
  const auto inside = [&](double t) { return t >= t0_s && (t < t1_s || (to_end && t <= t1_s)); };
  const auto block = [&](EntityIndex e) { return (std::size_t{e} - first) * out.n / count; };
  const auto add = [&](EntityIndex s, EntityIndex d, std::uint64_t n, std::uint64_t bytes) {
    if (s < first || s >= last || d < first || d >= last) return;
    const std::size_t at = block(s) * out.n + block(d);
    out.messages[at] += n;
    out.bytes[at] += bytes;
  };
  if (index.detail_complete) {
    for (std::size_t i = index.first_message_at(t0_s); i < index.messages.size(); ++i) {
      const MessageRecord& m = index.messages[i];
      if (!inside(m.send_s)) break;
      add(m.src, m.dst, 1, m.bytes);
    }
  } else {
    for (std::size_t b = 0; b < index.bin_count; ++b) {
      const double b0 = index.begin_s + static_cast<double>(b) * index.bin_width_s;
      if (!inside(std::max(b0, index.begin_s))) continue;
      for (const PairAgg& p : index.bin_traffic[b]) add(p.src, p.dst, p.messages, p.bytes);
    }
  }
  out.max_messages = *std::max_element(out.messages.begin(), out.messages.end());
  out.max_bytes = *std::max_element(out.bytes.begin(), out.bytes.end());
  return out;
}

KiviatModel compute_kiviat(const TraceIndex& index, double t0_s, double t1_s) {
  KiviatModel out;
  out.t0_s = t0_s;
  out.t1_s = t1_s;
  out.busy_fraction.resize(index.entity_count(), 0.0);
  out.split.resize(index.entity_count());
  if (!(t1_s > t0_s)) return out;
  for (EntityIndex e = 0; e < index.entity_count(); ++e) {
    out.split[e] = index.split(e, t0_s, t1_s);
    out.busy_fraction[e] = out.split[e].fraction(out.split[e].computing_s);
  }
  return out;
}

UtilisationModel compute_utilisation(const TraceIndex& index, double t0_s, double t1_s, std::size_t columns) {
  UtilisationModel out;
  out.t0_s = t0_s;
  out.t1_s = t1_s;
  out.entities = index.entity_count();
  // Every entity in one row: memory is the columns, not entities × columns.
  const StateGrid grid = state_grid(index, t0_s, t1_s, columns, 0, std::vector<std::uint32_t>(out.entities, 0), 1);
  out.counts.assign(grid.columns, ClassSeconds{});
  if (!(t1_s > t0_s)) return out;
  for (std::size_t c = 0; c < grid.columns; ++c) {
    const double width = grid.column_span_s(c);
    for (std::size_t k = 0; k < kClassCount; ++k) out.counts[c][k] = grid.cell(0, c)[k] / width;
  }
  return out;
}

namespace {

// Totals of every entity over [begin, t]: class time and messages by send time.
std::vector<EntityTotals> totals_until(const TraceIndex& index, double t) {
  std::vector<EntityTotals> out(index.entity_count());
  for (EntityIndex e = 0; e < index.entity_count(); ++e) {
    EntityTotals& r = out[e];
    r.class_s = index.class_time(e, index.begin_s, t);
  }
  const auto count = [&](EntityIndex src, EntityIndex dst, std::uint64_t n, std::uint64_t bytes) {
    out[src].messages_sent += n;
    out[src].bytes_sent += bytes;
    out[dst].messages_received += n;
    out[dst].bytes_received += bytes;
  };
  if (index.detail_complete) {
    for (const MessageRecord& m : index.messages) {
      if (m.send_s > t) break;
      count(m.src, m.dst, 1, m.bytes);
    }
  } else {
    for (std::size_t b = 0; b < index.bin_count && index.begin_s + static_cast<double>(b) * index.bin_width_s <= t; ++b) {
      for (const PairAgg& p : index.bin_traffic[b]) count(p.src, p.dst, p.messages, p.bytes);
    }
  }
  return out;
}

}  // namespace

SummaryModel compute_summary(const TraceIndex& index, double until_s) {
  SummaryModel out;
  const bool whole = !(until_s < index.end_s);
  const std::vector<EntityTotals> partial = whole ? std::vector<EntityTotals>{} : totals_until(index, until_s);
  const std::vector<EntityTotals>& totals = whole ? index.totals : partial;
  out.t0_s = index.begin_s;
  out.t1_s = whole ? index.end_s : std::max(index.begin_s, until_s);
  const double span = out.t1_s - out.t0_s;
  double all = 0;
  for (EntityIndex e = 0; e < index.entity_count(); ++e) {
    const EntityTotals& t = totals[e];
    SummaryRow row;
    row.entity = e;
    // class_s is split already (class_time, the index's totals); this adds the no-state rest.
    row.time = trace::split_time(t.class_s[0], t.class_s[1], t.class_s[2], span, false);
    const double parts[kClassCount] = {row.time.computing_s, row.time.communicating_s, row.time.waiting_s};
    for (std::size_t k = 0; k < kClassCount; ++k) {
      row.share[k] = row.time.fraction(parts[k]);
      out.overall[k] += parts[k];
    }
    row.no_state_share = row.time.fraction(row.time.no_state_s);
    out.overall_no_state += row.time.no_state_s;
    all += row.time.span_s();
    row.messages_sent = t.messages_sent;
    row.messages_received = t.messages_received;
    row.bytes_sent = t.bytes_sent;
    row.bytes_received = t.bytes_received;
    out.rows.push_back(row);
  }
  for (auto& v : out.overall) v = all > 0 ? v / all : 0.0;
  out.overall_no_state = all > 0 ? out.overall_no_state / all : 0.0;
  return out;
}

trace::Efficiency compute_summary_efficiency(const TraceIndex& index, const SummaryModel& summary, double until_s) {
  const double to_s = std::clamp(until_s, index.begin_s, std::max(index.begin_s, index.end_s));
  std::vector<trace::EntityActivity> rows(summary.rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SummaryRow& r = summary.rows[i];
    rows[i].useful_s = r.time.computing_s;
    rows[i].communicating_s = r.time.communicating_s;
    rows[i].waiting_s = r.time.waiting_s;
    rows[i].bytes_sent = static_cast<double>(r.bytes_sent);
    rows[i].bytes_received = static_cast<double>(r.bytes_received);
    rows[i].messages_sent = r.messages_sent;
    rows[i].messages_received = r.messages_received;
  }
  return trace::compute_efficiency(std::move(rows), index.begin_s, to_s, index.state_count > 0);
}

std::vector<std::string> summary_efficiency_lines(const TraceIndex& index, const trace::Efficiency& e,
                                                  std::size_t max_lines) {
  const trace::PopMetrics& m = e.metrics;
  std::vector<std::string> lines{
      m.available ? "POP  load balance " + trace::percent_text(m.load_balance) + "   communication efficiency " +
                        trace::percent_text(m.communication_efficiency) + "   parallel efficiency " +
                        trace::percent_text(m.parallel_efficiency)
                  : "POP metrics unavailable: " + m.unavailable_reason};
  if (max_lines < 2) return lines;
  if (e.outliers.empty()) {
    lines.emplace_back("outliers: none");
    return lines;
  }
  std::vector<std::string> names;
  for (const trace::Entity& entity : index.entities) names.push_back(entity.name);
  std::size_t total = e.outliers.size();
  for (const std::size_t n : e.outliers_left_out) total += n;
  const std::size_t shown = std::min(e.outliers.size(), max_lines - 1);
  for (std::size_t i = 0; i < shown; ++i) {
    lines.push_back("outlier  " + trace::describe_outlier(e.outliers[i], names));
  }
  if (total > shown) lines.back() += "   (+" + std::to_string(total - shown) + " more: kanoko info)";
  return lines;
}

}  // namespace kanoko::views
