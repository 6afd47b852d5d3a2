#include "src/share/serve.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/trajectory/traffic.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::share {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kFooterBytes = 48;

/// The header fields that place the blocks (docs/trajectory-format.md).
struct Layout {
  std::uint64_t block_frames = 0;
  std::uint64_t frames_offset = 0;
  std::uint64_t frame_stride = 0;
  [[nodiscard]] std::uint64_t block_stride() const { return block_frames * frame_stride + kFooterBytes; }
};

Layout read_layout(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char h[48] = {};
  if (!in.read(reinterpret_cast<char*>(h), sizeof h)) {
    throw InputError(FileLoc{path.string()}, "cannot read the run's header");
  }
  const auto u32 = [&](int at) {
    std::uint32_t v = 0;
    std::memcpy(&v, h + at, 4);
    return v;
  };
  const auto u64 = [&](int at) {
    std::uint64_t v = 0;
    std::memcpy(&v, h + at, 8);
    return v;
  };
  return Layout{u32(24), u64(32), u64(40)};
}

/// The query parameter `name` as a finite number, or nothing (a 400 with the reason is set).
std::optional<double> number_param(const httplib::Request& req, httplib::Response& res, const char* name) {
  const std::string text = req.get_param_value(name);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    res.status = 400;
    res.set_content("kanoko serve: " + req.path + " wants " + name + "=<number>, got '" + text + "'\n", "text/plain");
    return std::nullopt;
  }
  return v;
}

std::string json_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// The binning interval of trace time t: {"interval":b,"from":…,"to":…} fields (from is null for
/// interval 0, which also holds the times before the trace's start).
std::string interval_fields(const trajectory::Metadata& meta, std::size_t bin) {
  const double from = meta.trace_begin_s + static_cast<double>(bin) * meta.interval_s;
  return "\"interval\":" + std::to_string(bin) + ",\"from\":" + (bin == 0 ? std::string("null") : json_number(from)) +
         ",\"to\":" + json_number(from + meta.interval_s);
}

}  // namespace

fs::path run_being_served(const fs::path& run) {
  if (fs::exists(run)) return run;
  std::optional<fs::path> newest;
  fs::file_time_type newest_time{};
  std::error_code ec;
  const fs::path folder = run.has_parent_path() ? run.parent_path() : fs::path(".");
  const std::string prefix = run.filename().string() + ".tmp-";
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (!entry.is_regular_file(ec) || !entry.path().filename().string().starts_with(prefix)) continue;
    const auto t = entry.last_write_time(ec);
    if (!newest || t > newest_time) {
      newest = entry.path();
      newest_time = t;
    }
  }
  if (!newest) throw InputError(FileLoc{run.string()}, "no such run, and no run being simulated into it");
  return *newest;
}

struct RunServer::Impl {
  fs::path run;
  ServeOptions options;
  httplib::Server http;
  int port = 0;
  std::string page;

  std::mutex mutex;  // guards everything below
  fs::path path;     // the file read: run, or its temporary file while it is simulated
  std::optional<trajectory::Reader> reader;
  Layout layout;
  std::uint64_t verified_blocks = 0;
  bool damaged = false;
  bool deleted = false;
  // The sound cues of the frames served so far (share::page_cues), recomputed when they change.
  std::optional<mapping::AudioSpec> audio;  // none: the run's sound settings cannot be read
  std::string cues = cues_json({});
  std::uint64_t cues_frames = 0;
  bool cues_complete = false;

  void open(const fs::path& p) {
    reader.emplace(p, trajectory::Open::partial);
    if (reader->version() < 2) {
      throw InputError(FileLoc{p.string()}, "kanoko serve reads trajectory formats 2 and 3 (re-simulate this format 1 run)");
    }
    layout = read_layout(p);
    path = p;
    verified_blocks = 0;
  }

