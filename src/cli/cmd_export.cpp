#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iostream>

#include "src/base/atomic_file.hpp"
#include "src/base/output_target.hpp"
#include "src/cli/options.hpp"
#include "src/export/gltf.hpp"
#include "src/sim/budget.hpp"
#include "src/trajectory/hierarchy.hpp"
#include "src/trajectory/panel_values.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::cli {
namespace {

void append_number(std::string& out, double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

// The glTF export (src/export/gltf.hpp): keyframes, size bounded before anything is written.
int export_gltf(const trajectory::Reader& reader, const std::string& run, const std::string& output,
                const po::variables_map& vm) {
  exporting::GltfOptions options;
  if (vm.count("fps") != 0U) {
    options.fps = vm["fps"].as<double>();
    if (!(options.fps > 0) || !std::isfinite(options.fps)) {
      throw InputError(FileLoc{"--fps"}, "--fps must be a positive number of keyframes per second");
    }
  }
  const sim::Budget budget = sim::default_budget(output);
  std::uint64_t limit = budget.max_output_bytes;
  std::string reason = "the default limit: " + budget.output_reason;
  if (vm.count("max-output") != 0U) {
    limit = sim::parse_size(vm["max-output"].as<std::string>(), "--max-output");
    reason = "--max-output";
  }
  const std::vector<std::size_t> keyframes = exporting::gltf_keyframes(reader, options.fps);
  const std::uint64_t bytes = exporting::gltf_size(reader, keyframes);
  if (bytes > limit) {
    throw InputError(FileLoc{run}, "the glTF would take " + sim::format_bytes(bytes) + " (" +
                                       std::to_string(keyframes.size()) + " keyframes of " +
                                       std::to_string(reader.meta().body_count()) + " bodies), more than " +
                                       sim::format_bytes(limit) + " (" + reason +
                                       "): keep fewer keyframes with --fps or raise --max-output");
  }
  const exporting::GltfSummary s = exporting::write_gltf(reader, run, options, output);
  std::cerr << "kanoko export: wrote " << output << " (glTF binary, " << sim::format_bytes(s.bytes) << ": "
            << s.bodies << " bodies, " << s.keyframes << " keyframes of " << reader.frame_count()
            << " frames, " << s.springs << " springs)\n";
  if (!s.note.empty()) std::cerr << "kanoko export: note: " << s.note << '\n';
  return 0;
}

bool ends_with_glb(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name.size() >= 4 && name.compare(name.size() - 4, 4, ".glb") == 0;
}

}  // namespace

int cmd_export(const Args& args) {
  const CommandSpec spec{
      "export", "RUN.kntj -o FILE.csv | RUN.kntj --gltf -o FILE.glb [--fps N] [--max-output SIZE]",
      "Writes a trajectory as CSV, one row per frame and body: time, body index and name, position,\n"
      "velocity and every per-body statistic stored in the file (load, mass, traffic of the current\n"
      "interval and running totals), each column named with its unit (busy_fraction, bytes_sent_B),\n"
      "and no_state_fraction, the interval's rest after computing, communicating and waiting\n"
      "(docs/statistics.md). Numbers are written exactly (shortest round-trip form).\n"
      "With --level host, one row per frame and host instead: the host's ranks aggregated, at\n"
      "their centroid with their mean velocity, the busy, communicating and idle fractions\n"
      "averaged and every other statistic summed, and a members column (docs/outputs.md).\n\n"
      "With --gltf (or an output named .glb) it writes a glTF 2.0 binary for 3-D tools (Blender,\n"
      "three.js, ...): one node per body named as the body and sized as the viewer draws it, a\n"
      "shared sphere mesh with the body's colour, the motion as an animation (a translation channel\n"
      "per body, and a scale channel when masses change the sizes; linear, in seconds from the\n"
      "first frame) and the springs as lines skinned to the bodies so they follow them. The\n"
      "size is computed first and a file beyond --max-output is refused; --fps keeps fewer\n"
      "keyframes. Layout: docs/outputs.md.",
      "  kanoko export ring.kntj -o ring.csv\n"
      "  kanoko export halo.kntj --level host -o hosts.csv\n"
      "  kanoko export ring.kntj --gltf -o ring.glb\n"
      "  kanoko export mesh.kntj -o mesh.glb --fps 30 --max-output 200M\n"};
  po::options_description options("Options");
  std::string run, output;
  std::string level;
  bool gltf = false;
  options.add_options()("run", po::value(&run)->required(), "trajectory file (.kntj)")(
      "output,o", po::value(&output)->required(), "file to write: CSV, or glTF binary with --gltf or a .glb name")(
      "gltf", po::bool_switch(&gltf), "write a glTF 2.0 binary (.glb) instead of CSV")(
      "level", po::value(&level),
      "CSV: aggregate the bodies to this level of the run's hierarchy: rank (the default), host, the "
      "trace's container levels (zone, ...) or cluster where the host names make one (kanoko info RUN "
      "lists the levels)")(
      "fps", po::value<double>(), "glTF: keyframes per second of the run (default: every stored frame)")(
      "max-output", po::value<std::string>(),
      "glTF: largest file to write, e.g. 512M (default: min(free space - 1 GiB, 16 GiB))");
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  gltf = gltf || ends_with_glb(output);
  if (gltf && !level.empty()) {
    throw InputError(FileLoc{"--level"}, "--level applies to the CSV export, not to --gltf");
  }
  if (!gltf) {
    for (const char* name : {"fps", "max-output"}) {
      if (vm.count(name) != 0U) {
        throw InputError(FileLoc{std::string("--") + name},
                         "--" + std::string(name) + " applies to the glTF export: add --gltf or name the output .glb");
      }
    }
  }
  note_command_input(run);
  const trajectory::Reader reader(run);
  if (gltf) return export_gltf(reader, run, output, vm);
  const auto& meta = reader.meta();
  // The level to aggregate to (rank: every body as it is), checked before the output is opened.
  const trajectory::Hierarchy hierarchy(meta);
  const std::size_t at = level.empty() ? 0 : hierarchy.level_index(level, "--level");
  const trajectory::Cut cut(hierarchy, at);
  AtomicOutputFile out(output);
  std::string buf = "time_s,body,name,x,y,z,vx,vy,vz";
  // Each statistic's unit in its column name (busy_fraction, bytes_sent_B), and the interval's
  // no-state rest after the fractions (docs/statistics.md).
  for (const auto& s : meta.stat_names) {
    const std::string_view unit = trajectory::stat_unit(s);
    buf += "," + csv_field(unit.empty() ? s : s + "_" + std::string(unit));
  }
  const bool split = meta.stat_index(trajectory::stat::kBusy) >= 0 && meta.stat_index(trajectory::stat::kIdle) >= 0 &&
                     meta.stat_index(trajectory::stat::kCommunicating) >= 0;
  if (split) buf += ",no_state_fraction";
  if (at > 0) buf += ",members";
  buf += '\n';
  std::vector<std::string> names;
  for (std::size_t g = 0; g < hierarchy.group_count(at); ++g) names.push_back(csv_field(hierarchy.group_name(at, g)));
  trajectory::AggregateFrame agg;
  for (std::size_t k = 0; k < reader.frame_count(); ++k) {
    const trajectory::FrameView f = reader.frame(k);
    if (at > 0) trajectory::aggregate(cut, meta, f, agg);
    // The frame's own columns, or the aggregates' (no copy either way).
    using Ref3 = Eigen::Ref<const Eigen::Matrix3Xd>;
    using RefS = Eigen::Ref<const Eigen::MatrixXd>;
    const Ref3 positions = at > 0 ? Ref3(agg.positions) : Ref3(f.positions);
    const Ref3 velocities = at > 0 ? Ref3(agg.velocities) : Ref3(f.velocities);
    const RefS stats = at > 0 ? RefS(agg.stats) : RefS(f.stats);
    for (Eigen::Index i = 0; i < positions.cols(); ++i) {
      const auto item = static_cast<std::size_t>(i);
      append_number(buf, f.time_s);
      buf += ',' + std::to_string(i) + ',' + names[at > 0 ? cut.items()[item].group : item];
      for (int c = 0; c < 3; ++c) append_number(buf += ',', positions(c, i));
      for (int c = 0; c < 3; ++c) append_number(buf += ',', velocities(c, i));
      for (Eigen::Index s = 0; s < stats.rows(); ++s) append_number(buf += ',', stats(s, i));
      if (split) {
        // Settling frames (after the trace) have no interval: every fraction is 0 there.
        const auto s = trajectory::interval_split(meta, f.time_s, stats, item);
        append_number(buf += ',', s ? s->no_state_s : 0.0);
      }
      if (at > 0) buf += ',' + std::to_string(cut.bodies(item).size());
      buf += '\n';
    }
    if (buf.size() > (1U << 20)) {
      out.write(buf);
      buf.clear();
    }
  }
  out.write(buf);
  out.commit();
  std::cerr << "kanoko export: wrote " << output << " (" << reader.frame_count() << " frames × "
            << cut.items().size() << (at > 0 ? " " + hierarchy.level_name(at) + "s of " + std::to_string(meta.body_count()) + " bodies)\n" : " bodies)\n");
  return 0;
}

}  // namespace kanoko::cli
