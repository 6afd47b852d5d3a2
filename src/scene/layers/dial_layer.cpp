#include "src/scene/layers/dial_layer.hpp"

#include <cmath>
#include <osg/Geode>
#include <osgText/Font>

#include "src/scene/layers/scene_graph.hpp"

namespace kanoko::scene::layers {

namespace {

constexpr unsigned kSegments = 96;
const osg::Vec4 kDialFace{0.11F, 0.12F, 0.15F, 0.88F};
const osg::Vec4 kDialElapsed{0.24F, 0.31F, 0.44F, 0.95F};
const osg::Vec4 kDialRim{0.78F, 0.80F, 0.84F, 1.0F};
const osg::Vec4 kDialTick{0.62F, 0.65F, 0.70F, 1.0F};
const osg::Vec4 kDialTickNoon{0.95F, 0.96F, 0.98F, 1.0F};
const osg::Vec4 kDialHand{1.0F, 0.62F, 0.12F, 1.0F};

osg::Vec3 on_circle(double angle_from_noon_rad, double radius) {
  // Clockwise from 12 o'clock, y up.
  return {to_f(radius * std::sin(angle_from_noon_rad)), to_f(radius * std::cos(angle_from_noon_rad)), 0.0F};
}

osg::ref_ptr<osg::Vec3Array> disc_vertices(double radius, unsigned segments) {
  auto v = make<osg::Vec3Array>();
  v->push_back(osg::Vec3(0.0F, 0.0F, 0.0F));
  for (unsigned k = 0; k <= segments; ++k) v->push_back(on_circle(2.0 * kPi * k / segments, radius));
  return v;
}

osg::ref_ptr<osg::Vec3Array> ring_vertices(double inner, double outer, unsigned segments) {
  auto v = make<osg::Vec3Array>();
  for (unsigned k = 0; k <= segments; ++k) {
    const double a = 2.0 * kPi * k / segments;
    v->push_back(on_circle(a, outer));
    v->push_back(on_circle(a, inner));
  }
  return v;
}

// A quad along the radius at `angle`, from r0 to r1, `half_width` wide on each side (GL_TRIANGLES).
void add_radial_quad(osg::Vec3Array& v, double angle, double r0, double r1, double half_width0, double half_width1) {
  const osg::Vec3 along = on_circle(angle, 1.0);
  const osg::Vec3 across = on_circle(angle + 0.5 * kPi, 1.0);
  const osg::Vec3 a = along * to_f(r0) - across * to_f(half_width0);
  const osg::Vec3 b = along * to_f(r0) + across * to_f(half_width0);
  const osg::Vec3 c = along * to_f(r1) + across * to_f(half_width1);
  const osg::Vec3 d = along * to_f(r1) - across * to_f(half_width1);
  for (const osg::Vec3& p : {a, b, c, a, c, d}) v.push_back(p);
}

}  // namespace

DialLayer::DialLayer() {
  group_ = new osg::Group;
  group_->setName("dial");
  dial_xform_ = new osg::MatrixTransform;
  dial_xform_->setDataVariance(osg::Object::DYNAMIC);
  auto dial = make<osg::Geode>();
  dial->addDrawable(make_flat(disc_vertices(1.0, kSegments).get(), GL_TRIANGLE_FAN, kDialFace, 10).get());

  // The elapsed part of the run as a tinted sector from 12 o'clock to the hand; it also tells the
  // start (empty) from the end (full), where the hand alone looks the same.
  auto wedge_vertices = make<osg::Vec3Array>();
  elapsed_wedge_ = make_flat(wedge_vertices.get(), GL_TRIANGLE_FAN, kDialElapsed, 11);
  elapsed_wedge_->setDataVariance(osg::Object::DYNAMIC);
  elapsed_wedge_->setUseDisplayList(false);
  elapsed_wedge_->setUseVertexBufferObjects(true);
  dial->addDrawable(elapsed_wedge_.get());

  dial->addDrawable(make_flat(ring_vertices(0.93, 1.0, kSegments).get(), GL_TRIANGLE_STRIP, kDialRim, 12).get());
  auto ticks = make<osg::Vec3Array>();
  for (int hour = 1; hour < 12; ++hour) {
    const bool quarter = hour % 3 == 0;
    add_radial_quad(*ticks, 2.0 * kPi * hour / 12.0, quarter ? 0.68 : 0.76, 0.88, quarter ? 0.035 : 0.022,
                    quarter ? 0.035 : 0.022);
  }
  dial->addDrawable(make_flat(ticks.get(), GL_TRIANGLES, kDialTick, 13).get());
  auto noon = make<osg::Vec3Array>();
  add_radial_quad(*noon, 0.0, 0.62, 0.90, 0.05, 0.05);
  dial->addDrawable(make_flat(noon.get(), GL_TRIANGLES, kDialTickNoon, 13).get());
  dial_xform_->addChild(dial.get());

  hand_xform_ = new osg::MatrixTransform;
  hand_xform_->setDataVariance(osg::Object::DYNAMIC);
  auto hand = make<osg::Geode>();
  auto hand_vertices = make<osg::Vec3Array>();
  add_radial_quad(*hand_vertices, 0.0, -0.16, 0.84, 0.10, 0.035);
  hand->addDrawable(make_flat(hand_vertices.get(), GL_TRIANGLES, kDialHand, 14).get());
  hand->addDrawable(make_flat(disc_vertices(0.11, 24).get(), GL_TRIANGLE_FAN, kDialHand, 15).get());
  hand_xform_->addChild(hand.get());
  dial_xform_->addChild(hand_xform_.get());
  group_->addChild(dial_xform_.get());

  osg::ref_ptr<osgText::Font> font = osgText::readRefFontFile("DejaVuSans.ttf");
  time_label_ = make_label(font.get(), osgText::Text::RIGHT_BASE_LINE);
  auto text = make<osg::Geode>();
  text->addDrawable(time_label_.get());
  group_->addChild(text.get());
}

void DialLayer::layout(const DialLayout& dial) {
  dial_xform_->setMatrix(osg::Matrixd::scale(dial.radius_px, dial.radius_px, 1.0) *
                         osg::Matrixd::translate(dial.centre_x_px, dial.centre_y_px, 0.0));
  time_label_->setCharacterSize(to_f(dial.label_size_px));
  time_label_->setPosition(osg::Vec3(to_f(dial.label_x_px), to_f(dial.label_y_px), 0.0F));
}

void DialLayer::update(const FrameState& frame) {
  // The dial spans the traced run, as in the paper (6 o'clock is half of the program's run);
  // frames stored after the trace ends (the settling phase) show a full dial.
  const double fraction = dial_fraction(frame.time_s, frame.span_begin_s, frame.span_end_s);
  const double angle = dial_hand_angle_deg(fraction) * kDegToRad;
  // Positive rotation about +z is counter-clockwise on screen; the hand turns clockwise.
  hand_xform_->setMatrix(osg::Matrixd::rotate(-angle, osg::Vec3d(0, 0, 1)));

  auto* v = static_cast<osg::Vec3Array*>(elapsed_wedge_->getVertexArray());
  v->clear();
  if (angle > 0) {
    const auto steps = static_cast<unsigned>(std::ceil(angle / (2.0 * kPi) * 96.0));
    v->push_back(osg::Vec3(0.0F, 0.0F, 0.0F));
    for (unsigned k = 0; k <= steps; ++k) v->push_back(on_circle(angle * k / steps, 0.93));
  }
  v->dirty();
  auto* draw = static_cast<osg::DrawArrays*>(elapsed_wedge_->getPrimitiveSet(0));
  draw->setCount(static_cast<GLsizei>(v->size()));
  draw->dirty();
  elapsed_wedge_->dirtyBound();

  set_text(*time_label_, format_dial_time(frame.time_s, frame.span_begin_s, frame.span_end_s));
}

Direction2 DialLayer::hand_direction() const {
  const osg::Vec3d tip = osg::Vec3d(0.0, 1.0, 0.0) * hand_xform_->getMatrix();  // the hand is built at noon
  return {tip.x(), tip.y()};
}

std::size_t DialLayer::elapsed_vertices() const { return elapsed_wedge_->getVertexArray()->getNumElements(); }

}  // namespace kanoko::scene::layers
