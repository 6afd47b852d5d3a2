#include <charconv>
#include <iostream>

#include "src/base/atomic_file.hpp"
#include "src/base/output_target.hpp"
#include "src/cli/options.hpp"
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

}  // namespace

int cmd_export(const Args& args) {
  const CommandSpec spec{
      "export", "RUN.kntj -o FILE.csv",
      "Writes a trajectory as CSV, one row per frame and body: time, body index and name, position,\n"
      "velocity and every per-body statistic stored in the file (load, mass, traffic of the current\n"
      "interval and running totals). Numbers are written exactly (shortest round-trip form).",
      "  kanoko export ring.kntj -o ring.csv\n"};
  po::options_description options("Options");
  std::string run, output;
  options.add_options()("run", po::value(&run)->required(), "trajectory file (.kntj)")(
      "output,o", po::value(&output)->required(), "CSV file to write");
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  note_command_input(run);
  const trajectory::Reader reader(run);
  const auto& meta = reader.meta();
  AtomicOutputFile out(output);
  std::string buf = "time_s,body,name,x,y,z,vx,vy,vz";
  for (const auto& s : meta.stat_names) buf += "," + csv_field(s);
  buf += '\n';
  std::vector<std::string> names;
  for (const auto& b : meta.bodies) names.push_back(csv_field(b.name));
  for (std::size_t k = 0; k < reader.frame_count(); ++k) {
    const trajectory::FrameView f = reader.frame(k);
    for (Eigen::Index i = 0; i < f.positions.cols(); ++i) {
      append_number(buf, f.time_s);
      buf += ',' + std::to_string(i) + ',' + names[static_cast<std::size_t>(i)];
      for (int c = 0; c < 3; ++c) append_number(buf += ',', f.positions(c, i));
      for (int c = 0; c < 3; ++c) append_number(buf += ',', f.velocities(c, i));
      for (Eigen::Index s = 0; s < f.stats.rows(); ++s) append_number(buf += ',', f.stats(s, i));
      buf += '\n';
    }
    if (buf.size() > (1U << 20)) {
      out.write(buf);
      buf.clear();
    }
  }
  out.write(buf);
  out.commit();
  std::cerr << "kanoko export: wrote " << output << " (" << reader.frame_count() << " frames × " << meta.body_count()
            << " bodies)\n";
  return 0;
}

}  // namespace kanoko::cli
