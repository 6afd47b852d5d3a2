// The viewer's sound (sonify/): the listener at the camera, cue voices at the bodies, one batched
// OpenAL update per frame in step with the replay clock, volume and mute keys, and a legend in the
// HUD naming each body's voice. With no sound device the viewer runs silently, with one message.
#pragma once

#include <memory>
#include <osg/Matrixd>
#include <osgGA/GUIEventHandler>
#include <osgText/Text>
#include <ostream>
#include <string>
#include <vector>

#include "sonify/engine.hpp"
#include "sonify/live.hpp"
#include "src/mapping/audio_section.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"

namespace kanoko::scene {

/// The listener of a camera: at the eye, looking where the camera looks (from a view matrix).
[[nodiscard]] sonify::ListenerState listener_from_view(const osg::Matrixd& view);

/// The sound keys, for --help and OSG's help screen.
[[nodiscard]] const std::vector<KeyBinding>& audio_bindings();

/// Plays the run's cues in the viewer and reacts to the sound keys: m mutes, ',' and '.' lower and
/// raise the volume, v shows or hides the voice legend.
class AudioLink : public osgGA::GUIEventHandler {
 public:
  /// Opens the output device (`device_name`, "" for the default); with none, prints one line to
  /// `messages` and stays silent. Throws InputError if `audio` does not fit the run. `reader`
  /// and `scene` must outlive the link.
  AudioLink(const trajectory::Reader& reader, const mapping::AudioSpec& audio, TrajectoryScene& scene,
            const std::string& device_name, std::ostream& messages);
  ~AudioLink() override;

  /// Plays `run` from now on (a re-simulated run of the same bodies, which must outlive the link
  /// or the next set_run()): stops the sounding voices and rebuilds the cue schedule from it with
  /// the same [audio] section, device, volume and mute.
  void set_run(const trajectory::Reader& run);
  /// The run whose cues play.
  [[nodiscard]] const trajectory::Reader& run() const { return *reader_; }

  /// Once per frame, after the clock advanced by `wall_dt_s`; `view` is the camera's view matrix.
  void update(const ReplayClock& clock, double wall_dt_s, const osg::Matrixd& view);

  using osgGA::GUIEventHandler::handle;
  bool handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& aa) override;
  void getUsage(osg::ApplicationUsage& usage) const override;

  /// The legend's text: one line per voice (at most 12, then a count) and the sound state.
  [[nodiscard]] std::string legend_text() const;
  [[nodiscard]] sonify::Engine& engine() { return *engine_; }
  [[nodiscard]] const sonify::LivePlayer& player() const { return *player_; }

 private:
  void refresh_legend();

  const trajectory::Reader* reader_;  ///< never null; set_run() swaps it
  mapping::AudioSpec audio_;
  TrajectoryScene& scene_;
  std::unique_ptr<sonify::Engine> engine_;
  std::unique_ptr<sonify::LivePlayer> player_;
  osg::ref_ptr<osg::Geode> legend_geode_;
  osg::ref_ptr<osgText::Text> legend_;
  bool legend_shown_ = true;
  bool legend_dirty_ = true;
};

}  // namespace kanoko::scene
