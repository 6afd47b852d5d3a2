#include "src/trace/chrome_reader.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/trace/decompress.hpp"
#include "src/trace/locations.hpp"
#include "src/trace/text_input.hpp"

namespace kanoko::trace {
namespace {

constexpr std::size_t kChunkBytes = 1 << 20;
constexpr std::size_t kMaxNesting = 1000;
constexpr std::size_t kMaxSeries = 1000;  ///< counter series kept per C event

/// Where the bytes come from: a file read in chunks, or text in memory.
class ChromeSource {
 public:
  virtual ~ChromeSource() = default;
  /// The next chunk; empty at the end of the input.
  virtual std::string_view next() = 0;
};

class ChromeTextSource final : public ChromeSource {
 public:
  explicit ChromeTextSource(std::string_view text) : text_(text) {}
  std::string_view next() override { return std::exchange(text_, std::string_view{}); }

 private:
  std::string_view text_;
};

/// A file read in chunks, decompressed when it is gzip, xz or zstd.
class ChromeFileSource final : public ChromeSource {
 public:
  explicit ChromeFileSource(const std::filesystem::path& path) : input_(path), buffer_(kChunkBytes) {}

  std::string_view next() override {
    if (++chunks_ % 64 == 0) check_interrupt();
    return {buffer_.data(), input_.read(buffer_.data(), buffer_.size())};
  }

 private:
  DecompressedInput input_;
  std::vector<char> buffer_;
  std::size_t chunks_ = 0;
};

/// A rapidjson input stream over a ChromeSource that knows the line and column of every byte.
class JsonStream {
 public:
  using Ch = char;
  explicit JsonStream(ChromeSource& source) : source_(source) {
    refill();
    if (size_ >= 3 && std::string_view(data_, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a UTF-8 byte order mark
  }

  [[nodiscard]] Ch Peek() const { return pos_ < size_ ? data_[pos_] : '\0'; }
  Ch Take() {
    if (pos_ >= size_) [[unlikely]] return '\0';
    const char c = data_[pos_++];
    if (c == '\n') {
      ++line_;
      line_start_ = base_ + pos_;
    }
    if (pos_ >= size_) [[unlikely]] refill();
    return c;
  }
  [[nodiscard]] std::size_t Tell() const { return base_ + pos_; }
  // Output is not supported (rapidjson asks for these names).
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }

  [[nodiscard]] bool at_end() const { return pos_ >= size_; }
  [[nodiscard]] std::int64_t line() const { return line_; }
  [[nodiscard]] std::int64_t column() const { return static_cast<std::int64_t>(Tell() - line_start_) + 1; }

 private:
  void refill() {
    base_ += size_;
    const std::string_view chunk = source_.next();
    data_ = chunk.data();
    size_ = chunk.size();
    pos_ = 0;
  }
  ChromeSource& source_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t pos_ = 0;
  std::size_t base_ = 0;        ///< offset of data_[0] in the input
  std::size_t line_start_ = 0;  ///< offset of the first byte of the current line
  std::int64_t line_ = 1;
};

bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(out);
}

/// Everything of one event that Kanoko reads; reused from event to event.
struct Event {
  std::string ph, name, cat, pid, tid, id, bind_id, args_name;
  std::string ts, dur;
  std::string sf;  ///< the stack frame id ("sf"), a key of the top-level "stackFrames"
  /// The inline "stack" (frame strings, root first); only its innermost frames are kept.
  std::deque<std::string> stack;
  bool stack_not_strings = false;  ///< "stack" held something other than strings
  bool stack_cut = false;          ///< "stack" was deeper than the frames kept
  bool has_pid = false, has_tid = false, has_ts = false, has_dur = false, has_id = false, has_bind = false;
  bool has_sf = false;
  bool flow_in = false, flow_out = false;
  bool has_bytes = false;
  double bytes = 0;
  std::vector<std::pair<std::string, double>> series;
  std::size_t series_dropped = 0;
  FileLoc loc;

