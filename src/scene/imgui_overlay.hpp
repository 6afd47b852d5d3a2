// Dear ImGui drawn over an OpenSceneGraph window: the viewer's menus, timeline and windows. The
// overlay owns one ImGui context, feeds it the window's events (osgGA) and draws it with ImGui's
// OpenGL 3 backend after the 3-D scene and its HUD (the camera's final-draw callback), before a
// screenshot capture chained after it. Input is queued and replayed one button change per frame, so a press and a release
// that arrive together (a script's click) are both seen by ImGui.
#pragma once

#include <deque>
#include <functional>
#include <osg/Camera>
#include <osgGA/GUIEventHandler>
#include <vector>

struct ImGuiContext;

namespace kanoko::scene {

class ImGuiOverlay : public osg::Referenced {
 public:
  /// `build` is called once per drawn frame between ImGui::NewFrame() and ImGui::Render(), with
  /// the overlay's context current; it makes the windows.
  explicit ImGuiOverlay(std::function<void()> build);
  ~ImGuiOverlay() override;
  ImGuiOverlay(const ImGuiOverlay&) = delete;
  ImGuiOverlay& operator=(const ImGuiOverlay&) = delete;

  /// Feeds ImGui and consumes the mouse events over its windows (so the camera manipulator and
  /// the picking handler ignore them) and the keys while a text field has focus. Add it to the
  /// viewer before every other handler.
  [[nodiscard]] osgGA::GUIEventHandler* handler() const { return handler_.get(); }
  /// Draws the overlay; install as the main camera's final-draw callback (after the HUD cameras
  /// have drawn), then calls the callback set_then() names.
  [[nodiscard]] osg::Camera::DrawCallback* draw_callback() const { return draw_.get(); }
  /// A callback to call after the overlay is drawn (the screenshot capture), or null.
  void set_then(osg::Camera::DrawCallback* then) { then_ = then; }
  [[nodiscard]] osg::Camera::DrawCallback* then() const { return then_.get(); }

  /// True if the window point (pixels, origin top-left) is on a window the overlay drew in its
  /// last frame.
  [[nodiscard]] bool over_window(float x, float y) const;
  /// Frames drawn so far.
  [[nodiscard]] std::uint64_t frames() const { return frames_; }

  /// One queued input change (public for the handler and draw callback in the .cpp).
  struct Input {
    enum class Kind { move, button, wheel, key, character, modifiers } kind = Kind::move;
    float x = 0;  ///< move: window pixels, origin top-left
    float y = 0;
    int button = 0;     ///< button: 0 left, 1 right, 2 middle
    bool down = false;  ///< button, key
    float wheel = 0;    ///< wheel: +1 up
    int key = 0;        ///< key: ImGuiKey_ index; character: the code point; modifiers: the OSG mask
  };
  void queue(const Input& input) { pending_.push_back(input); }
  /// Applies queued input (up to one button change) and draws one frame of the overlay.
  void draw_frame(int width_px, int height_px, double dt_s);

 private:
  ImGuiContext* context_ = nullptr;
  std::function<void()> build_;
  osg::ref_ptr<osgGA::GUIEventHandler> handler_;
  osg::ref_ptr<osg::Camera::DrawCallback> draw_;
  osg::ref_ptr<osg::Camera::DrawCallback> then_;
  std::deque<Input> pending_;
  struct WindowRect {
    float x0, y0, x1, y1;
  };
  std::vector<WindowRect> rects_;  ///< the windows of the last frame
  bool backend_ready_ = false;
  std::uint64_t frames_ = 0;
};

}  // namespace kanoko::scene
