// The space-time view's states coloured by code location (docs/views.md, "Colour by location";
// `kanoko plot spacetime --colour-by location`): the first kTop rows of the run's profile by line
// (src/profile, `kanoko profile`'s order: the most waiting first) get distinct colours, the other
// located states "other", states without a location a light grey; a legend names the colours.
// In each pixel column of an entity's row the location with the most seconds there wins.
#pragma once

#include <cairo.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "src/profile/location_view.hpp"
#include "src/views/draw.hpp"

namespace kanoko::views {

struct LocationColouring {
  static constexpr std::size_t kTop = 8;
  std::shared_ptr<const profile::LocationSource> source;
  std::vector<std::string> labels;       ///< of the coloured locations, printable, in colour order
  std::vector<std::uint8_t> category;    ///< per location index: 0 none, 1..labels.size() a label, kOther
  static constexpr std::uint8_t kNone = 0;
  static constexpr std::uint8_t kOther = 255;
};

/// The colouring of a read trace: its first `top` (at most kTop) located rows by line.
[[nodiscard]] LocationColouring location_colouring(std::shared_ptr<const profile::LocationSource> source,
                                                   std::size_t top = LocationColouring::kTop);
/// Reads `trace` (format "auto": detected) and makes its colouring. Throws InputError for bad input
/// and for a trace without code locations (the message says how to record them).
[[nodiscard]] LocationColouring read_location_colouring(const std::filesystem::path& trace, const std::string& format);

/// The colour of a category (LocationColouring::category).
[[nodiscard]] Rgb location_colour(std::uint8_t category);

/// Per pixel column of [t0_s, t1_s) (`columns` of them): the category of entity `e` with the most
/// seconds there, kNone where no located state is.
[[nodiscard]] std::vector<std::uint8_t> location_columns(const LocationColouring& c, EntityIndex e, double t0_s,
                                                         double t1_s, std::size_t columns);

/// Draws entity `e`'s row into `row` (runs of one category as one rectangle; nothing where the
/// entity has no state).
void draw_location_row(cairo_t* cr, const LocationColouring& c, EntityIndex e, const Rect& row, double t0_s, double t1_s,
                       std::size_t columns);
/// The legend, in the top-right corner of `plot`.
void draw_location_legend(cairo_t* cr, const LocationColouring& c, const Rect& plot);

}  // namespace kanoko::views
