#include "src/scene/offscreen.hpp"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <optional>
#include <osg/GL>
#include <osg/GLExtensions>
#include <osg/GraphicsContext>
#include <osg/Viewport>
#include <osgDB/Registry>
#include <osgDB/WriteFile>
#include <osgViewer/Viewer>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/output_target.hpp"

namespace kanoko::scene {

namespace {

std::string egl_error_text(EGLint code) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04X", static_cast<unsigned>(code));
  return buf;
}

// An EGL pbuffer context made current on construction and torn down on destruction. Tries Mesa's
// surfaceless platform first, then the first EGL device (NVIDIA and other non-Mesa drivers).
class EglContext {
 public:
  EglContext(int width_px, int height_px) {
    std::string why;
    if (try_display(EGL_PLATFORM_SURFACELESS_MESA, nullptr, width_px, height_px, why)) return;
    why = "surfaceless: " + why;
    const auto query_devices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    EGLDeviceEXT device = nullptr;
    EGLint devices = 0;
    std::string device_why = "eglQueryDevicesEXT is not available";
    if (query_devices != nullptr && query_devices(1, &device, &devices) == EGL_TRUE &&
        devices > 0) {
      if (try_display(EGL_PLATFORM_DEVICE_EXT, device, width_px, height_px, device_why)) return;
    } else if (query_devices != nullptr) {
      device_why = "no EGL device found";
    }
    throw RunError("cannot create an offscreen OpenGL context with EGL (" + why +
                   "; device: " + device_why +
                   "); install Mesa's EGL (libegl-mesa0, libgl1-mesa-dri) or run under an X server "
                   "(xvfb-run) so the GLX backend can be used");
  }
  ~EglContext() { release(); }
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;

 private:
  bool try_display(EGLenum platform, void* native, int width_px, int height_px, std::string& why) {
    release();
    display_ = eglGetPlatformDisplay(platform, native, nullptr);
    if (display_ == nullptr) {
      why = "no display (" + egl_error_text(eglGetError()) + ")";
      return false;
    }
    EGLint major = 0;
    EGLint minor = 0;
    if (eglInitialize(display_, &major, &minor) != EGL_TRUE) {
      why = "eglInitialize failed (" + egl_error_text(eglGetError()) + ")";
      display_ = nullptr;
      return false;
    }
    const EGLint config_attributes[] = {EGL_SURFACE_TYPE,
                                        EGL_PBUFFER_BIT,
                                        EGL_RED_SIZE,
                                        8,
                                        EGL_GREEN_SIZE,
                                        8,
                                        EGL_BLUE_SIZE,
                                        8,
                                        EGL_DEPTH_SIZE,
                                        24,
                                        EGL_RENDERABLE_TYPE,
                                        EGL_OPENGL_BIT,
                                        EGL_NONE};
    EGLConfig config = nullptr;
    EGLint configs = 0;
    if (eglChooseConfig(display_, config_attributes, &config, 1, &configs) != EGL_TRUE ||
        configs < 1) {
      why = "no RGB8 + depth24 pbuffer config for desktop OpenGL";
      release();
      return false;
    }
    const EGLint surface_attributes[] = {EGL_WIDTH, width_px, EGL_HEIGHT, height_px, EGL_NONE};
    surface_ = eglCreatePbufferSurface(display_, config, surface_attributes);
    if (surface_ == nullptr) {
      why = "cannot create a " + std::to_string(width_px) + "x" + std::to_string(height_px) +
            " pbuffer (" + egl_error_text(eglGetError()) + ")";
      release();
      return false;
    }
    // Desktop GL, compatibility profile: OSG 3.6 in Debian is a GL2 build.
    if (eglBindAPI(EGL_OPENGL_API) != EGL_TRUE) {
      why = "desktop OpenGL is not supported by this EGL";
      release();
      return false;
    }
    context_ = eglCreateContext(display_, config, nullptr, nullptr);
    if (context_ == nullptr) {
      why = "eglCreateContext failed (" + egl_error_text(eglGetError()) + ")";
      release();
      return false;
    }
    if (eglMakeCurrent(display_, surface_, surface_, context_) != EGL_TRUE) {
      why = "eglMakeCurrent failed (" + egl_error_text(eglGetError()) + ")";
      release();
      return false;
    }
    return true;
  }