  void clear() {
    ph.clear(), name.clear(), cat.clear(), pid.clear(), tid.clear(), id.clear(), bind_id.clear(), args_name.clear();
    ts.clear(), dur.clear();
    has_pid = has_tid = has_ts = has_dur = has_id = has_bind = flow_in = flow_out = has_bytes = has_sf = false;
    stack.clear();
    stack_not_strings = stack_cut = false;
    bytes = 0;
    series.clear();
    series_dropped = 0;
  }
};

struct Process {
  std::string pid;
  std::string name;
};

struct Thread {
  std::size_t process = 0;
  std::string tid;
  bool has_tid = false;
  std::string name;
};

struct FlowPoint {
  EntityIndex entity = 0;
  double t = 0;
  std::uint64_t bytes = 0;
  std::int64_t line = 0;  ///< of its event, for warnings
};

enum class Frame : std::uint8_t { TopObject, Events, Event, Args, Id2, StackFrames, StackFrame, Stack, Skip };
enum class Scalar : std::uint8_t { Null, Bool, Number, String };

class ChromeParser;

/// Receives flow points from the flow window in time order and hands them to the parser.
class FlowPointSink final : public TraceSink {
 public:
  explicit FlowPointSink(ChromeParser& parser) : parser_(parser) {}
  void on_entity(const Entity&) override {}
  void on_link(const Link&) override {}
  void on_message(const Message&) override {}
  void on_load(const LoadSample&) override {}
  void on_state(const StateInterval&) override {}
  void on_collective(const Collective& c) override;
  void on_end(double) override {}

 private:
  ChromeParser& parser_;
};

/// The SAX handler and the event logic. Run once with `names_only` (pass 1: names, entities,
/// time origin, counter choice) and once for the events.
class ChromeParser {
 public:
  ChromeParser(std::string name, TraceSink& sink, const ChromeOptions& options)
      : name_(std::move(name)), sink_(sink), options_(options),
        window_(sink, options.max_held, [this](double until) { stacks_.split_before(until); }), stacks_(window_),
        flow_sink_(*this), flow_window_(flow_sink_, options.max_held) {
    std::string_view key = options_.bytes_key;
    if (key.substr(0, 5) == "args.") key.remove_prefix(5);
    while (!key.empty()) {
      const std::size_t dot = key.find('.');
      bytes_path_.emplace_back(key.substr(0, dot));
      key = dot == std::string_view::npos ? std::string_view{} : key.substr(dot + 1);
    }
  }

  void run(ChromeSource& source, bool names_only) {
    names_only_ = names_only;
    frames_.clear();
    args_depth_.clear();
    events_seen_ = false;
    events_done_ = false;
    summary_.events = 0;
    JsonStream stream(source);
    stream_ = &stream;
    rapidjson::Reader reader;
    constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag |
                                rapidjson::kParseTrailingCommasFlag;
    const rapidjson::ParseResult r = reader.Parse<kFlags>(stream, *this);
    stream_ = nullptr;
    if (r.IsError()) {
      const FileLoc where{name_, stream.line(), stream.column()};
      const bool in_events = events_done_ || std::find(frames_.begin(), frames_.end(), Frame::Events) != frames_.end();
      if (stream.at_end() && in_events && r.Code() != rapidjson::kParseErrorTermination) {
        // Chrome writes the closing ']' only when tracing stops cleanly; accept the events so far.
        summary_.truncated_at = static_cast<std::int64_t>(r.Offset());
        if (!names_only_) {
          warnings_.add("the file is truncated at byte " + std::to_string(r.Offset()) +
                            " (closing ']' missing): read the complete events before it",
                        where);
          if (!frames_.empty() && std::find(frames_.begin(), frames_.end(), Frame::Event) != frames_.end()) {
            warnings_.add("event cut off by the truncation (dropped)", event_.loc);
          }
        }
      } else if (r.Code() != rapidjson::kParseErrorTermination) {
        throw InputError(where, std::string("malformed JSON: ") + rapidjson::GetParseError_En(r.Code()) + " (byte " +
                                    std::to_string(r.Offset()) + ")");
      } else {
        throw InputError(where, abort_message_);
      }
    }
    if (!events_seen_) {
      throw InputError(FileLoc{name_, 1, 1}, "no trace events: expected a JSON array of events or an object with a "
                                             "\"traceEvents\" array");
    }
  }

