// Drawing helpers shared by the views, and headless export: the same cairo drawing code writes a
// PNG (image surface), an SVG (SVG surface) or pixels for the viewer's HUD panels.
#pragma once

#include <cairo.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "src/views/view.hpp"

namespace kanoko::views {

/// An RGB colour, components 0..1.
struct Rgb {
  double r = 0;
  double g = 0;
  double b = 0;
};

/// The state class colours (ParaGraph's: busy green, overhead yellow, idle red).
Rgb class_colour(StateClass c);
/// A class's colour as the history views fill it on white (idle lighter, so work stands out).
Rgb class_fill(StateClass c);
inline constexpr Rgb kSelectionColour{0.10, 0.35, 0.95};
inline constexpr Rgb kCursorColour{0.85, 0.10, 0.60};

void set_colour(cairo_t* cr, const Rgb& c, double alpha = 1.0);
/// Text with its left (align 0), centre (0.5) or right (1) edge at x and baseline at y.
void draw_text(cairo_t* cr, double x, double y, const std::string& text, double size, double align = 0.0);
/// A text a view drew: its string and its ink box in device pixels.
struct TextBox {
  std::string text;
  Rect box;
};
/// While alive, every draw_text on `cr` also appends its text and box to `out` (how tests and
/// the viewer learn where the labels went).
class TextRecorder {
 public:
  TextRecorder(cairo_t* cr, std::vector<TextBox>& out);
  ~TextRecorder();
  TextRecorder(const TextRecorder&) = delete;
  TextRecorder& operator=(const TextRecorder&) = delete;

 private:
  cairo_t* cr_;
};
/// The texts `view` draws into a width × height image (title, labels, legend), with their boxes.
std::vector<TextBox> view_text_boxes(const View& view, const TraceIndex& index, const ViewState& state, int width,
                                     int height);
/// True when two boxes overlap (touching edges do not).
bool boxes_overlap(const Rect& a, const Rect& b);

/// Height of a legend strip under a view's content.
inline constexpr double kLegendHeight = 14.0;
/// A colour key, left to right from x with its text baseline at y: a swatch and a name per
/// entry. Returns the x after the last entry.
double draw_key(cairo_t* cr, double x, double y, const std::vector<std::pair<Rgb, std::string>>& entries,
                double size = 9);
/// The state classes' key: busy (computing), overhead (communicating), idle (waiting).
double draw_class_key(cairo_t* cr, double x, double y, double size = 9);
/// A colour scale: `lo`, a ramp `w` wide coloured by colour_at(0..1), `hi`, then `unit`.
/// Returns the x after it.
double draw_ramp(cairo_t* cr, double x, double y, double w, const std::function<Rgb(double)>& colour_at,
                 const std::string& lo, const std::string& hi, const std::string& unit, double size = 9);
/// An opaque cairo ARGB32 pixel of a colour.
std::uint32_t argb_pixel(const Rgb& c);
/// Draws a picture of width × height pixels, scaled to `dest` without smoothing (one pixel per
/// cell of a view's grid): fill_row(y, row) writes the `width` pixels of row y (argb_pixel).
void draw_pixels(cairo_t* cr, const Rect& dest, int width, int height,
                 const std::function<void(int, std::uint32_t*)>& fill_row);
/// Width of a text drawn by draw_text at `size`.
double text_width(cairo_t* cr, const std::string& text, double size);
/// A "nice" stride (1, 2, 5, 10, 20, 50, ...) at least `at_least`.
std::size_t nice_stride(double at_least);

/// Fills the view's background, draws its title and returns the area left for the content.
Rect draw_frame(cairo_t* cr, const Rect& area, const std::string& title);
/// Height of the title strip draw_frame uses.
inline constexpr double kTitleHeight = 18.0;
/// The area draw_frame leaves for the content (layouts use it without drawing).
Rect content_area(const Rect& area);

/// Saves the cairo state and clips to an area for the life of the object.
class ClipTo {
 public:
  ClipTo(cairo_t* cr, const Rect& area);
  ~ClipTo();
  ClipTo(const ClipTo&) = delete;
  ClipTo& operator=(const ClipTo&) = delete;

 private:
  cairo_t* cr_;
};
/// "1.25 s", "3.5 ms", "12 µs".
std::string format_time(double seconds);
/// "12", "3.4 k", "5.6 M".
std::string format_count(double n);

/// Pixels of a rendered view: cairo ARGB32 (premultiplied, native-endian 32-bit words).
struct ViewImage {
  int width = 0;
  int height = 0;
  int stride = 0;
  std::vector<std::uint8_t> pixels;
};
/// Renders `view` into a width × height image.
ViewImage render_view_image(const View& view, const TraceIndex& index, const ViewState& state, int width, int height);
/// A PNG file's bytes.
std::string render_view_png(const View& view, const TraceIndex& index, const ViewState& state, int width, int height);
/// An SVG file's text.
std::string render_view_svg(const View& view, const TraceIndex& index, const ViewState& state, int width, int height);
/// Writes a .png or .svg (chosen by the extension) atomically. InputError for another extension.
void export_view(const View& view, const TraceIndex& index, const ViewState& state, const std::filesystem::path& output,
                 int width, int height);
/// Largest width or height accepted for an export.
inline constexpr int kMaxExportSide = 16384;

}  // namespace kanoko::views
