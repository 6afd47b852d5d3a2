#include "src/scene/audio_link.hpp"

#include <algorithm>
#include <cmath>
#include <osg/Geode>
#include <osgText/Font>
#include <sstream>

#include "src/scene/layers/scene_graph.hpp"

namespace kanoko::scene {

namespace {

constexpr std::size_t kLegendLines = 12;
constexpr double kVolumeStep = 0.1;

Eigen::Vector3d to_eigen(const osg::Vec3d& v) { return {v.x(), v.y(), v.z()}; }

}  // namespace

sonify::ListenerState listener_from_view(const osg::Matrixd& view) {
  osg::Vec3d eye, centre, up;
  view.getLookAt(eye, centre, up);
  sonify::ListenerState l;
  l.position = to_eigen(eye);
  osg::Vec3d forward = centre - eye;
  forward.normalize();
  up.normalize();
  l.forward = to_eigen(forward);
  l.up = to_eigen(up);
  return l;
}

const std::vector<KeyBinding>& audio_bindings() {
  static const std::vector<KeyBinding> bindings{
      {"m", "sound: mute / unmute"},
      {", / .", "sound: volume down / up"},
      {"v", "sound: show / hide the voice legend"},
  };
  return bindings;
}

AudioLink::AudioLink(const trajectory::Reader& reader, const mapping::AudioSpec& audio,
                     TrajectoryScene& scene, const std::string& device_name, std::ostream& messages)
    : reader_(&reader), audio_(audio), scene_(scene) {
  std::string message;
  engine_ = sonify::Engine::open_device(sonify::engine_options(audio, reader),
                                        sonify::assign_voices(audio, reader.meta()), device_name,
                                        message);
  if (!message.empty()) messages << "kanoko: " << message << '\n';
  player_ = std::make_unique<sonify::LivePlayer>(reader, audio, *engine_);

  legend_ = new osgText::Text;
  osg::ref_ptr<osgText::Font> font = osgText::readRefFontFile("DejaVuSans.ttf");
  if (font.valid()) legend_->setFont(font.get());
  legend_->setFontResolution(48, 48);
  legend_->setColor(osg::Vec4(0.92F, 0.92F, 0.92F, 1.0F));
  legend_->setAlignment(osgText::Text::RIGHT_TOP);
  legend_->setDataVariance(osg::Object::DYNAMIC);
  legend_->getOrCreateStateSet()->setRenderBinDetails(20, "RenderBin");
  legend_geode_ = new osg::Geode;
  legend_geode_->addDrawable(legend_.get());
  scene_.hud()->addChild(legend_geode_.get());
}

AudioLink::~AudioLink() {
  if (scene_.hud() != nullptr) scene_.hud()->removeChild(legend_geode_.get());
}

void AudioLink::set_run(const trajectory::Reader& run) {
  if (&run == reader_) return;
  // The cues of the old run must not sound at the new run's positions.
  engine_->stop_all();
  player_ = std::make_unique<sonify::LivePlayer>(run, audio_, *engine_);
  reader_ = &run;
  legend_dirty_ = true;
}

void AudioLink::update(const ReplayClock& clock, double wall_dt_s, const osg::Matrixd& view) {
  sonify::ReplayState state;
  state.time_s = clock.time_s();
  state.speed = clock.speed();
  state.paused = clock.paused();
  state.reversed = clock.reversed();
  player_->update(state, wall_dt_s, listener_from_view(view));
  refresh_legend();
}

std::string AudioLink::legend_text() const {
  std::ostringstream os;
  const auto& voices = player_->voices();
  const auto& bodies = reader_->meta().bodies;
  for (std::size_t i = 0; i < voices.size() && i < kLegendLines; ++i) {
    os << (bodies[i].name.empty() ? std::to_string(i) : bodies[i].name) << ": " << voices[i].label << '\n';
  }
  if (voices.size() > kLegendLines) os << "... and " << voices.size() - kLegendLines << " more voices\n";
  if (engine_->silent()) {
    os << "sound: no device";
  } else {
    os << "sound: " << (engine_->muted() ? std::string("muted")
                                         : std::to_string(std::lround(100 * engine_->master_volume())) + " %")
       << ", " << engine_->hrtf_status();
  }
  return os.str();
}

void AudioLink::refresh_legend() {
  const float size = std::max(11.0F, static_cast<float>(scene_.height_px()) / 60.0F);
  legend_->setCharacterSize(size);
  legend_->setPosition(osg::Vec3(static_cast<float>(scene_.width_px()) - size,
                                 static_cast<float>(scene_.height_px()) - size, 0.0F));
  legend_geode_->setNodeMask(legend_shown_ ? ~0U : 0U);
  if (legend_dirty_) {
    layers::set_text(*legend_, legend_text());
    legend_dirty_ = false;
  }
}

bool AudioLink::handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter&) {
  if (ea.getEventType() != osgGA::GUIEventAdapter::KEYDOWN) return false;
  switch (ea.getKey()) {
    case 'm':
      engine_->set_muted(!engine_->muted());
      break;
    case ',':
      engine_->set_master_volume(engine_->master_volume() - kVolumeStep);
      break;
    case '.':
      engine_->set_master_volume(engine_->master_volume() + kVolumeStep);
      break;
    case 'v':
      legend_shown_ = !legend_shown_;
      break;
    default:
      return false;
  }
  legend_dirty_ = true;
  refresh_legend();
  return true;
}

void AudioLink::getUsage(osg::ApplicationUsage& usage) const {
  for (const KeyBinding& b : audio_bindings()) usage.addKeyboardMouseBinding(b.key, b.action);
}

}  // namespace kanoko::scene