  /// After pass 1: the time origin, the counter, the entities (announced to the sink).
  void announce() {
    for (Process& p : processes_) {
      if (const auto it = process_names_.find(p.pid); it != process_names_.end()) p.name = it->second;
    }
    for (Thread& t : threads_) {
      const Process& p = processes_[t.process];
      if (const auto it = thread_names_.find(p.pid + "/" + t.tid); t.has_tid && it != thread_names_.end()) {
        t.name = it->second;
      }
      Entity e;
      e.index = static_cast<EntityIndex>(&t - threads_.data());
      std::int64_t id = e.index;
      const std::string& numeric = t.has_tid ? t.tid : p.pid;
      std::from_chars(numeric.data(), numeric.data() + numeric.size(), id);
      e.id = id;
      e.name = p.name.empty() ? "pid " + p.pid : p.name;
      if (t.has_tid) e.name += "/" + (t.name.empty() ? "tid " + t.tid : t.name);
      relocated([&] { sink_.on_entity(e); });
    }
    summary_.processes = processes_.size();
    summary_.threads = threads_.size();
    summary_.counter = counter_;
    if (!options_.counter.empty() && counter_.empty()) {
      warnings_.add("counter '" + shown(options_.counter) + "' is not in the trace (no load samples)", FileLoc{name_});
    }
  }

  ChromeSummary finish() {
    std::uint64_t open = 0;
    relocated([&] {
      flow_window_.flush();
      open = stacks_.close_all(end_s_);
      window_.flush();
      sink_.on_end(end_s_);
    });
    if (open > 0) warnings_.add("B slice without a matching E (ended at the end of the trace)", first_open_loc_, open);
    // Flow starts still waiting: reported at the earliest line among them.
    std::uint64_t starts = 0;
    std::int64_t first_line = 0;
    for (const auto& [key, list] : flow_starts_) {
      for (const FlowPoint& f : list) first_line = starts++ == 0 ? f.line : std::min(first_line, f.line);
    }
    if (starts > 0) {
      warnings_.add("flow start (or last step) without an end (dropped)", FileLoc{name_, first_line, 0}, starts);
    }
    if (window_.late_events() + flow_window_.late_events() > 0) {
      warnings_.add("events older than the reordering window moved forward in time", FileLoc{name_},
                    window_.late_events() + flow_window_.late_events());
    }
    summary_.warnings = warnings_.items();
    summary_.end_at = FileLoc{name_, end_line_, end_column_};
    return summary_;
  }

