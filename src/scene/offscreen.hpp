// Drawing a scene without a window: a GLX pbuffer when an X display is there, otherwise EGL on
// Mesa's surfaceless platform (or the first EGL device) with a GraphicsWindowEmbedded
// (headless.md §4). Also the pixel capture both the renderer and the viewer's screenshot use.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <osg/Camera>
#include <osg/Image>
#include <osg/Matrixd>
#include <osg/Node>
#include <osg/Vec4>
#include <string_view>

#include "src/base/atomic_file.hpp"

namespace kanoko::scene {

/// Which offscreen GL context to use.
enum class Backend {
  automatic,  ///< GLX pbuffer if DISPLAY is set and works, else EGL
  glx,        ///< GLX pbuffer on $DISPLAY (needs an X server, Xvfb is fine)
  egl,        ///< EGL pbuffer, no X server needed
};

/// "auto", "glx" or "egl".
[[nodiscard]] std::string_view backend_name(Backend b);
/// Parses "auto", "glx" or "egl"; throws InputError naming `option` otherwise.
[[nodiscard]] Backend parse_backend(std::string_view text, std::string_view option);

/// True if the DISPLAY environment variable names an X display (it may still fail to open).
[[nodiscard]] bool display_variable_set();

/// Final-draw callback that copies the camera's colour buffer into an RGB image when armed.
/// Reads the buffer the camera drew into, before the swap.
class CaptureCallback : public osg::Camera::DrawCallback {
 public:
  /// The next drawn frame is captured.
  void arm() { armed_ = true; }
  /// Capture the whole window rather than the camera's viewport (the viewer, whose 3-D view
  /// leaves the edges to its interface).
  void set_full_window(bool on) { full_window_ = on; }
  /// The last captured image (origin bottom-left), or null before the first capture.
  [[nodiscard]] osg::Image* image() const { return image_.get(); }
  /// Called by OSG after the camera (and its post-render HUD cameras) has drawn.
  void operator()(osg::RenderInfo& render_info) const override;
  using osg::Camera::DrawCallback::operator();

 private:
  // The viewer runs single-threaded (draw happens inside frame() on the calling thread).
  mutable bool armed_ = false;
  bool full_window_ = false;
  osg::ref_ptr<osg::Image> image_ = new osg::Image;
};

/// What to draw offscreen and how.
struct OffscreenRequest {
  osg::Node* scene = nullptr;  ///< drawn by the main camera (a HUD camera inside it draws too)
  osg::Matrixd view;
  osg::Matrixd projection;
  osg::Vec4 clear_colour;
  int width_px = 0;  ///< framebuffer size
  int height_px = 0;
  Backend backend = Backend::automatic;
};

/// Result of an offscreen draw.
struct OffscreenResult {
  osg::ref_ptr<osg::Image> image;  ///< RGB, width_px × height_px, origin bottom-left
  Backend backend_used = Backend::automatic;
};

/// Draws one frame offscreen and returns its pixels. Throws RunError if no context can be made
/// (no display for GLX; EGL unavailable), naming what was tried.
[[nodiscard]] OffscreenResult draw_offscreen(const OffscreenRequest& request);

/// Called before frame k of a sequence: moves the scene and sets the camera's view and
/// projection for it.
using FramePrepare =
    std::function<void(std::size_t frame, osg::Matrixd& view, osg::Matrixd& projection)>;
/// Called with the pixels of frame k (RGB, request size, origin bottom-left).
using FrameConsume = std::function<void(std::size_t frame, const osg::Image& image)>;

/// Draws `frames` frames of request.scene in one offscreen context (request.view and
/// request.projection are the starting camera; `prepare` may change them per frame) and hands
/// each frame's pixels to `consume`. Returns the backend used; throws like draw_offscreen().
Backend draw_offscreen_frames(const OffscreenRequest& request, std::size_t frames,
                              const FramePrepare& prepare, const FrameConsume& consume);

/// Keeps the OpenGL driver modules that are loaded now (Mesa's *_dri.so, libgallium*) loaded until
/// the process exits. Closing the last GL display unloads the driver, and a driver's lazily
/// allocated tables then show up in LeakSanitizer as leaks in an unknown module, which no
/// suppression can name. Call it once a frame has been drawn; calling it again is cheap.
void keep_gl_driver_loaded();

/// Checks before any drawing that `target` can take an image: an extension osgDB can write
/// (InputError otherwise), an existing folder (RunError otherwise) and a name that may be replaced
/// (checked_output_target: no FIFO, device, folder or input of the command).
void check_image_output(const std::filesystem::path& target);

/// Encodes an image in the format of `target`'s extension and writes it, every write checked,
/// into a closed temporary file beside `target`; commit() moves it into place, destruction without
/// commit() removes it. Throws InputError if the format is unknown or the target must not be
/// replaced, RunError if the image cannot be encoded or written (disk full, file too large).
std::unique_ptr<AtomicOutputFile> stage_image(const osg::Image& image, const std::filesystem::path& target);

/// Writes an image atomically (stage_image, then commit). Throws as stage_image does.
void write_image_atomically(const osg::Image& image, const std::filesystem::path& target);

/// Box-filters an RGB image down by an integer factor (supersampling anti-aliasing).
[[nodiscard]] osg::ref_ptr<osg::Image> downsample_rgb(const osg::Image& image, int factor);

}  // namespace kanoko::scene