  /// Bytes of the run that may be served now: the header, the sections and the blocks that
  /// verify, all of a complete run. 0 when the run is gone. Called with the mutex held.
  std::uint64_t servable() {
    if (!fs::exists(path)) {
      // The temporary file is renamed into place when the run is complete.
      if (path != run && fs::exists(run)) {
        open(run);
      } else {
        if (!deleted) std::cerr << "kanoko serve: " << path.string() << " was deleted; nothing is served any more\n";
        deleted = true;
        return 0;
      }
    }
    if (!damaged) {
      try {
        reader->refresh();
      } catch (const InputError& e) {
        std::cerr << "kanoko serve: " << e.what() << " (serving the blocks before it)\n";
        damaged = true;
      }
    }
    const std::uint64_t frames = reader->frame_count();
    const std::uint64_t blocks = (frames + layout.block_frames - 1) / layout.block_frames;
    while (!damaged && verified_blocks < blocks) {
      if (!reader->frame_readable(verified_blocks * layout.block_frames)) {
        std::cerr << "kanoko serve: " << path.string() << ": block " << verified_blocks
                  << " is damaged (serving the blocks before it; re-simulate to repair it)\n";
        damaged = true;
        break;
      }
      ++verified_blocks;
    }
    if (reader->complete() && !damaged && verified_blocks == blocks) return fs::file_size(path);
    return layout.frames_offset + verified_blocks * layout.block_stride();
  }

  /// The cues of the frames that may be served now (those known so far when the run cannot be
  /// read now). Called with the mutex held.
  const std::string& current_cues() {
    try {
      update_cues();
    } catch (const std::exception& e) {
      std::cerr << "kanoko serve: " << e.what() << '\n';
    }
    return cues;
  }
  void update_cues() {
    if (servable() == 0 || !audio) return;
    const std::uint64_t frames = reader->complete() && !damaged
                                     ? reader->frame_count()
                                     : std::min<std::uint64_t>(reader->frame_count(), verified_blocks * layout.block_frames);
    if (frames == cues_frames && reader->complete() == cues_complete) return;
    if (frames < reader->frame_count()) return;  // a damaged block: the cues before it stay
    try {
      cues = cues_json(page_cues(*reader, *audio, reader->begin_time(), reader->end_time(), frames));
    } catch (const InputError& e) {
      std::cerr << "kanoko serve: no sound cues: " << e.what() << '\n';
      audio.reset();
    }
    cues_frames = frames;
    cues_complete = reader->complete();
  }

  void routes() {
    http.Get("/", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(page, "text/html; charset=utf-8");
    });
    http.Get("/run.kntj", [this](const httplib::Request& req, httplib::Response& res) {
      std::uint64_t size = 0;
      fs::path file;
      {
        std::lock_guard lock(mutex);
        try {
          size = servable();
        } catch (const std::exception& e) {
          std::cerr << "kanoko serve: " << e.what() << '\n';
          size = 0;
        }
        file = path;
      }
      if (size == 0) {
        res.status = 410;
        res.set_content("kanoko serve: the run " + run.string() + " is gone (deleted)\n", "text/plain");
        return;
      }
      // One range inside the run, else 416 (httplib would answer a range past the end with garbage).
      const auto bad_range = [&](const std::string& why) {
        res.status = 416;
        res.set_header("Content-Range", "bytes */" + std::to_string(size));
        res.set_content("kanoko serve: bad byte range '" + req.get_header_value("Range") + "': " + why + '\n',
                        "text/plain");
      };
      if (req.ranges.size() > 1) return bad_range("one range per request");
      if (req.ranges.size() == 1) {
        const auto [first, last] = req.ranges.front();
        const auto n = static_cast<std::int64_t>(size);
        if (first < 0 && last <= 0) return bad_range("empty suffix");
        if (first >= n || (last >= 0 && first >= 0 && last < first)) {
          return bad_range("the run has " + std::to_string(size) + " bytes now");
        }
      }
      res.set_header("Cache-Control", "no-store");
      res.set_content_provider(
          static_cast<std::size_t>(size), "application/octet-stream",
          [file](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
            std::ifstream in(file, std::ios::binary);
            if (!in.seekg(static_cast<std::streamoff>(offset))) return false;
            std::vector<char> buf(std::min<std::size_t>(length, 1U << 20));
            while (length > 0) {
              const std::size_t n = std::min(length, buf.size());
              if (!in.read(buf.data(), static_cast<std::streamsize>(n))) return false;
              if (!sink.write(buf.data(), n)) return false;
              length -= n;
            }
            return true;
          });
    });
    http.Get("/cues.json", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mutex);
      res.set_header("Cache-Control", "no-store");
      res.set_content(current_cues(), "application/json");
    });
    // The traffic of the interval of ?t= (trajectory::IntervalTraffic): each spring's bytes and the
    // busiest spring's, as the shared page stores them.
    http.Get("/traffic.json", [this](const httplib::Request& req, httplib::Response& res) {
      const auto t = number_param(req, res, "t");
      if (!t) return;
      std::lock_guard lock(mutex);
      const trajectory::Metadata& meta = reader->meta();
      const std::size_t bin = meta.interval_of(*t);
      trajectory::IntervalTraffic traffic(meta);
      traffic.set_interval(bin);
      std::string bytes;
      for (const double b : traffic.spring_bytes()) bytes += (bytes.empty() ? "" : ",") + json_number(b);
      res.set_header("Cache-Control", "no-store");
      res.set_content("{" + interval_fields(meta, bin) + ",\"spring_bytes\":[" + bytes +
                          "],\"max\":" + json_number(traffic.max_spring_bytes()) + "}",
                      "application/json");
    });
    // Body ?body='s top partners so far at ?t= (trajectory::PartnerTotals, as the desktop panel).
    http.Get("/partners.json", [this](const httplib::Request& req, httplib::Response& res) {
      const auto t = number_param(req, res, "t");
      const auto body = t ? number_param(req, res, "body") : std::nullopt;
      if (!body) return;
      std::lock_guard lock(mutex);
      const trajectory::Metadata& meta = reader->meta();
      if (!(*body >= 0 && *body < static_cast<double>(meta.body_count()) && std::floor(*body) == *body)) {
        res.status = 400;
        res.set_content("kanoko serve: no body " + req.get_param_value("body") + " (the run has " +
                            std::to_string(meta.body_count()) + ")\n",
                        "text/plain");
        return;
      }
      const std::size_t bin = meta.interval_of(*t);
      trajectory::PartnerTotals totals;
      std::string list;
      for (const trajectory::Partner& p : totals.top(meta, static_cast<std::uint32_t>(*body), bin, kTopPartners)) {
        list += std::string(list.empty() ? "" : ",") + "{\"body\":" + std::to_string(p.body) +
                ",\"sent\":" + json_number(p.sent.bytes) + ",\"received\":" + json_number(p.received.bytes) + "}";
      }
      res.set_header("Cache-Control", "no-store");
      res.set_content("{" + interval_fields(meta, bin) + ",\"partners\":[" + list + "]}", "application/json");
    });
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (res.status == 404) {
        res.set_content("kanoko serve: " + req.path + " is not served: only / (the page), /run.kntj (the run), /cues.json (its sound cues), /traffic.json and /partners.json (its traffic)\n",
                        "text/plain");
      } else if (res.status == 416) {
        res.set_content("kanoko serve: bad byte range '" + req.get_header_value("Range") + "'\n", "text/plain");
      }
    });
  }
};