  void release() noexcept {
    if (display_ == nullptr) return;
    eglMakeCurrent(display_, nullptr, nullptr, nullptr);
    if (context_ != nullptr) eglDestroyContext(display_, context_);
    if (surface_ != nullptr) eglDestroySurface(display_, surface_);
    // No eglTerminate: the display is a process-wide singleton that the next render reuses, and
    // terminating it would unload the driver (see keep_gl_driver_loaded()).
    display_ = nullptr;
    surface_ = nullptr;
    context_ = nullptr;
  }

  EGLDisplay display_ = nullptr;
  EGLSurface surface_ = nullptr;
  EGLContext context_ = nullptr;
};

osg::ref_ptr<osg::GraphicsContext> make_glx_pbuffer(int width_px, int height_px) {
  osg::ref_ptr<osg::GraphicsContext::Traits> traits = new osg::GraphicsContext::Traits;
  traits->readDISPLAY();
  traits->setUndefinedScreenDetailsToDefaultScreen();
  traits->x = 0;
  traits->y = 0;
  traits->width = width_px;
  traits->height = height_px;
  traits->red = 8;
  traits->green = 8;
  traits->blue = 8;
  traits->alpha = 0;
  traits->depth = 24;
  traits->doubleBuffer = true;
  traits->pbuffer = true;
  traits->windowDecoration = false;
  osg::ref_ptr<osg::GraphicsContext> gc = osg::GraphicsContext::createGraphicsContext(traits.get());
  if (!gc.valid() || !gc->valid()) return nullptr;
  return gc;
}

// Draws `frames` frames of `request` with `viewer` already attached to a context.
void draw_with(osgViewer::Viewer& viewer, const OffscreenRequest& request, std::size_t frames,
               const FramePrepare& prepare, const FrameConsume& consume) {
  osg::Camera* camera = viewer.getCamera();
  camera->setViewport(new osg::Viewport(0, 0, request.width_px, request.height_px));
  camera->setDrawBuffer(GL_BACK);
  camera->setReadBuffer(GL_BACK);
  camera->setClearColor(request.clear_colour);
  camera->setViewMatrix(request.view);
  camera->setProjectionMatrix(request.projection);
  // The projection is the one the caller computed (render_camera()); keep OSG from tightening the
  // near/far planes so that tests can project points with exactly the same matrices.
  camera->setComputeNearFarMode(osg::CullSettings::DO_NOT_COMPUTE_NEAR_FAR);
  osg::ref_ptr<CaptureCallback> capture = new CaptureCallback;
  camera->setFinalDrawCallback(capture.get());
  // OSG caches GL entry points per context id. A context that once had that id without a real
  // GL context behind it (an embedded window that was never drawn, as in the playback tests)
  // leaves null entry points behind; make this context look them up afresh.
  if (camera->getGraphicsContext() != nullptr &&
      camera->getGraphicsContext()->getState() != nullptr) {
    osg::GLExtensions::Set(camera->getGraphicsContext()->getState()->getContextID(), nullptr);
  }
  viewer.setSceneData(request.scene);
  viewer.setCameraManipulator(nullptr);
  viewer.realize();
  if (!viewer.isRealized()) throw RunError("the offscreen OpenGL context could not be realized");
  for (std::size_t k = 0; k < frames; ++k) {
    if (prepare) {
      osg::Matrixd view = request.view;
      osg::Matrixd projection = request.projection;
      prepare(k, view, projection);
      camera->setViewMatrix(view);
      camera->setProjectionMatrix(projection);
    }
    capture->arm();
    viewer.frame();
    keep_gl_driver_loaded();
    if (capture->image() == nullptr || capture->image()->data() == nullptr ||
        capture->image()->s() != request.width_px || capture->image()->t() != request.height_px) {
      camera->setFinalDrawCallback(nullptr);
      throw RunError("reading the rendered pixels back failed");
    }
    consume(k, *capture->image());
  }
  camera->setFinalDrawCallback(nullptr);
}

}  // namespace

