// The mapping file: how a trace becomes a physical system. TOML, parsed strictly: every unknown
// key, wrong type and out-of-range value is reported with file:line:column, all in one pass.
// Reference: docs/mapping-language.md.
#pragma once

#include <Eigen/Core>
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "integrators/forces/repulsion.hpp"
#include "src/base/error.hpp"
#include "src/mapping/expression.hpp"
#include "src/mapping/audio_section.hpp"

namespace kanoko::mapping {

/// Initial placement of the bodies. `Topology` uses the spring topology's own 3-D embedding
/// (models/topology.hpp); `Sphere` spreads the bodies evenly over a sphere.
enum class Placement { Cube, Lattice, Ring, Line, Explicit, Sphere, Topology };
/// Which edges carry springs (models/topology.hpp generates them).
enum class SpringTopology {
  None, Ring, Mesh, Explicit, Torus, Hypercube, FatTree, Dragonfly,
  Complete,  ///< every pair interacts (the paper's all-to-all machine): no springs
  Trace,     ///< the observed communication graph: a spring per pair that communicated
  Links,     ///< the interconnect links the trace declares (a SimGrid platform graph)
};
/// How bodies (in the trace's order) are assigned to the topology's positions.
enum class BodyOrder {
  Declaration,  ///< body i at position i
  Rank,         ///< by MPI rank
  Name,         ///< by name, numbers compared as numbers ("pe2" before "pe10")
  Pattern,      ///< the first capture group of `pattern` on the name gives the position
  Table,        ///< `table = { name = position, ... }`
};
/// How trace entities are grouped into bodies.
enum class GroupBy {
  Entity,  ///< one body per entity (process, rank)
  Host,    ///< one body per host, aggregating its entities
  Table,   ///< by the `groups` parent table, `level` steps up
};
/// Who feels the communication attraction.
enum class CommunicationMode {
  Sender,     ///< only the sender is pulled towards the receiver (the paper's all-to-all case)
  Symmetric,  ///< both ends are pulled towards each other
};
/// What amount of communication makes the force.
enum class CommunicationQuantity { Bytes, Messages };
/// Where a body's load comes from.
enum class LoadSource {
  Samples,  ///< time-mean of the trace's sampled load in the interval
  Busy,     ///< fraction of the interval spent in busy states
};

/// [simulation]
struct SimulationSpec {
  double interval_s = 0.1;     ///< binning interval (trace seconds); the paper sampled 0.1 s
  double dt_s = 0.01;          ///< requested integrator step; reduced to divide interval_s exactly
  std::uint32_t frame_every = 1;  ///< store one frame every k steps
  std::string integrator = "rk4";
  double settle_s = 0;         ///< keep integrating this long after the trace ends, no forcing
  double tolerance = 1e-6;     ///< error per step allowed to adaptive integrators
  /// `interval = "auto"`: the ingest picks interval_s from the trace's duration and event density.
  bool interval_auto = false;
  /// `intervals = N`: interval_s is the trace's (or window's) duration / N. 0: not given.
  std::uint64_t intervals = 0;
  /// `calibrate = "auto"`: friction, gain, stiffness, repulsion and dt are set from the trace by
  /// the energy argument (models/suggest.hpp), relative to the interval and the body spacing;
  /// every one of those keys that the mapping writes keeps its written value.
  bool calibrate = false;
};

/// [bodies]
struct BodiesSpec {
  Placement placement = Placement::Cube;
  double size = 1.0;  ///< cube edge, lattice spacing, ring radius or line spacing
  std::array<int, 3> lattice{0, 0, 0};  ///< lattice dimensions (x fastest)
  std::vector<Eigen::Vector3d> positions;  ///< explicit placement
  double radius = 0.08;                    ///< display radius at base mass
  bool placement_given = false;            ///< `placement` was written (else chosen from the topology)
  BodyOrder order = BodyOrder::Declaration;
  std::string pattern;                     ///< BodyOrder::Pattern: RE2 pattern with one capture group
  std::map<std::string, int> table;        ///< BodyOrder::Table: name → position
};

/// [mass]: m_i(t) = base + load_gain * load_i(t)
struct MassSpec {
  double base = 1.0;
  double load_gain = 0.0;
  LoadSource load = LoadSource::Samples;
  std::vector<std::string> busy_states{"compute"};  ///< states that count as busy
  /// Load is the mean over this many intervals up to the current one (0 or 1: the interval's own),
  /// so that mass follows the program's load rather than flickering between its phases.
  std::uint32_t smoothing = 0;
  std::optional<ExpressionSpec> expression;  ///< overrides base + load_gain × load when given
};

/// [springs]: Hooke springs k (L - |d|) on topology edges.
struct SpringSpec {
  SpringTopology topology = SpringTopology::None;
  std::vector<std::array<int, 2>> edges;  ///< explicit edges (body indices)
  std::array<int, 3> mesh{0, 0, 0};       ///< mesh dimensions; 0 = the bodies' lattice
  std::vector<int> dims;                  ///< mesh/torus dimensions (2 or 3), empty = `mesh`/lattice
  int dimension = 0;                      ///< hypercube dimension, 0 = from the body count
  std::vector<int> levels;                ///< fat tree: children per switch, leaves first
  int groups = 0;                         ///< dragonfly: groups
  int routers = 0;                        ///< dragonfly: routers per group
  int nodes_per_router = 1;               ///< dragonfly: bodies per router
  double min_bytes = 0;                   ///< topology "trace": least total bytes for a spring
  double min_messages = 0;                ///< topology "trace": least total messages for a spring
  double k = 1.0;
  std::optional<ExpressionSpec> k_expression;  ///< per-pair stiffness, when `k` is a formula
  std::optional<double> length;  ///< natural length L; unset = each edge's initial length
};

/// [forces.repulsion]: R Σ (x_i - x_j)/|x_i - x_j|³, all pairs. How it is summed (the evaluator,
/// θ, the multipole) is declared by the force library (integrators/forces/repulsion.hpp), which
/// documents each field.
struct RepulsionSpec {
  double strength = 0;   ///< R
  double softening = 0;  ///< ε in (|d|² + ε²)^{3/2}; 0 = the paper's exact law
  integrators::Evaluator evaluator = integrators::Evaluator::Auto;  ///< one of kUserEvaluators
  double theta = 0.5;    ///< Barnes–Hut opening angle θ (dimensionless); 0 opens every cell
  integrators::Multipole multipole = integrators::Multipole::Monopole;
};

/// [forces.communication]: attraction along each pair that communicated in the interval.
struct CommunicationSpec {
  CommunicationMode mode = CommunicationMode::Sender;
  CommunicationQuantity quantity = CommunicationQuantity::Bytes;
  double gain = 1.0;
  bool normalize = true;  ///< divide by the largest per-pair rate in the whole trace
  std::optional<ExpressionSpec> weight;  ///< per-pair pull magnitude; overrides gain/normalize
};

/// [forces.friction]: -β v, a damping rate independent of mass (as in the paper's equations).
struct FrictionSpec {
  double beta = 0;
};

/// [forces.centre]: -c (x_i - centroid of the initial placement), an optional weak pull.
struct CentreSpec {
  double strength = 0;
};

/// [trace]: which trace entities become bodies, what their states mean, and the readers' options.
struct TraceSpec {
  std::string format = "auto";     ///< reader name, "auto" = detected from content
  std::string entity_type;         ///< Pajé: container type whose containers are entities; Paraver: task/thread
  /// What gives load samples: Pajé variable type, Chrome counter, OTF2 metric member, Paraver
  /// event type (a number, kept as its decimal text).
  std::string load_variable;
  std::string message_bytes;       ///< Chrome: the `args` key whose number is a message's bytes
  /// [pattern, replacement]: where the pattern is found in an entity's name, the name becomes the
  /// replacement with $1 … $9, $& and $$ taken from that match (src/mapping/pattern.hpp: RE2
  /// syntax). Empty: names as the trace gives.
  std::array<std::string, 2> rename;
  /// [pattern, replacement]: the same from the (original) name, giving the entity's host; entities
  /// whose name does not match keep the trace's host. Empty: hosts as the trace gives.
  std::array<std::string, 2> host_from_name;
  std::string select;              ///< RE2 pattern: only entities whose name matches become bodies
  std::string exclude;             ///< RE2 pattern: entities whose name matches are left out
  GroupBy group_by = GroupBy::Entity;
  std::map<std::string, std::string> groups;  ///< child name → parent name
  int level = 1;                   ///< GroupBy::Table: steps up the groups table
  std::vector<std::string> communicating;  ///< states (names or globs) that count as communicating
  std::vector<std::string> idle;           ///< states (names or globs) that count as idle
  bool computing_given = false;    ///< `computing` set the busy states (else the format's default)
  bool communicating_given = false;  ///< `communicating` was written (else the format's default)
  bool idle_given = false;           ///< `idle` was written (else the format's default)
  /// The time window [from, to) in trace seconds: only what happens in it is simulated, and the
  /// interval and calibration follow it. Unset: from the start / to the end.
  std::optional<double> from_s;
  std::optional<double> to_s;
  /// SimGrid time-independent replay rates (SimgridTiOptions): flop/s, bytes/s, seconds per
  /// transfer. Unset: the reader's defaults.
  std::optional<double> flop_rate;
  std::optional<double> bandwidth;
  std::optional<double> latency_s;
};

/// Colour maps for body colours. The first two are colour-blind safe.
enum class ColourMap { Cividis, Viridis, Magma, Grey, Categorical };
/// What label each body shows.
enum class LabelKind { None, Name, Rank, Host, Index };

/// [visual]: how the scene draws bodies. Everything optional; the scene reads this struct.
struct VisualSpec {
  ColourMap colour_map = ColourMap::Cividis;
  std::optional<ExpressionSpec> colour;  ///< body-scope value mapped through the colour map; unset = load
  std::optional<std::array<double, 2>> colour_range;  ///< value range mapped to [0, 1]; unset = auto
  std::optional<ExpressionSpec> scale;   ///< body-scope radius scale (1 = [bodies] radius)
  std::filesystem::path texture;         ///< resolved path (relative to the mapping), empty = none
  LabelKind labels = LabelKind::Name;
  double trails_s = 0;                   ///< trail length in trace seconds, 0 = no trails
  /// Companion views `kanoko view` opens beside the scene (docs/views.md), when the command line
  /// names none; checked against the view registry by the viewer.
  std::vector<std::string> views;
};

/// One entry of [locations]: a name for the time the program spends at some code locations
/// (call sites), which formulas and sound cues read (docs/mapping-language.md, "Code locations").
/// A location counts when every part given matches: `site` and the patterns are RE2, searched.
/// Names [locations] may hold (profile::LocatedTime's limit).
inline constexpr std::size_t kMaxCodeLocations = 64;
struct CodeLocationSpec {
  std::string name;
  std::string site;      ///< searched in the call site's label "file:line function" (`kanoko profile`'s rows)
  std::string file;      ///< searched in the file name
  std::string function;  ///< searched in the function name
  std::int64_t line = 0; ///< the line; 0 any
  FileLoc where;         ///< the entry in the mapping