RunServer::RunServer(fs::path run, const ServeOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.run = std::move(run);
  s.options = options;
  s.open(run_being_served(s.run));
  PageOptions page = options.page;
  page.stream_url = "/run.kntj";
  page.cues_url = "/cues.json";
  page.traffic_url = "/traffic.json";
  page.partners_url = "/partners.json";
  page.max_bytes = std::numeric_limits<std::uint64_t>::max();
  const PageData data = collect_stream_data(*s.reader, s.run.string());
  if (!data.sound_problem.empty()) {
    std::cerr << "kanoko serve: warning: the run's sound settings cannot be read (default voices): "
              << data.sound_problem << '\n';
  } else {
    s.audio = data.audio;
  }
  s.page = build_page(*s.reader, data, page, s.run.string());
  s.routes();
  // httplib's default socket options add SO_REUSEPORT, with which a second server could bind a
  // port already in use: only SO_REUSEADDR (restarts right after a stop).
  s.http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  const bool bound = options.port == 0 ? (s.port = s.http.bind_to_any_port(options.bind)) > 0
                                       : s.http.bind_to_port(options.bind, options.port);
  if (!bound) {
    throw InputError(FileLoc{"--port"}, "cannot listen on " + options.bind + " port " + std::to_string(options.port) +
                                            ": the port is in use or the address is not one of this machine's; "
                                            "choose another with --port (or --bind)");
  }
  if (options.port != 0) s.port = options.port;
}

RunServer::~RunServer() = default;

int RunServer::port() const { return impl_->port; }

void RunServer::serve() {
  std::atomic<bool> done = false;
  std::thread watcher([&] {
    while (!done) {
      if (interrupt_requested()) {
        impl_->http.stop();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  impl_->http.listen_after_bind();
  done = true;
  watcher.join();
  check_interrupt();
}

void RunServer::stop() { impl_->http.stop(); }

}  // namespace kanoko::share
