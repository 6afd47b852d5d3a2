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

Rgb class_fill(StateClass c) {
  const Rgb k = class_colour(c);
  if (c != StateClass::Idle) return k;
  constexpr double a = 0.35;  // idle at 35 % over white
  return {1 - a + a * k.r, 1 - a + a * k.g, 1 - a + a * k.b};
}

void set_colour(cairo_t* cr, const Rgb& c, double alpha) { cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha); }

namespace {
const cairo_user_data_key_t kRecorderKey{};
}  // namespace

void draw_text(cairo_t* cr, double x, double y, const std::string& text, double size, double align) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, text.c_str(), &ext);
  const double left = x - align * ext.x_advance;
  cairo_move_to(cr, left, y);
  cairo_show_text(cr, text.c_str());
  if (auto* out = static_cast<std::vector<TextBox>*>(cairo_get_user_data(cr, &kRecorderKey)); out != nullptr && ext.width > 0) {
    double x0 = left + ext.x_bearing;
    double y0 = y + ext.y_bearing;
    double x1 = x0 + ext.width;
    double y1 = y0 + ext.height;
    cairo_user_to_device(cr, &x0, &y0);
    cairo_user_to_device(cr, &x1, &y1);
    out->push_back(TextBox{text, Rect{std::min(x0, x1), std::min(y0, y1), std::abs(x1 - x0), std::abs(y1 - y0)}});
  }
}

double text_width(cairo_t* cr, const std::string& text, double size) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, text.c_str(), &ext);
  return ext.x_advance;
}

std::size_t nice_stride(double at_least) {
  if (!(at_least > 1)) return 1;
  std::size_t step = 1;
  for (;;) {
    for (const std::size_t m : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
      if (static_cast<double>(step * m) >= at_least) return step * m;
    }
    if (step > (std::size_t{1} << 40U)) return step;
    step *= 10;
  }
}

std::uint32_t argb_pixel(const Rgb& c) {
  const auto byte = [](double v) { return static_cast<std::uint32_t>(std::lround(std::clamp(v, 0.0, 1.0) * 255)); };
  return 0xFF000000U | (byte(c.r) << 16U) | (byte(c.g) << 8U) | byte(c.b);
}

void draw_pixels(cairo_t* cr, const Rect& dest, int width, int height,
                 const std::function<void(int, std::uint32_t*)>& fill_row) {
  if (width <= 0 || height <= 0 || !(dest.w > 0) || !(dest.h > 0)) return;
  cairo_surface_t* image = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  if (cairo_surface_status(image) == CAIRO_STATUS_SUCCESS) {
    cairo_surface_flush(image);
    unsigned char* data = cairo_image_surface_get_data(image);
    const int stride = cairo_image_surface_get_stride(image);
    for (int y = 0; y < height; ++y) fill_row(y, reinterpret_cast<std::uint32_t*>(data + static_cast<std::ptrdiff_t>(y) * stride));
    cairo_surface_mark_dirty(image);
    cairo_save(cr);
    cairo_translate(cr, dest.x, dest.y);
    cairo_scale(cr, dest.w / width, dest.h / height);
    cairo_set_source_surface(cr, image, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr, 0, 0, width, height);
    cairo_fill(cr);
    cairo_restore(cr);
  }
  cairo_surface_destroy(image);
}

TextRecorder::TextRecorder(cairo_t* cr, std::vector<TextBox>& out) : cr_(cr) {
  cairo_set_user_data(cr_, &kRecorderKey, &out, nullptr);
}

TextRecorder::~TextRecorder() { cairo_set_user_data(cr_, &kRecorderKey, nullptr, nullptr); }

bool boxes_overlap(const Rect& a, const Rect& b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

double draw_key(cairo_t* cr, double x, double y, const std::vector<std::pair<Rgb, std::string>>& entries, double size) {
  for (const auto& [colour, name] : entries) {
    set_colour(cr, colour);
    cairo_rectangle(cr, x, y - size + 1, size - 1, size - 1);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.2);
    draw_text(cr, x + size + 2, y, name, size);
    x += size + 2 + text_width(cr, name, size) + size;
  }
  return x;
}

double draw_class_key(cairo_t* cr, double x, double y, double size) {
  return draw_key(cr, x, y,
                  {{class_fill(StateClass::Busy), "busy (computing)"},
                   {class_fill(StateClass::Overhead), "overhead (communicating)"},
                   {class_fill(StateClass::Idle), "idle (waiting)"}},
                  size);
}

double draw_ramp(cairo_t* cr, double x, double y, double w, const std::function<Rgb(double)>& colour_at,
                 const std::string& lo, const std::string& hi, const std::string& unit, double size) {
  cairo_set_source_rgb(cr, 0.15, 0.15, 0.2);
  draw_text(cr, x, y, lo, size);
  x += text_width(cr, lo, size) + 3;
  const int steps = std::max(2, static_cast<int>(w / 2));
  for (int i = 0; i < steps; ++i) {
    set_colour(cr, colour_at((i + 0.5) / steps));
    cairo_rectangle(cr, x + w * i / steps, y - size + 1, w / steps + 0.5, size - 1);
    cairo_fill(cr);
  }
  cairo_set_source_rgb(cr, 0.5, 0.5, 0.55);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, x + 0.5, y - size + 1.5, w - 1, size - 2);
  cairo_stroke(cr);
  x += w + 3;
  cairo_set_source_rgb(cr, 0.15, 0.15, 0.2);
  draw_text(cr, x, y, hi, size);
  x += text_width(cr, hi, size) + 4;
  if (!unit.empty()) {
    draw_text(cr, x, y, unit, size);
    x += text_width(cr, unit, size);
  }
  return x;
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

std::vector<TextBox> view_text_boxes(const View& view, const TraceIndex& index, const ViewState& state, int width,
                                     int height) {
  check_size(width, height);
  SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height));
  check_status(cairo_surface_status(surface.get()), "cairo image");
  const ContextPtr cr(cairo_create(surface.get()));
  check_status(cairo_status(cr.get()), "cairo");
  std::vector<TextBox> out;
  {
    const TextRecorder recorder(cr.get(), out);
    view.draw(cr.get(), Rect{0, 0, static_cast<double>(width), static_cast<double>(height)}, index, state);
  }
  check_status(cairo_status(cr.get()), "drawing the view");
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