  /// The body variables (and run statistics) it defines: the seconds of the current interval at
  /// its locations in computing, communicating and waiting states.
  [[nodiscard]] std::array<std::string, 3> variables() const {
    return {name + "_computing", name + "_communicating", name + "_waiting"};
  }
};

/// A parsed, validated mapping file.
struct Mapping {
  std::string path;  ///< file it came from ("" for text)
  std::string text;  ///< its full text (hashed into the trajectory cache key)
  SimulationSpec simulation;
  BodiesSpec bodies;
  MassSpec mass;
  SpringSpec springs;
  std::optional<RepulsionSpec> repulsion;
  std::optional<CommunicationSpec> communication;
  std::optional<FrictionSpec> friction;
  std::optional<CentreSpec> centre;
  AudioSpec audio;  ///< [audio]: sound cues (src/mapping/audio_section.hpp)
  TraceSpec trace;    ///< [trace]: which entities become bodies
  VisualSpec visual;  ///< [visual]: colours, labels, trails
  /// [locations]: named code locations, in the file's order (their variables follow the body
  /// variables in that order, CodeLocationSpec::variables).
  std::vector<CodeLocationSpec> code_locations;
  /// Location of each key that was given, by dotted path ("bodies.lattice"), so that errors found
  /// later (a lattice that does not fit the trace) can point into the file.
  std::map<std::string, FileLoc> locations;
  /// Every key the parser looked up, by dotted path ("forces.friction.beta"), whether given or
  /// not: the language's vocabulary, used to check docs/mapping-language.md against the parser.
  std::set<std::string> known_keys;

