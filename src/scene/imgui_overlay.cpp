#include "src/scene/imgui_overlay.hpp"

#include <imgui.h>
#include <imgui_internal.h>
#include <backends/imgui_impl_opengl3.h>

#include <chrono>
#include <filesystem>
#include <osg/GLExtensions>
#include <osg/GraphicsContext>
#include <osg/State>
#include <vector>

namespace kanoko::scene {

namespace {

using GEA = osgGA::GUIEventAdapter;

/// The ImGui key an OSG key drives, or -1.
int imgui_key(int osg_key) {
  switch (osg_key) {
    case GEA::KEY_Tab: return ImGuiKey_Tab;
    case GEA::KEY_Left: return ImGuiKey_LeftArrow;
    case GEA::KEY_Right: return ImGuiKey_RightArrow;
    case GEA::KEY_Up: return ImGuiKey_UpArrow;
    case GEA::KEY_Down: return ImGuiKey_DownArrow;
    case GEA::KEY_Page_Up: return ImGuiKey_PageUp;
    case GEA::KEY_Page_Down: return ImGuiKey_PageDown;
    case GEA::KEY_Home: return ImGuiKey_Home;
    case GEA::KEY_End: return ImGuiKey_End;
    case GEA::KEY_Delete: return ImGuiKey_Delete;
    case GEA::KEY_BackSpace: return ImGuiKey_Backspace;
    case GEA::KEY_Return:
    case GEA::KEY_KP_Enter: return ImGuiKey_Enter;
    case GEA::KEY_Escape: return ImGuiKey_Escape;
    case 'a': return ImGuiKey_A;
    case 'c': return ImGuiKey_C;
    case 'v': return ImGuiKey_V;
    case 'x': return ImGuiKey_X;
    case 'y': return ImGuiKey_Y;
    case 'z': return ImGuiKey_Z;
    default: return -1;
  }
}

class OverlayHandler : public osgGA::GUIEventHandler {
 public:
  explicit OverlayHandler(ImGuiOverlay& overlay) : overlay_(overlay) {}

  using osgGA::GUIEventHandler::handle;
  bool handle(const GEA& ea, osgGA::GUIActionAdapter& /*aa*/) override {
    if (const int mods = ea.getModKeyMask(); mods != mods_) {
      mods_ = mods;
      ImGuiOverlay::Input in{ImGuiOverlay::Input::Kind::modifiers};
      in.key = mods;
      overlay_.queue(in);
    }
    const float height = ea.getWindowHeight() > 0 ? static_cast<float>(ea.getWindowHeight()) : 0.0F;
    const float x = ea.getX();
    const float y = ea.getMouseYOrientation() == GEA::Y_INCREASING_UPWARDS ? height - ea.getY()
                                                                               : ea.getY();
    switch (ea.getEventType()) {
      case GEA::MOVE:
      case GEA::DRAG:
        overlay_.queue({ImGuiOverlay::Input::Kind::move, x, y});
        return captured_;
      case GEA::PUSH:
      case GEA::RELEASE: {
        overlay_.queue({ImGuiOverlay::Input::Kind::move, x, y});
        ImGuiOverlay::Input in{ImGuiOverlay::Input::Kind::button, x, y};
        in.button = ea.getButton() == GEA::RIGHT_MOUSE_BUTTON    ? 1
                    : ea.getButton() == GEA::MIDDLE_MOUSE_BUTTON ? 2
                                                                 : 0;
        in.down = ea.getEventType() == GEA::PUSH;
        overlay_.queue(in);
        if (in.down) {
          captured_ = overlay_.over_window(x, y);
          return captured_;
        }
        const bool was = captured_;
        captured_ = false;
        return was;
      }
      case GEA::SCROLL: {
        ImGuiOverlay::Input in{ImGuiOverlay::Input::Kind::wheel, x, y};
        in.wheel = ea.getScrollingMotion() == GEA::SCROLL_UP     ? 1.0F
                   : ea.getScrollingMotion() == GEA::SCROLL_DOWN ? -1.0F
                                                                 : 0.0F;
        overlay_.queue(in);
        return overlay_.over_window(x, y);
      }
      case GEA::KEYDOWN:
      case GEA::KEYUP: {
        const bool down = ea.getEventType() == GEA::KEYDOWN;
        if (const int k = imgui_key(ea.getKey()); k >= 0) {
          ImGuiOverlay::Input in{ImGuiOverlay::Input::Kind::key};
          in.key = k;
          in.down = down;
          overlay_.queue(in);
        }
        if (down && ea.getKey() >= 32 && ea.getKey() < 0x10000 && ea.getKey() != 127) {
          ImGuiOverlay::Input in{ImGuiOverlay::Input::Kind::character};
          in.key = ea.getKey();
          overlay_.queue(in);
        }
        // Keys go on to the viewer unless a text field is being edited.
        return ImGui::GetCurrentContext() != nullptr && ImGui::GetIO().WantTextInput;
      }
      default:
        return false;
    }
  }

