#include <cmath>
#include <iostream>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/output_target.hpp"
#include "src/cli/options.hpp"
#include "src/share/share.hpp"
#include "src/sim/budget.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::cli {
namespace {

std::optional<bool> on_off(const std::string& text, const char* option) {
  if (text.empty()) return std::nullopt;
  if (text == "on") return true;
  if (text == "off") return false;
  throw InputError(FileLoc{option}, "expected on or off, got '" + text + "'");
}

}  // namespace

int cmd_share(const Args& args) {
  const CommandSpec spec{
      "share", "RUN.kntj -o PAGE.html [--fps N] [--from S] [--to S] [--max-size 25M]",
      "Writes one self-contained HTML page that plays the run in any current browser, offline (from\n"
      "a file or an e-mail attachment): the bodies, springs (coloured by tension or traffic) and\n"
      "labels in 3-D with orbit and fly navigation, the clock dial, a scrub bar with\n"
      "play/pause/speed, click-to-inspect with the desktop viewer's statistics and top partners,\n"
      "legends, and the sound cues spatialised with Web Audio (a panner per body, HRTF, pitch\n"
      "following the radial velocity). three.js comes from Debian's libjs-three and is inlined;\n"
      "nothing is fetched when the page opens. Positions are stored as 16-bit values in the\n"
      "bounding box of the shown frames (error <= box/65535) and frames are decimated: the page\n"
      "plays the range in 20 s at 1x, with --fps frames per second of that. A page over\n"
      "--max-size is refused with what to change. Details: docs/share.md.",
      "  kanoko share ring.kntj -o ring.html\n"
      "  kanoko share big.kntj -o big.html --fps 10 --from 0 --to 2 --max-size 50M\n"};
  po::options_description options("Options");
  std::string run, output, max_size = "25M", hrtf, doppler;
  share::PageOptions page;
  options.add_options()("run", po::value(&run)->required(), "trajectory file (.kntj)")(
      "output,o", po::value(&output)->required(), "HTML page to write")(
      "fps", po::value<double>(&page.fps)->default_value(share::kDefaultFps),
      "frames stored per second of playback at 1x (the range plays in 20 s)")(
      "from", po::value<double>(), "first trace time shown, in seconds (default: start of the run)")(
      "to", po::value<double>(), "last trace time shown, in seconds (default: end of the run)")(
      "max-size", po::value(&max_size)->default_value("25M"),
      "size budget of the page (e.g. 25M, 800k); a page over it is refused")(
      "labels", po::value<std::size_t>(&page.max_labels)->default_value(page.max_labels),
      "draw name labels when the run has at most this many bodies")(
      "hrtf", po::value(&hrtf), "on or off: binaural (HRTF) panning when the page opens (default: the "
      "run's [audio] hrtf; off only when it says off)")(
      "doppler", po::value(&doppler), "on or off: pitch follows radial velocity when the page opens "
      "(default: the run's [audio] doppler)");
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;
  if (!(std::isfinite(page.fps) && page.fps > 0)) {
    throw InputError(FileLoc{"--fps"}, "expected a positive number of frames per second, got " + std::to_string(page.fps));
  }
  if (vm.count("from") != 0U) page.from_s = vm["from"].as<double>();
  if (vm.count("to") != 0U) page.to_s = vm["to"].as<double>();
  page.max_bytes = sim::parse_size(max_size, "--max-size");
  page.hrtf = on_off(hrtf, "--hrtf");
  page.doppler = on_off(doppler, "--doppler");
  page.title = std::filesystem::path(run).filename().string();

  note_command_input(run);
  (void)checked_output_target(output);  // a bad output fails before the run is read
  const trajectory::Reader reader(run);
  const share::PageData data = share::collect_page_data(reader, run, page);
  if (!data.sound_problem.empty()) {
    std::cerr << "kanoko share: warning: the page has no sound cues: " << data.sound_problem << '\n';
  }
  std::string left_out;
  const std::string html = share::build_page(reader, data, page, run, &left_out);
  if (!left_out.empty()) std::cerr << "kanoko share: warning: " << left_out << '\n';
  AtomicOutputFile out(output);
  out.write(html);
  out.commit();
  std::cerr << "kanoko share: wrote " << output << " (" << sim::format_bytes(html.size()) << " of the "
            << sim::format_bytes(page.max_bytes) << " budget; " << data.times.size() << " frames x "
            << reader.meta().body_count() << " bodies, " << data.stat_times.size() << " statistics key frames, "
            << data.cues.size() << " sound cues)\n";
  return 0;
}

}  // namespace kanoko::cli