  /// Location of a key; for a key not given, where it was expected: the closest enclosing table
  /// given ("forces" for "forces.friction.beta"), else line 1 column 1.
  [[nodiscard]] FileLoc where(const std::string& key) const;
};

/// Parses and validates a mapping file. Throws InputError listing every problem.
Mapping parse_mapping_file(const std::filesystem::path& path);
/// The same for text in memory; `name` is used in locations.
Mapping parse_mapping_text(const std::string& text, const std::string& name);

/// Names used in mapping files, for docs and suggestions.
const char* to_string(Placement p);
const char* to_string(SpringTopology t);
const char* to_string(BodyOrder o);
const char* to_string(ColourMap c);
/// The body variables [locations] defines, three per name in the file's order.
std::vector<std::string> location_variables(const Mapping& m);
/// The pair variables it defines: each body variable of the sender (src_NAME_waiting) and of the
/// receiver (dst_NAME_waiting), in that order.
std::vector<std::string> pair_location_variables(const Mapping& m);
/// Every expression of the mapping (for checks and reports).
std::vector<const ExpressionSpec*> expressions(const Mapping& m);
/// Colour of `t` in [0, 1] (clamped) under a colour map, as RGB in [0, 1].
std::array<float, 3> colour_at(ColourMap map, double t);

}  // namespace kanoko::mapping
