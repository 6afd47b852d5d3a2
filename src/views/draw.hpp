// Drawing helpers shared by the views, and headless export: the same cairo drawing code writes a
// PNG (image surface), an SVG (SVG surface) or pixels for the viewer's HUD panels.
#pragma once

#include <cairo.h>

#include <cstdint>
#include <filesystem>
#include <string>
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
inline constexpr Rgb kSelectionColour{0.10, 0.35, 0.95};
inline constexpr Rgb kCursorColour{0.85, 0.10, 0.60};

void set_colour(cairo_t* cr, const Rgb& c, double alpha = 1.0);
/// Text with its left (align 0), centre (0.5) or right (1) edge at x and baseline at y.
void draw_text(cairo_t* cr, double x, double y, const std::string& text, double size, double align = 0.0);
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