  // ---- rapidjson handler ----
  bool Null() { return scalar(Scalar::Null, {}); }
  bool Bool(bool b) { return scalar(Scalar::Bool, b ? "true" : "false"); }
  bool Int(int) { return false; }  // never called: numbers arrive as RawNumber
  bool Uint(unsigned) { return false; }
  bool Int64(std::int64_t) { return false; }
  bool Uint64(std::uint64_t) { return false; }
  bool Double(double) { return false; }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return scalar(Scalar::Number, {s, n}); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return scalar(Scalar::String, {s, n}); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    key_.assign(s, n);
    return true;
  }
  bool StartObject() { return open(true); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() { return open(false); }
  bool EndArray(rapidjson::SizeType) { return close(); }

 private:
  [[nodiscard]] FileLoc here() const { return FileLoc{name_, stream_->line(), stream_->column()}; }

  bool fail(const std::string& message) {
    abort_message_ = message;
    return false;
  }

  bool open(bool is_object) {
    if (frames_.size() >= kMaxNesting) return fail("JSON nested deeper than " + std::to_string(kMaxNesting) + " levels");
    if (frames_.empty()) {
      frames_.push_back(is_object ? Frame::TopObject : Frame::Events);
      if (!is_object) events_seen_ = true;
      return true;
    }
    Frame next = Frame::Skip;
    switch (frames_.back()) {
      case Frame::TopObject:
        if (!is_object && key_ == "traceEvents") {
          next = Frame::Events;
          events_seen_ = true;
        } else if (is_object && key_ == "stackFrames" && names_only_) {
          next = Frame::StackFrames;  // read in pass 1: events may come before it
        }
        break;
      case Frame::StackFrames:
        if (is_object && stack_frames_.size() < kMaxStackFrames) {
          next = Frame::StackFrame;
          frame_id_ = key_;
          stack_frames_.try_emplace(frame_id_);
        }
        break;
      case Frame::Events:
        if (is_object) {
          next = Frame::Event;
          event_.clear();
          event_.loc = here();  // rapidjson reports an object before it takes its '{'

        } else {
          not_an_object();
        }
        break;
      case Frame::Event:
        if (is_object && key_ == "args") {
          next = Frame::Args;
          args_depth_.push_back(0);
          args_on_path_.push_back(true);
        } else if (is_object && key_ == "id2") {
          next = Frame::Id2;
        } else if (!is_object && key_ == "stack" && !names_only_) {
          next = Frame::Stack;
        }
        break;
      case Frame::Stack:
        event_.stack_not_strings = true;  // an array or object as a frame: skipped with its content
        break;
      case Frame::Args: {
        const std::size_t depth = args_depth_.back();
        if (is_object && args_on_path_.back() && depth < bytes_path_.size() && key_ == bytes_path_[depth]) {
          next = Frame::Args;
          args_depth_.push_back(depth + 1);
          args_on_path_.push_back(true);
        }
        break;
      }
      case Frame::Id2:
      case Frame::StackFrame:
      case Frame::Skip: break;
    }
    frames_.push_back(next);
    return true;
  }

  bool close() {
    const Frame f = frames_.back();
    frames_.pop_back();
    if (f == Frame::Args) {
      args_depth_.pop_back();
      args_on_path_.pop_back();
    } else if (f == Frame::Events) {
      events_done_ = true;
    } else if (f == Frame::Event) {
      ++summary_.events;
      try {
        if (names_only_) {
          first_pass_event();
        } else {
          event();
        }
      } catch (const InputError& e) {
        return fail(e.diagnostics().size() == 1 ? e.diagnostics()[0].message : e.what());
      }
    }
    return true;
  }

  void not_an_object() {
    if (!names_only_) warnings_.add("element of the event array that is not an object (skipped)", here());
  }

  bool scalar(Scalar kind, std::string_view text) {
    if (frames_.empty()) return fail("expected a JSON array of events or an object with a \"traceEvents\" array");
    switch (frames_.back()) {
      case Frame::Events: not_an_object(); break;
      case Frame::Event: event_field(kind, text); break;
      case Frame::Args: args_field(kind, text); break;
      case Frame::Id2:
        if (kind == Scalar::String || kind == Scalar::Number) {
          event_.id = key_ + ":" + std::string(text);
          event_.has_id = true;
        }
        break;
      case Frame::StackFrame:
        if (kind == Scalar::String && key_ == "name") {
          stack_frames_[frame_id_].name = text.substr(0, std::min<std::size_t>(text.size(), LocationTable::kMaxNameBytes));
        } else if ((kind == Scalar::String || kind == Scalar::Number) && key_ == "parent") {
          stack_frames_[frame_id_].parent = text;
          stack_frames_[frame_id_].has_parent = true;
        }
        break;
      case Frame::Stack:
        if (kind != Scalar::String) {
          event_.stack_not_strings = true;
        } else {
          if (event_.stack.size() >= kMaxFrameDepth) {
            event_.stack.pop_front();  // root first: the innermost frames are the ones to keep
            event_.stack_cut = true;
          }
          event_.stack.emplace_back(text.substr(0, std::min<std::size_t>(text.size(), LocationTable::kMaxNameBytes)));
        }
        break;
      case Frame::TopObject:
      case Frame::StackFrames:
      case Frame::Skip: break;
    }
    return true;
  }

  /// The location of the event: its "sf" frame, else its inline "stack" (root first, the last
  /// frame the call site; each frame a function name or an address, as written), else none.
  LocationIndex event_location() {
    if (event_.has_sf) return frame_location(event_.sf);
    if (event_.stack_not_strings) warn("\"stack\" holds a frame that is not a string (skipped)");
    if (event_.stack_cut) {
      warn("\"stack\" deeper than " + std::to_string(kMaxFrameDepth) + " frames (the outermost left out)");
    }
    LocationIndex caller = 0;
    for (const std::string& frame : event_.stack) caller = locations_.intern({}, 0, frame, caller);
    return caller;
  }

  /// The location of stack frame `id` ("stackFrames"): its name as the function, its parents as
  /// the call path (at most kMaxFrameDepth frames; a parent loop ends the path). 0 when the trace
  /// defines no such frame (a warning).
  LocationIndex frame_location(const std::string& id) {
    if (const auto cached = frame_locations_.find(id); cached != frame_locations_.end()) return cached->second;
    std::vector<const std::string*> chain;  // innermost first
    const std::string* at = &id;
    for (;;) {
      const auto f = stack_frames_.find(*at);
      if (f == stack_frames_.end()) {
        if (chain.empty()) warn("\"sf\" names no entry of \"stackFrames\" (no location)");
        break;
      }
      if (chain.size() >= kMaxFrameDepth ||
          std::find_if(chain.begin(), chain.end(), [&](const std::string* c) { return *c == *at; }) != chain.end()) {
        break;
      }
      chain.push_back(&f->first);
      if (!f->second.has_parent) break;
      at = &f->second.parent;
    }
    LocationIndex caller = 0;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const auto known = frame_locations_.find(**it);
      caller = known != frame_locations_.end() ? known->second
                                               : frame_locations_.emplace(**it, locations_.intern({}, 0, stack_frames_[**it].name, caller)).first->second;
    }
    if (chain.empty()) frame_locations_.emplace(id, 0);
    return frame_locations_[id];
  }