void keep_gl_driver_loaded() {
  static std::mutex mutex;
  static std::set<std::string> pinned;
  const std::lock_guard lock(mutex);
  const auto pin = [](dl_phdr_info* info, std::size_t /*size*/, void* data) -> int {
    auto& done = *static_cast<std::set<std::string>*>(data);
    const std::string_view path = info->dlpi_name != nullptr ? info->dlpi_name : "";
    const bool driver = path.find("_dri.so") != std::string_view::npos ||
                        path.find("/libgallium") != std::string_view::npos;
    if (driver && done.insert(std::string(path)).second) {
      // RTLD_NOLOAD only takes another reference on the loaded module; it is never released.
      static_cast<void>(dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD));
    }
    return 0;
  };
  dl_iterate_phdr(pin, &pinned);
}

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::automatic:
      return "auto";
    case Backend::glx:
      return "glx";
    case Backend::egl:
      return "egl";
  }
  return "auto";
}

Backend parse_backend(std::string_view text, std::string_view option) {
  if (text == "auto") return Backend::automatic;
  if (text == "glx") return Backend::glx;
  if (text == "egl") return Backend::egl;
  throw InputError(FileLoc{std::string(option)},
                   "unknown backend '" + std::string(text) + "'; expected auto, glx or egl");
}

bool display_variable_set() {
  const char* d = std::getenv("DISPLAY");
  return d != nullptr && *d != '\0';
}

void CaptureCallback::operator()(osg::RenderInfo& render_info) const {
  if (!armed_) return;
  armed_ = false;
  const osg::Viewport* vp = render_info.getCurrentCamera()->getViewport();
  int x = static_cast<int>(vp->x());
  int y = static_cast<int>(vp->y());
  int w = static_cast<int>(vp->width());
  int h = static_cast<int>(vp->height());
  const osg::GraphicsContext* gc = render_info.getState()->getGraphicsContext();
  if (full_window_ && gc != nullptr && gc->getTraits() != nullptr) {
    x = 0;
    y = 0;
    w = gc->getTraits()->width;
    h = gc->getTraits()->height;
  }
  // Read what was just drawn, before any swap: the buffer the camera drew into.
  GLint draw_buffer = GL_BACK;
  glGetIntegerv(GL_DRAW_BUFFER, &draw_buffer);
  glReadBuffer(static_cast<GLenum>(draw_buffer));
  image_->readPixels(x, y, w, h, GL_RGB, GL_UNSIGNED_BYTE);
}

OffscreenResult draw_offscreen(const OffscreenRequest& request) {
  OffscreenResult result;
  result.backend_used =
      draw_offscreen_frames(request, 1, nullptr, [&](std::size_t /*frame*/, const osg::Image& i) {
        result.image = new osg::Image(i, osg::CopyOp::DEEP_COPY_ALL);
      });
  return result;
}

