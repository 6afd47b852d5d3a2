// The mapping's [audio] section: which per-body quantity each sound cue watches, the range of its
// rate of change that fires the cue, and how cues sound (voices, volume, Doppler, HRTF). Parsed
// with the mapping (strict keys, file:line:column); used by sonify/. Reference:
// docs/mapping-language.md and docs/sound.md.
//
// read_audio() is a template over the mapping parser's table reader (mapping.cpp's Section), so
// this section is parsed by the same strict machinery without that reader leaving mapping.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/mapping/expression.hpp"

namespace kanoko::mapping {

/// When a cue fires: as the watched rate of change enters its range, or as it leaves it.
enum class CueEdge { Enter, Leave };
/// Head-related transfer function (binaural 3-D sound on headphones).
enum class HrtfRequest { Auto, On, Off };
/// The timbres a voice can have (synthesised, no sample files needed).
enum class Timbre { Sine, Triangle, Square, Pluck, Bell };

/// Names used in mapping files, in enum order.
[[nodiscard]] const std::vector<std::string>& timbre_names();
[[nodiscard]] const char* to_string(Timbre t);
[[nodiscard]] const char* to_string(CueEdge e);
[[nodiscard]] const char* to_string(HrtfRequest h);

/// One [[audio.cue]]: fires for a body when d(quantity)/dt (per trace second) enters (or leaves)
/// [rate_min, rate_max]. Either bound may be a formula over the rate's statistics in the run
/// (Scope::Cue: `mean_rate + 3 * sd_rate`), evaluated once per body by sonify before detection.
struct CueSpec {
  std::string quantity = "load";  ///< a per-body statistic of the run, or "speed"
  double rate_min = 1.0;          ///< units of the quantity per trace second
  double rate_max = std::numeric_limits<double>::infinity();
  std::optional<ExpressionSpec> rate_min_formula;  ///< replaces rate_min when given
  std::optional<ExpressionSpec> rate_max_formula;  ///< replaces rate_max when given
  CueEdge edge = CueEdge::Enter;
  double refractory_s = 0.5;  ///< trace seconds during which the same body cannot fire this cue again
  double gain = 1.0;          ///< loudness of this cue (linear, multiplies the master volume)
  FileLoc where;              ///< the cue's table, for errors found against the run
};

/// One [[audio.voice]]: the sound of one body (unassigned bodies get one automatically).
struct VoiceSpec {
  std::string body;  ///< body name, or its index written as an integer
  std::optional<Timbre> timbre;
  std::optional<double> pitch_hz;
  FileLoc where;
};

/// [audio]
struct AudioSpec {
  std::vector<CueSpec> cues;      ///< empty: one default cue (load rising faster than 1 per s)
  std::uint32_t max_voices = 16;  ///< global cap on sounds playing at once
  double master_volume = 0.8;     ///< 0..1
  double cue_length_s = 0.25;     ///< how long one cue sounds (wall seconds)
  bool doppler = true;            ///< pitch follows the body's velocity relative to the listener
  HrtfRequest hrtf = HrtfRequest::Auto;
  bool pitch_follows_speed = false;  ///< scale pitch with the playback speed (off: pitch is fixed)
  std::vector<VoiceSpec> voices;
  bool present = false;  ///< the file has an [audio] table