 private:
  ImGuiOverlay& overlay_;
  int mods_ = 0;
  bool captured_ = false;  ///< a press began over a window: its drag and release are ours
};

class OverlayDraw : public osg::Camera::DrawCallback {
 public:
  explicit OverlayDraw(ImGuiOverlay& overlay) : overlay_(overlay) {}
  using osg::Camera::DrawCallback::operator();
  void operator()(osg::RenderInfo& info) const override {
    osg::State* state = info.getState();
    const osg::GraphicsContext* gc = state != nullptr ? state->getGraphicsContext() : nullptr;
    if (gc == nullptr || gc->getTraits() == nullptr) return;
    const auto now = std::chrono::steady_clock::now();
    const double dt = started_ ? std::chrono::duration<double>(now - last_).count() : 1.0 / 60;
    started_ = true;
    last_ = now;
    // OSG leaves its buffer objects, program and texture units as its last drawable wanted;
    // ImGui's GL3 backend sets up its own program and buffers; OSG's state tracking is told below.
    if (const osg::GLExtensions* ext = state->get<osg::GLExtensions>(); ext != nullptr) {
      if (ext->isVBOSupported) {
        ext->glBindBuffer(GL_ARRAY_BUFFER_ARB, 0);
        ext->glBindBuffer(GL_ELEMENT_ARRAY_BUFFER_ARB, 0);
      }
      if (ext->isGlslSupported) ext->glUseProgram(0);
      if (ext->isMultiTexSupported) {
        ext->glActiveTexture(GL_TEXTURE0);
        ext->glClientActiveTexture(GL_TEXTURE0);
      }
    }
    state->disableAllVertexArrays();
    state->setLastAppliedProgramObject(nullptr);
    overlay_.draw_frame(gc->getTraits()->width, gc->getTraits()->height, dt);
    // ImGui changed GL state behind OSG's back.
    state->dirtyAllModes();
    state->dirtyAllAttributes();
    state->dirtyAllVertexArrays();
    if (osg::Camera::DrawCallback* then = overlay_.then(); then != nullptr) (*then)(info);
  }