Backend draw_offscreen_frames(const OffscreenRequest& request, std::size_t frames,
                              const FramePrepare& prepare, const FrameConsume& consume) {
  if (request.scene == nullptr || request.width_px < 1 || request.height_px < 1) {
    throw RunError("offscreen draw needs a scene and a positive size");
  }
  const bool try_glx = request.backend == Backend::glx ||
                       (request.backend == Backend::automatic && display_variable_set());
  if (request.backend == Backend::glx && !display_variable_set()) {
    throw RunError(
        "the GLX backend needs an X display but DISPLAY is not set; use --backend egl "
        "(or auto) to render without one");
  }
  if (try_glx) {
    osg::ref_ptr<osg::GraphicsContext> gc = make_glx_pbuffer(request.width_px, request.height_px);
    if (gc.valid()) {
      osgViewer::Viewer viewer;
      viewer.setThreadingModel(osgViewer::Viewer::SingleThreaded);
      viewer.getCamera()->setGraphicsContext(gc.get());
      draw_with(viewer, request, frames, prepare, consume);
      return Backend::glx;
    }
    if (request.backend == Backend::glx) {
      throw RunError(std::string("cannot create a GLX pbuffer on display '") +
                     std::getenv("DISPLAY") +
                     "'; use --backend egl (or auto) to render without an X server");
    }
  }
  // The EGL context must outlive the viewer: the viewer releases its GL objects on destruction.
  EglContext egl(request.width_px, request.height_px);
  {
    osgViewer::Viewer viewer;
    viewer.setUpViewerAsEmbeddedInWindow(0, 0, request.width_px, request.height_px);
    draw_with(viewer, request, frames, prepare, consume);
  }
  return Backend::egl;
}

void check_image_output(const std::filesystem::path& target) {
  const std::string ext = target.extension().string();
  if (ext.size() < 2) {
    throw InputError(FileLoc{target.string()}, "the output needs an image extension such as .png");
  }
  if (osgDB::Registry::instance()->getReaderWriterForExtension(ext.substr(1)) == nullptr) {
    throw InputError(FileLoc{target.string()}, "no image writer for '" + ext + "' files; use .png");
  }
  const std::filesystem::path folder =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    throw RunError("cannot write " + target.string() + ": folder " + folder.string() +
                   " does not exist");
  }
  (void)checked_output_target(target);  // a FIFO, device, folder or input of the command
}

std::unique_ptr<AtomicOutputFile> stage_image(const osg::Image& image, const std::filesystem::path& target) {
  check_image_output(target);
  // Encoded in memory, then written through AtomicOutputFile so that every write is checked (a
  // plugin writing a file itself does not report a full disk).
  osgDB::ReaderWriter* writer =
      osgDB::Registry::instance()->getReaderWriterForExtension(target.extension().string().substr(1));
  std::ostringstream bytes(std::ios::binary);
  const osgDB::ReaderWriter::WriteResult written = writer->writeImage(image, bytes);
  const std::string encoded = std::move(bytes).str();
  if (!written.success() || encoded.empty()) {
    throw RunError("cannot encode the image for " + target.string() +
                   (written.message().empty() ? std::string() : ": " + written.message()));
  }
  auto out = std::make_unique<AtomicOutputFile>(target);
  out->write(encoded);
  out->close();
  return out;
}

void write_image_atomically(const osg::Image& image, const std::filesystem::path& target) {
  stage_image(image, target)->commit();
}

osg::ref_ptr<osg::Image> downsample_rgb(const osg::Image& image, int factor) {
  if (image.getPixelFormat() != GL_RGB || image.getDataType() != GL_UNSIGNED_BYTE) {
    throw RunError("downsampling needs an 8-bit RGB image");
  }
  if (factor <= 1) return new osg::Image(image, osg::CopyOp::DEEP_COPY_ALL);
  const int w = image.s() / factor;
  const int h = image.t() / factor;
  osg::ref_ptr<osg::Image> out = new osg::Image;
  out->allocateImage(w, h, 1, GL_RGB, GL_UNSIGNED_BYTE, 1);
  const int area = factor * factor;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int sum[3] = {0, 0, 0};
      for (int dy = 0; dy < factor; ++dy) {
        const unsigned char* row =
            image.data(static_cast<unsigned>(x * factor), static_cast<unsigned>(y * factor + dy));
        for (int dx = 0; dx < factor; ++dx) {
          for (int c = 0; c < 3; ++c) sum[c] += row[dx * 3 + c];
        }
      }
      unsigned char* dst = out->data(static_cast<unsigned>(x), static_cast<unsigned>(y));
      for (int c = 0; c < 3; ++c) dst[c] = static_cast<unsigned char>((sum[c] + area / 2) / area);
    }
  }
  return out;
}

}  // namespace kanoko::scene