  /// The cues in effect (the default one when none is given).
  [[nodiscard]] std::vector<CueSpec> effective_cues() const;
};

/// Checks a `rate = [low, high]` value (two numbers, `inf`/`-inf` allowed, low < high); returns
/// an error message, or "" when valid.
[[nodiscard]] std::string check_rate_range(double low, double high);

namespace detail {

/// A boolean key; reports other types.
template <class Section>
std::optional<bool> boolean(Section& s, const std::string& key) {
  const auto* v = s.get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    s.error(*v, "'" + key + "' must be true or false");
    return std::nullopt;
  }
  return v->as_boolean();
}

/// One number of a rate range: integers, floats and ±inf.
template <class Value>
std::optional<double> range_bound(const Value& e) {
  if (e.is_integer()) return static_cast<double>(e.as_integer());
  if (e.is_floating() && !std::isnan(e.as_floating())) return e.as_floating();
  return std::nullopt;
}

template <class Section>
void read_cue(Section& c, CueSpec& cue) {
  if (auto v = c.string("quantity")) cue.quantity = *v;  // checked against the run by sonify
  if (const auto* r = c.get("rate")) {
    // Each bound: a number (inf and -inf allowed) or a formula in a string.
    bool ok = r->is_array() && r->as_array().size() == 2;
    bool formula = false;
    double bound[2] = {cue.rate_min, cue.rate_max};
    std::optional<ExpressionSpec>* formulas[2] = {&cue.rate_min_formula, &cue.rate_max_formula};
    for (std::size_t i = 0; ok && i < 2; ++i) {
      const auto& e = r->as_array()[i];
      if (e.is_string()) {
        formula = true;
        *formulas[i] = c.expression(e, "rate", Scope::Cue);  // reports its own problems
      } else if (const auto v = range_bound(e)) {
        bound[i] = *v;
      } else {
        ok = false;
      }
    }
    if (!ok) {
      c.error(*r, "'rate' must be [low, high]: two numbers (inf and -inf allowed) or formulas in strings, "
                  "the range of the quantity's rate of change per trace second");
    } else if (const std::string problem = formula ? "" : check_rate_range(bound[0], bound[1]); !problem.empty()) {
      c.error(*r, problem);  // with a formula the range is checked per body, against the run
    } else {
      cue.rate_min = bound[0];
      cue.rate_max = bound[1];
    }
  }
  if (auto v = c.choice("on", {"enter", "leave"})) cue.edge = static_cast<CueEdge>(*v);
  if (auto v = c.number("refractory", 0, 1e300)) cue.refractory_s = *v;
  if (auto v = c.number("gain", 0, 10)) cue.gain = *v;
}

template <class Section>
void read_voice(Section& c, VoiceSpec& voice) {
  if (const auto* b = c.get("body")) {
    if (b->is_string()) {
      voice.body = b->as_string();
    } else if (b->is_integer() && b->as_integer() >= 0) {
      voice.body = std::to_string(b->as_integer());
    } else {
      c.error(*b, "'body' must be a body name or a body index (an integer >= 0)");
    }
  }
  if (auto v = c.choice("timbre", timbre_names())) voice.timbre = static_cast<Timbre>(*v);
  if (auto v = c.number("pitch", 20, 20000)) voice.pitch_hz = *v;
}

/// Reads an array of tables ([[audio.NAME]]); with none given, visits the keys of one empty table
/// so that the vocabulary is known (docs check).
template <class Section, class MakeSection, class Spec, class ReadOne>
void read_tables(Section& s, const char* name, const char* path, MakeSection& make,
                 std::vector<Spec>& out, ReadOne read_one) {
  const auto* v = s.get(name);
  if (v == nullptr || !v->is_array()) {
    if (v != nullptr) {
      s.error(*v, std::string("'") + name + "' must be an array of tables: write [[" + path + "]]");
    }
    auto empty = make(nullptr, path);
    Spec ignored;
    read_one(empty, ignored);
    return;
  }
  for (const auto& e : v->as_array()) {
    if (!e.is_table()) {
      s.error(e, std::string("each '") + name + "' must be a table: write [[" + path + "]]");
      continue;
    }
    auto t = make(&e, path);
    Spec spec;
    const auto l = e.location();
    spec.where = FileLoc{l.file_name(), static_cast<std::int64_t>(l.line()),
                         static_cast<std::int64_t>(l.column())};
    read_one(t, spec);
    t.report_unknown_keys();
    out.push_back(std::move(spec));
  }
}

}  // namespace detail

/// Reads [audio] from the parser's table reader `s`. `make(table, "audio.cue")` makes a reader
/// for a sub-table (the parser supplies it).
template <class Section, class MakeSection>
void read_audio(Section s, AudioSpec& a, MakeSection make) {
  a.present = s.present();
  if (auto v = s.integer("max_voices", 1, 256)) a.max_voices = static_cast<std::uint32_t>(*v);
  if (auto v = s.number("master_volume", 0, 1)) a.master_volume = *v;
  if (auto v = s.number("cue_length", 0.01, 10)) a.cue_length_s = *v;
  if (auto v = detail::boolean(s, "doppler")) a.doppler = *v;
  if (auto v = s.choice("hrtf", {"auto", "on", "off"})) a.hrtf = static_cast<HrtfRequest>(*v);
  if (auto v = detail::boolean(s, "pitch_follows_speed")) a.pitch_follows_speed = *v;
  detail::read_tables(s, "cue", "audio.cue", make, a.cues,
                      [](auto& c, CueSpec& cue) { detail::read_cue(c, cue); });
  detail::read_tables(s, "voice", "audio.voice", make, a.voices,
                      [](auto& c, VoiceSpec& voice) { detail::read_voice(c, voice); });
  s.report_unknown_keys();
}

}  // namespace kanoko::mapping