  void event_field(Scalar kind, std::string_view text) {
    const bool value = kind == Scalar::String || kind == Scalar::Number;
    const std::string_view k = key_;
    if (k.size() > 8 || k.size() < 2) return;
    if (k == "ph") {
      if (kind == Scalar::String) event_.ph = text;
    } else if (k == "name") {
      if (kind == Scalar::String) event_.name = text;
    } else if (k == "cat") {
      if (kind == Scalar::String) event_.cat = text;
    } else if (k == "ts") {
      event_.has_ts = value;
      event_.ts = text;
    } else if (k == "dur") {
      event_.has_dur = value;
      event_.dur = text;
    } else if (k == "pid") {
      event_.has_pid = value;
      event_.pid = text;
    } else if (k == "tid") {
      event_.has_tid = value;
      event_.tid = text;
    } else if (k == "id") {
      event_.has_id = value;
      event_.id = text;
    } else if (k == "bind_id") {
      event_.has_bind = value;
      event_.bind_id = text;
    } else if (k == "flow_in") {
      event_.flow_in = text == "true";
    } else if (k == "flow_out") {
      event_.flow_out = text == "true";
    } else if (k == "sf") {
      event_.has_sf = value;
      event_.sf = text;
    }
  }

  void args_field(Scalar kind, std::string_view text) {
    const std::size_t depth = args_depth_.back();
    if (depth == 0) {
      if (kind == Scalar::String && key_ == "name") event_.args_name = text;
      double v = 0;
      if (kind == Scalar::Number && parse_double(text, v)) {
        if (event_.series.size() < kMaxSeries) {
          event_.series.emplace_back(key_, v);
        } else {
          ++event_.series_dropped;
        }
      }
    }
    if (args_on_path_.back() && depth + 1 == bytes_path_.size() && key_ == bytes_path_[depth]) {
      double v = 0;
      if ((kind == Scalar::Number || kind == Scalar::String) && parse_double(text, v) && v >= 0 && v < 1.8e19) {
        event_.has_bytes = true;
        event_.bytes = v;
      }
    }
  }