 private:
  ImGuiOverlay& overlay_;
  mutable bool started_ = false;
  mutable std::chrono::steady_clock::time_point last_;
};

}  // namespace

ImGuiOverlay::ImGuiOverlay(std::function<void()> build) : build_(std::move(build)) {
  IMGUI_CHECKVERSION();
  ImGuiContext* previous = ImGui::GetCurrentContext();
  context_ = ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is Kanoko's (sessions), not imgui.ini in the cwd
  io.LogFilename = nullptr;
  for (int k = 0; k < ImGuiKey_COUNT; ++k) io.KeyMap[k] = k;
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 0.0F;
  style.WindowBorderSize = 1.0F;
  // DejaVu Sans (Debian's fonts-dejavu-core) reads better than ImGui's 13 px bitmap font.
  // The first font is the default, the second (monospace) lines up the inspect panel's columns.
  std::error_code ec;
  for (const char* face : {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                           "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"}) {
    if (std::filesystem::is_regular_file(face, ec)) {
      io.Fonts->AddFontFromFileTTF(face, 15.0F);
    } else {
      io.Fonts->AddFontDefault();
    }
  }
  ImGui::SetCurrentContext(previous != nullptr ? previous : context_);
  handler_ = new OverlayHandler(*this);
  draw_ = new OverlayDraw(*this);
}

ImGuiOverlay::~ImGuiOverlay() {
  ImGuiContext* previous = ImGui::GetCurrentContext();
  ImGui::SetCurrentContext(context_);
  // The GL objects die with the window's context; the backend only forgets them here.
  if (backend_ready_) ImGui_ImplOpenGL3_Shutdown();
  ImGui::DestroyContext(context_);
  if (previous != context_) ImGui::SetCurrentContext(previous);
}

bool ImGuiOverlay::over_window(float x, float y) const {
  for (const WindowRect& r : rects_) {
    if (x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1) return true;
  }
  return false;
}

void ImGuiOverlay::draw_frame(int width_px, int height_px, double dt_s) {
  ImGui::SetCurrentContext(context_);
  if (!backend_ready_) {
    ImGui_ImplOpenGL3_Init("#version 130");
    backend_ready_ = true;
  }
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(static_cast<float>(width_px), static_cast<float>(height_px));
  io.DeltaTime = static_cast<float>(dt_s > 1e-4 ? dt_s : 1e-4);
  // Replay queued input up to (and including) one button or key change: ImGui sees their states
  // once per frame, so a press and a release in one frame would be lost.
  bool moved = false;
  while (!pending_.empty()) {
    const Input in = pending_.front();
    // A button change after a move waits a frame, so the move is seen with the old state.
    if (in.kind == Input::Kind::button && moved && io.MouseDown[in.button] != in.down) break;
    if (in.kind == Input::Kind::move) moved = moved || io.MousePos.x != in.x || io.MousePos.y != in.y;
    pending_.pop_front();
    bool stop = false;
    switch (in.kind) {
      case Input::Kind::move: io.MousePos = ImVec2(in.x, in.y); break;
      case Input::Kind::button:
        io.MousePos = ImVec2(in.x, in.y);
        if (io.MouseDown[in.button] != in.down) stop = true;
        io.MouseDown[in.button] = in.down;
        break;
      case Input::Kind::wheel: io.MouseWheel += in.wheel; break;
      case Input::Kind::key:
        if (io.KeysDown[in.key] != in.down) stop = true;
        io.KeysDown[in.key] = in.down;
        break;
      case Input::Kind::character: io.AddInputCharacter(static_cast<unsigned>(in.key)); break;
      case Input::Kind::modifiers:
        io.KeyShift = (in.key & (GEA::MODKEY_LEFT_SHIFT | GEA::MODKEY_RIGHT_SHIFT)) != 0;
        io.KeyCtrl = (in.key & (GEA::MODKEY_LEFT_CTRL | GEA::MODKEY_RIGHT_CTRL)) != 0;
        io.KeyAlt = (in.key & (GEA::MODKEY_LEFT_ALT | GEA::MODKEY_RIGHT_ALT)) != 0;
        break;
    }
    if (stop) break;
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
  build_();
  ImGui::Render();
  rects_.clear();
  for (const ImGuiWindow* w : context_->Windows) {
    if (!w->Active || w->Hidden) continue;
    rects_.push_back({w->Pos.x, w->Pos.y, w->Pos.x + w->Size.x, w->Pos.y + w->Size.y});
  }
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  ++frames_;
}

}  // namespace kanoko::scene
