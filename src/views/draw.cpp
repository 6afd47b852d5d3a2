#include "src/views/draw.hpp"

#include <cairo-svg.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"

namespace kanoko::views {

Rgb class_colour(StateClass c) {
  switch (c) {
    case StateClass::Busy: return {0.20, 0.70, 0.25};
    case StateClass::Overhead: return {0.95, 0.78, 0.15};
    case StateClass::Idle: return {0.85, 0.22, 0.18};
    case StateClass::None: return {0.92, 0.92, 0.93};
  }
  return {0.5, 0.5, 0.5};
}

void set_colour(cairo_t* cr, const Rgb& c, double alpha) { cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha); }

void draw_text(cairo_t* cr, double x, double y, const std::string& text, double size, double align) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, text.c_str(), &ext);
  cairo_move_to(cr, x - align * ext.x_advance, y);
  cairo_show_text(cr, text.c_str());
}

Rect draw_frame(cairo_t* cr, const Rect& area, const std::string& title) {
  cairo_rectangle(cr, area.x, area.y, area.w, area.h);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_fill(cr);
  cairo_rectangle(cr, area.x, area.y, area.w, std::min(kTitleHeight, area.h));
  cairo_set_source_rgb(cr, 0.90, 0.91, 0.94);
  cairo_fill(cr);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
  draw_text(cr, area.x + 5, area.y + 13, title, 11);
  cairo_rectangle(cr, area.x + 0.5, area.y + 0.5, std::max(0.0, area.w - 1), std::max(0.0, area.h - 1));
  cairo_set_source_rgb(cr, 0.6, 0.6, 0.65);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  return content_area(area);
}

Rect content_area(const Rect& area) {
  return Rect{area.x + 1, area.y + kTitleHeight, std::max(0.0, area.w - 2), std::max(0.0, area.h - kTitleHeight - 1)};
}

ClipTo::ClipTo(cairo_t* cr, const Rect& area) : cr_(cr) {
  cairo_save(cr_);
  cairo_rectangle(cr_, area.x, area.y, area.w, area.h);
  cairo_clip(cr_);
}

ClipTo::~ClipTo() { cairo_restore(cr_); }

std::string format_time(double seconds) {
  char buf[64];
  const double a = std::abs(seconds);
  if (a >= 1.0 || a == 0.0) {
    std::snprintf(buf, sizeof buf, "%.4g s", seconds);
  } else if (a >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.4g ms", seconds * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g us", seconds * 1e6);
  }
  return buf;
}

std::string format_count(double n) {
  char buf[64];
  if (n < 1e4) {
    std::snprintf(buf, sizeof buf, "%.0f", n);
  } else if (n < 1e7) {
    std::snprintf(buf, sizeof buf, "%.1f k", n / 1e3);
  } else if (n < 1e10) {
    std::snprintf(buf, sizeof buf, "%.1f M", n / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f G", n / 1e9);
  }
  return buf;
}

namespace {

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using SurfacePtr = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using ContextPtr = std::unique_ptr<cairo_t, ContextDeleter>;

void check_size(int width, int height) {
  if (width < 16 || height < 16 || width > kMaxExportSide || height > kMaxExportSide) {
    throw InputError(FileLoc{"--size"}, "a view is 16 to " + std::to_string(kMaxExportSide) +
                                            " pixels wide and high, got " + std::to_string(width) + "x" +
                                            std::to_string(height));
  }
}

void check_status(cairo_status_t status, const char* what) {
  if (status != CAIRO_STATUS_SUCCESS) {
    throw RunError(std::string(what) + ": " + cairo_status_to_string(status));
  }
}

void draw_into(cairo_surface_t* surface, const View& view, const TraceIndex& index, const ViewState& state, int width,
               int height) {
  const ContextPtr cr(cairo_create(surface));
  check_status(cairo_status(cr.get()), "cairo");
  view.draw(cr.get(), Rect{0, 0, static_cast<double>(width), static_cast<double>(height)}, index, state);
  check_status(cairo_status(cr.get()), "drawing the view");
}

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

ViewImage render_view_image(const View& view, const TraceIndex& index, const ViewState& state, int width, int height) {
  check_size(width, height);
  SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height));
  check_status(cairo_surface_status(surface.get()), "cairo image");
  draw_into(surface.get(), view, index, state, width, height);
  cairo_surface_flush(surface.get());
  ViewImage out;
  out.width = width;
  out.height = height;
  out.stride = cairo_image_surface_get_stride(surface.get());
  const unsigned char* data = cairo_image_surface_get_data(surface.get());
  out.pixels.assign(data, data + static_cast<std::size_t>(out.stride) * static_cast<std::size_t>(height));
  return out;
}

std::string render_view_png(const View& view, const TraceIndex& index, const ViewState& state, int width, int height) {
  check_size(width, height);
  SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height));
  check_status(cairo_surface_status(surface.get()), "cairo image");
  draw_into(surface.get(), view, index, state, width, height);
  std::string bytes;
  check_status(cairo_surface_write_to_png_stream(surface.get(), append_bytes, &bytes), "writing PNG");
  return bytes;
}

std::string render_view_svg(const View& view, const TraceIndex& index, const ViewState& state, int width, int height) {
  check_size(width, height);
  std::string text;
  {
    SurfacePtr surface(cairo_svg_surface_create_for_stream(append_bytes, &text, width, height));
    check_status(cairo_surface_status(surface.get()), "cairo SVG");
    // Pixels, not points, so the SVG's width and height are the requested size.
    cairo_svg_surface_set_document_unit(surface.get(), CAIRO_SVG_UNIT_PX);
    draw_into(surface.get(), view, index, state, width, height);
    cairo_surface_finish(surface.get());
    check_status(cairo_surface_status(surface.get()), "writing SVG");
  }
  return text;
}

void export_view(const View& view, const TraceIndex& index, const ViewState& state, const std::filesystem::path& output,
                 int width, int height) {
  std::string ext = output.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string content;
  if (ext == ".png") {
    content = render_view_png(view, index, state, width, height);
  } else if (ext == ".svg") {
    content = render_view_svg(view, index, state, width, height);
  } else {
    throw InputError(FileLoc{output.string()}, "cannot tell the image format from the name; use .png or .svg");
  }
  write_file_atomically(output, content);
}

}  // namespace kanoko::views