  // ---- events ----

  char phase() const { return event_.ph.size() == 1 ? event_.ph[0] : '\0'; }

  /// Pass 1: names, entities, the time origin and the counter.
  void first_pass_event() {
    const char ph = phase();
    if (ph == 'M') {
      // Names only: a thread that is only named has no events and is no entity.
      if (!event_.has_pid) return;
      if (event_.name == "process_name") {
        process_names_[event_.pid] = event_.args_name;
      } else if (event_.name == "thread_name" && event_.has_tid) {
        thread_names_[event_.pid + "/" + event_.tid] = event_.args_name;
      }
      return;
    }
    if (!event_.has_pid && !event_.has_tid) return;
    thread_of(process_of(event_.has_pid ? event_.pid : std::string("?")));
    double ts = 0;
    if (event_.has_ts && parse_double(event_.ts, ts)) origin_us_ = std::min(origin_us_, ts);
    if (ph == 'C' && counter_.empty() && !event_.series.empty()) {
      if (options_.counter.empty()) {
        counter_ = event_.name + "." + event_.series.front().first;
      } else if (options_.counter == event_.name) {
        counter_ = event_.name + "." + event_.series.front().first;
      } else {
        for (const auto& [series, v] : event_.series) {
          if (options_.counter == event_.name + "." + series) counter_ = options_.counter;
        }
      }
    }
  }

  std::size_t process_of(const std::string& pid) {
    const auto [it, added] = process_index_.try_emplace(pid, processes_.size());
    if (added) processes_.push_back(Process{pid, {}});
    return it->second;
  }

  std::size_t thread_of(std::size_t process) {
    std::string key = std::to_string(process) + (event_.has_tid ? "/" + event_.tid : std::string());
    const auto [it, added] = thread_index_.try_emplace(std::move(key), threads_.size());
    if (added) threads_.push_back(Thread{process, event_.tid, event_.has_tid, {}});
    return it->second;
  }

  /// The entity of the current event, announcing it if pass 1 did not see it.
  EntityIndex entity() {
    const std::size_t before = threads_.size();
    const std::size_t t = thread_of(process_of(event_.has_pid ? event_.pid : std::string("?")));
    if (threads_.size() > before) {
      Entity e;
      e.index = static_cast<EntityIndex>(t);
      e.id = static_cast<std::int64_t>(t);
      e.name = "pid " + processes_[threads_[t].process].pid + (event_.has_tid ? "/tid " + event_.tid : "");
      sink_.on_entity(e);
    }
    return static_cast<EntityIndex>(t);
  }

  void warn(std::string_view what) { warnings_.add(what, event_.loc); }

  /// Seconds since the trace start of a time stamp in microseconds.
  bool time_of(const std::string& text, double& out) {
    double us = 0;
    if (!parse_double(text, us)) return false;
    out = (us - origin_us_) * 1e-6;
    return true;
  }

  void event() {
    const char ph = phase();
    if (ph == 'M') {
      ++summary_.metadata;
      return;
    }
    if (event_.ph.empty()) {
      warn("event without \"ph\" (skipped)");
      return;
    }
    if (!event_.has_pid && !event_.has_tid) {
      if (std::strchr("BEXCstf", ph) != nullptr || event_.has_bind) warn("event without \"pid\" and \"tid\" (skipped)");
      ++summary_.ignored;
      return;
    }
    double t = 0;
    if (!event_.has_ts || !time_of(event_.ts, t)) {
      warn("event without a numeric \"ts\" (skipped)");
      return;
    }
    const EntityIndex e = entity();
    double end = t;
    switch (ph) {
      case 'B':
        if (stacks_.depth(e) == 0 && first_open_loc_.file.empty()) first_open_loc_ = event_.loc;
        if (!stacks_.push(e, t, event_.name, event_location())) {
          throw InputError(event_.loc, "B slices nested deeper than " + std::to_string(StateStacks::kMaxDepth) +
                                           " on one thread");
        }
        break;
      case 'E':
        if (stacks_.pop(e, t)) {
          ++summary_.states;
        } else {
          warn("E without a matching B (skipped)");
        }
        break;
      case 'X': {
        double dur = 0;
        if (!event_.has_dur || !parse_double(event_.dur, dur) || dur < 0) {
          warn("X event without a valid \"dur\" (read as 0)");
          dur = 0;
        }
        end = t + dur * 1e-6;
        window_.state(t, end, e, event_.name, event_location());
        ++summary_.states;
        break;
      }
      case 'C': counter(e, t); break;
      case 'i':
      case 'I':
      case 'R':  // instant events and marks: markers (iteration starts), docs/trace-formats.md
        window_.marker(Marker{t, e, event_.name});
        ++summary_.markers;
        break;
      case 's':
      case 't':
      case 'f': flow_v1(ph, e, t); break;
      default: ++summary_.ignored; break;
    }
    if (event_.has_bind) flow_v2(e, t);
    if (end > end_s_) {
      end_s_ = end;
      end_line_ = event_.loc.line;  // no string copy: most events raise the end
      end_column_ = event_.loc.column;
    }
  }

  void counter(EntityIndex e, double t) {
    if (counter_.empty() || event_.series.empty()) return;
    const bool whole = counter_.size() > event_.name.size() && counter_.compare(0, event_.name.size(), event_.name) == 0 &&
                       counter_[event_.name.size()] == '.';
    if (!whole) return;
    const std::string_view series = std::string_view(counter_).substr(event_.name.size() + 1);
    for (const auto& [s, v] : event_.series) {
      if (s == series) {
        window_.load(LoadSample{t, e, v});
        ++summary_.counter_samples;
        return;
      }
    }
  }

  std::uint64_t event_bytes() const { return event_.has_bytes ? static_cast<std::uint64_t>(event_.bytes) : 0; }

  void flow_point(EntityIndex e, double t, std::string_view key, std::string_view role, std::uint64_t bytes) {
    flow_window_.collective(Collective{t, t, e, key, bytes, event_.loc.line, role});  // root: the line
  }

  void flow_v1(char ph, EntityIndex e, double t) {
    if (!event_.has_id) {
      warn("flow event without \"id\" (skipped)");
      return;
    }
    const std::string key = "1\x1f" + event_.cat + "\x1f" + event_.id;
    flow_point(e, t, key, std::string_view(&ph, 1), ph == 's' ? event_bytes() : 0);
  }

  void flow_v2(EntityIndex e, double t) {
    const std::string key = "2\x1f" + event_.bind_id;
    if (event_.flow_in) flow_point(e, t, key, "f", 0);
    if (event_.flow_out) flow_point(e, t, key, "s", event_bytes());
  }

 public:
  /// A flow point leaving the flow window, in time order: matches it with the flow's last point.
  void on_flow_point(const Collective& p) {
    const std::string_view key = p.name;
    const char role = p.group.empty() ? 'f' : p.group[0];
    if (role == 's') {
      flow_starts_[std::string(key)].push_back(FlowPoint{p.entity, p.begin_s, p.bytes, p.root});
      return;
    }
    const auto it = flow_starts_.find(std::string(key));
    if (it == flow_starts_.end()) {
      warnings_.add(role == 't' ? "flow step without a start (dropped)" : "flow end without a start (dropped)",
                    FileLoc{name_, p.root, 0});
      return;
    }
    const FlowPoint from = it->second.front();
    it->second.pop_front();
    window_.message(Message{from.t, p.begin_s, from.entity, p.entity, from.bytes, -1});
    ++summary_.flow_messages;
    if (role == 't') {
      it->second.push_front(FlowPoint{p.entity, p.begin_s, from.bytes, p.root});
    } else if (it->second.empty()) {
      flow_starts_.erase(it);
    }
  }

 private:
  /// Runs `f`, giving a location-less error from the sink (a timeline too long) this file's name.
  template <typename F>
  void relocated(F&& f) {
    try {
      f();
    } catch (const InputError& e) {
      const auto& ds = e.diagnostics();
      if (ds.size() == 1 && ds[0].loc.file.empty()) throw InputError(FileLoc{name_}, ds[0].message);
      throw;
    }
  }

  std::string name_;
  TraceSink& sink_;
  const ChromeOptions& options_;
  EventWindow window_;
  StateStacks stacks_;
  /// Flow points sorted by time before they are matched (files are not in time order). A point
  /// travels as a Collective: name = flow key, group = role ("s", "t", "f"), bytes.
  FlowPointSink flow_sink_;
  EventWindow flow_window_;
  std::vector<std::string> bytes_path_;

  JsonStream* stream_ = nullptr;
  bool names_only_ = true;
  std::vector<Frame> frames_;
  std::vector<std::size_t> args_depth_;
  std::vector<bool> args_on_path_;
  std::string key_;
  // Stack frames ("stackFrames", read in pass 1) and the locations made of them.
  struct StackFrameDef {
    std::string name;
    std::string parent;
    bool has_parent = false;
  };
  static constexpr std::size_t kMaxStackFrames = std::size_t{1} << 20U;
  static constexpr std::size_t kMaxFrameDepth = 256;
  std::unordered_map<std::string, StackFrameDef> stack_frames_;
  std::unordered_map<std::string, LocationIndex> frame_locations_;
  std::string frame_id_;
  LocationTable locations_{sink_};
  Event event_;
  bool events_seen_ = false;
  bool events_done_ = false;
  std::string abort_message_;

  std::vector<Process> processes_;
  std::unordered_map<std::string, std::size_t> process_index_;
  std::vector<Thread> threads_;
  std::unordered_map<std::string, std::string> process_names_;  ///< pid → name (M process_name)
  std::unordered_map<std::string, std::string> thread_names_;   ///< "pid/tid" → name (M thread_name)
  std::unordered_map<std::string, std::size_t> thread_index_;
  double origin_us_ = HUGE_VAL;
  std::string counter_;
  double end_s_ = 0;
  std::int64_t end_line_ = 0;  ///< the event that set end_s_ (0: none)
  std::int64_t end_column_ = 0;

  std::unordered_map<std::string, std::deque<FlowPoint>> flow_starts_;
  FileLoc first_open_loc_;
  ReaderWarnings warnings_;
  ChromeSummary summary_;
};

void FlowPointSink::on_collective(const Collective& c) { parser_.on_flow_point(c); }

ChromeSummary read_with(const std::string& name, TraceSink& sink, const ChromeOptions& options,
                        const std::function<std::unique_ptr<ChromeSource>()>& open) {
  ChromeParser parser(name, sink, options);
  {
    const auto source = open();
    parser.run(*source, true);
  }
  parser.announce();
  {
    const auto source = open();
    parser.run(*source, false);
  }
  return parser.finish();
}

}  // namespace

ChromeSummary read_chrome_trace(const std::filesystem::path& path, TraceSink& sink, const ChromeOptions& options) {
  return read_with(path.string(), sink, options, [&] { return std::make_unique<ChromeFileSource>(path); });
}

ChromeSummary read_chrome_trace_text(std::string_view text, const std::string& name, TraceSink& sink,
                                     const ChromeOptions& options) {
  return read_with(name, sink, options, [&] { return std::make_unique<ChromeTextSource>(text); });
}

bool looks_like_chrome_json(std::string_view head) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  const std::size_t b = head.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos || (head[b] != '[' && head[b] != '{')) return false;
  return head.find("\"traceEvents\"") != std::string_view::npos || head.find("\"ph\"") != std::string_view::npos;
}

}  // namespace kanoko::trace
