#include "src/trace/paje_reader.hpp"
#include "src/trace/held_queue.hpp"
#include "src/trace/line_batches.hpp"
#include "src/trace/text_input.hpp"

#include <fcntl.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

#include "src/base/flat_index.hpp"
#include "src/base/suggest.hpp"
#include "src/trace/locations.hpp"

namespace kanoko::trace {
namespace {

constexpr std::size_t kMaxDepth = 100000;  ///< state nesting per container and type
constexpr std::size_t kSmallIds = 4096;  ///< event ids below this are looked up in a vector
constexpr std::size_t kMaxValueNames = std::size_t{1} << 22U;  ///< distinct state values (memory bound)
constexpr std::size_t kMaxPlatformLinks = std::size_t{1} << 22U;  ///< entity pairs reported as links

/// Hash for string-keyed maps looked up by string_view without building a string per line.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return FlatStringIndex::digest(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

/// Text from the input as shown in a message: at most 40 bytes, control characters escaped.

enum class Ev : std::uint8_t {
  DefContainerType, DefStateType, DefEventType, DefVariableType, DefLinkType, DefEntityValue,
  CreateContainer, DestroyContainer, SetState, PushState, PopState, ResetState,
  SetVariable, AddVariable, SubVariable, StartLink, EndLink, NewEvent, Unsupported
};

struct EvName {
  const char* name;
  Ev ev;
};
constexpr std::array<EvName, 18> kEvents{{
    {"PajeDefineContainerType", Ev::DefContainerType}, {"PajeDefineStateType", Ev::DefStateType},
    {"PajeDefineEventType", Ev::DefEventType},         {"PajeDefineVariableType", Ev::DefVariableType},
    {"PajeDefineLinkType", Ev::DefLinkType},           {"PajeDefineEntityValue", Ev::DefEntityValue},
    {"PajeCreateContainer", Ev::CreateContainer},      {"PajeDestroyContainer", Ev::DestroyContainer},
    {"PajeSetState", Ev::SetState},                    {"PajePushState", Ev::PushState},
    {"PajePopState", Ev::PopState},                    {"PajeResetState", Ev::ResetState},
    {"PajeSetVariable", Ev::SetVariable},              {"PajeAddVariable", Ev::AddVariable},
    {"PajeSubVariable", Ev::SubVariable},              {"PajeStartLink", Ev::StartLink},
    {"PajeEndLink", Ev::EndLink},                      {"PajeNewEvent", Ev::NewEvent},
}};

enum Field : std::uint8_t {
  fTime, fAlias, fType, fContainer, fName, fValue, fStartContainer, fEndContainer, fKey, fSize,
  fStartContainerType, fEndContainerType, fFname, fLnumber, kFieldCount
};

/// Bytes that continue a word: all but the separators (space, tab, CR), the line end, NUL and '"'.
constexpr std::array<bool, 256> kWordChar = [] {
  std::array<bool, 256> a{};
  a.fill(true);
  for (const char c : {' ', '\t', '\r', '\n', '\0', '"'}) a[static_cast<unsigned char>(c)] = false;
  return a;
}();

/// Field names, including SimGrid's deprecated spellings, mapped to the fields Kanoko reads.
Field field_of(std::string_view n) {
  if (n == "Time") return fTime;
  if (n == "Alias") return fAlias;
  if (n == "Type" || n == "ContainerType" || n == "EntityType") return fType;
  if (n == "Container") return fContainer;
  if (n == "Name") return fName;
  if (n == "Value") return fValue;
  if (n == "StartContainer" || n == "SourceContainer") return fStartContainer;
  if (n == "EndContainer" || n == "DestContainer") return fEndContainer;
  if (n == "Key") return fKey;
  if (n == "Size") return fSize;
  if (n == "Fname") return fFname;
  if (n == "Lnumber") return fLnumber;
  if (n == "StartContainerType" || n == "SourceContainerType") return fStartContainerType;
  if (n == "EndContainerType" || n == "DestContainerType") return fEndContainerType;
  return kFieldCount;
}

constexpr std::array<const char*, kFieldCount> kFieldNames{
    "Time", "Alias", "Type", "Container", "Name", "Value", "StartContainer", "EndContainer", "Key", "Size",
    "StartContainerType", "EndContainerType", "Fname", "Lnumber"};

/// The fields an event cannot do without.
std::vector<Field> required_fields(Ev ev) {
  switch (ev) {
    case Ev::DefContainerType:
    case Ev::DefStateType:
    case Ev::DefEventType:
    case Ev::DefVariableType:
    case Ev::DefEntityValue: return {fType, fName};
    case Ev::DefLinkType: return {fType, fStartContainerType, fEndContainerType, fName};
    case Ev::CreateContainer: return {fTime, fType, fContainer, fName};
    case Ev::DestroyContainer: return {fTime, fType, fName};
    case Ev::SetState:
    case Ev::PushState:
    case Ev::SetVariable:
    case Ev::AddVariable:
    case Ev::SubVariable:
    case Ev::NewEvent: return {fTime, fType, fContainer, fValue};
    case Ev::PopState:
    case Ev::ResetState: return {fTime, fType, fContainer};
    case Ev::StartLink: return {fTime, fType, fContainer, fValue, fStartContainer, fKey};
    case Ev::EndLink: return {fTime, fType, fContainer, fValue, fEndContainer, fKey};
    case Ev::Unsupported: return {};
  }
  return {};
}

struct EventDef {
  Ev ev = Ev::Unsupported;
  std::string name;
  std::array<int, kFieldCount> pos{};  ///< token position after the id, -1 when absent
  std::size_t field_count = 0;
  bool complete = false;
};

enum class Kind : std::uint8_t { Container, State, Variable, Link, Event };

struct Type {
  std::string alias;
  std::string name;
  Kind kind = Kind::Container;
  int parent = -1;
  bool has_child_container = false;
  bool has_state = false;
  bool chosen = false;
};

struct Container {
  std::string alias;
  std::string name;
  int type = 0;
  int parent = -1;
  std::int64_t entity = -1;  ///< the entity it belongs to (itself or its nearest chosen ancestor)
  bool is_entity = false;    ///< chosen itself: its states and variables reach the sink
  std::vector<std::uint32_t> state_types;  ///< state types it has stacks for
};

struct OpenState {
  double begin_s;
  std::uint32_t value;  ///< index in the parser's value names
  LocationIndex location;  ///< SMPI's Fname/Lnumber call site (in what was padding)
  std::uint64_t blocker;  ///< sequence number in the blocker queue, kNone when not tracked
};

struct PendingLink {
  bool is_start;
  double time_s;
  int other;  ///< the start or end container
  LocationIndex location;  ///< the sender's call site (a start's; in what was padding)
  std::uint64_t bytes;
  std::int64_t line;
  std::uint64_t blocker;
};

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

/// An event waiting for every earlier-starting event to be known.
struct Held {
  double t;
  std::uint64_t seq;
  enum class What : std::uint8_t { State, Message, Load, Marker } what;
  int a;  ///< container (the state's, the load's, the message's sender)
  int b;  ///< the message's receiver container
  double t2;
  std::uint64_t bytes;
  std::uint32_t name;  ///< the state's or marker's value (index in the parser's value names)
  LocationIndex location = 0;  ///< the state's or the message's call site
};

/// Something still open whose first time bounds what may be emitted.
struct Blocker {
  double t;
  bool alive;
  bool is_link;
  std::uint64_t stack_key;
  std::uint32_t link_entry;  ///< the pending-link entry (while the blocker is alive)
};

/// A FIFO queue with indexed access in one power-of-two ring buffer: pushes and pops allocate
/// nothing once it has grown to the most elements held at a time.
template <typename T>
class RingQueue {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  T& operator[](std::size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  void push_back(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  void grow() {
    std::vector<T> bigger(buf_.empty() ? 64 : 2 * buf_.size());
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    buf_.swap(bigger);
    head_ = 0;
  }
  std::vector<T> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

/// Link ends waiting for their other end, by key ("container\x1fvalue\x1fkey"): open addressing
/// with linear probing on a 64-bit digest of the key, removal by backward shift (no tombstones),
/// and entries whose strings and lists are reused, so that a link costs no allocation once the
/// table has grown to the number of links open at a time.
class PendingLinks {
 public:
  static constexpr std::uint32_t kNoEntry = ~std::uint32_t{0};
  struct Entry {
    std::string key;
    std::vector<PendingLink> list;
  };

  /// The entry holding `key` (digest `h`), or kNoEntry.
  [[nodiscard]] std::uint32_t find(std::string_view key, std::uint64_t h) const {
    if (slots_.empty()) return kNoEntry;
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& sl = slots_[i];
      if (sl.entry == kNoEntry) return kNoEntry;
      if (sl.digest == h && FlatStringIndex::equal(entries_[sl.entry].key, key)) return sl.entry;
    }
  }
  /// A new, empty entry for `key` (not in the table).
  std::uint32_t insert(std::string_view key, std::uint64_t h) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    std::uint32_t e = 0;
    if (free_.empty()) {
      e = static_cast<std::uint32_t>(entries_.size());
      entries_.emplace_back();
    } else {
      e = free_.back();
      free_.pop_back();
    }
    entries_[e].key.assign(key);
    entries_[e].list.clear();
    place(Slot{h, e});
    ++used_;
    return e;
  }
  /// Removes an entry (its string and list keep their capacity for the next insert).
  void erase(std::uint32_t e) {
    const std::uint64_t h = FlatStringIndex::digest(entries_[e].key);
    std::size_t i = h & mask_;
    while (slots_[i].entry != e) i = (i + 1) & mask_;
    // Backward shift: move later entries of the probe run into the hole.
    for (std::size_t j = (i + 1) & mask_; slots_[j].entry != kNoEntry; j = (j + 1) & mask_) {
      const std::size_t home = slots_[j].digest & mask_;
      const bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
      if (movable) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --used_;
    if (free_.size() < kKeptFree) {
      free_.push_back(e);
    } else {
      entries_[e] = Entry{};  // beyond the kept ones, give the memory back
      free_.push_back(e);
    }
  }
  Entry& operator[](std::uint32_t e) { return entries_[e]; }
  [[nodiscard]] std::size_t size() const { return used_; }
  /// Calls f(entry) for every entry holding links, in the order of the entries' storage (not
  /// the table's): sequential reads, for a caller whose result does not depend on the order.
  template <typename F>
  void for_each_stored(F&& f) {
    for (Entry& e : entries_) {
      if (!e.list.empty()) f(e);
    }
  }
  /// Calls f(entry) for every entry in the table.
  template <typename F>
  void for_each(F&& f) {
    for (const Slot& sl : slots_) {
      if (sl.entry != kNoEntry) f(entries_[sl.entry]);
    }
  }
  void clear() {
    slots_.clear();
    entries_.clear();
    free_.clear();
    used_ = 0;
    mask_ = 0;
  }

 private:
  static constexpr std::size_t kKeptFree = 4096;  ///< released entries that keep their capacity
  struct Slot {
    std::uint64_t digest = 0;
    std::uint32_t entry = kNoEntry;
  };
  void place(Slot sl) {
    std::size_t i = sl.digest & mask_;
    while (slots_[i].entry != kNoEntry) i = (i + 1) & mask_;
    slots_[i] = sl;
  }
  void grow() {
    std::vector<Slot> old(slots_.empty() ? 64 : 2 * slots_.size());
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& sl : old) {
      if (sl.entry != kNoEntry) place(sl);
    }
  }
  std::vector<Slot> slots_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_;
  std::size_t used_ = 0;
  std::size_t mask_ = 0;
};

/// A field of a line: its text (unquoted) and 1-based column, and what a worker thread that
/// split the line computed from it: the key of its name lookups and, for a time, its value. 32
/// bytes (the worker writes and the parser reads a few per line: their size is memory traffic).
struct PajeToken {
  std::string_view text;
  /// FlatStringIndex::Key's number or digest (kKeyed, kKeyIsNumber), or the bits of a time's
  /// value (kScanned, kIsNumber).
  std::uint64_t payload = 0;
  std::uint32_t column = 0;  ///< lines are at most 16 MiB long
  std::uint8_t flags = 0;

  static constexpr std::uint8_t kKeyed = 1;        ///< payload is FlatStringIndex::key_of(text)
  static constexpr std::uint8_t kKeyIsNumber = 2;  ///< that key is a small number, not a digest
  static constexpr std::uint8_t kScanned = 4;      ///< parse_double's verdict on text is known
  static constexpr std::uint8_t kIsNumber = 8;     ///< ... and text is a number, payload its value

  [[nodiscard]] bool keyed() const { return (flags & kKeyed) != 0; }
  [[nodiscard]] bool scanned() const { return (flags & kScanned) != 0; }
  [[nodiscard]] bool is_number() const { return (flags & kIsNumber) != 0; }
  [[nodiscard]] double number() const { return std::bit_cast<double>(payload); }
  [[nodiscard]] FlatStringIndex::Key key() const {
    FlatStringIndex::Key k;
    k.is_number = (flags & kKeyIsNumber) != 0;
    if (k.is_number) {
      k.number = static_cast<std::size_t>(payload);
    } else {
      k.digest = payload;
    }
    return k;
  }
  void set_key(const FlatStringIndex::Key& k) {
    payload = k.is_number ? static_cast<std::uint64_t>(k.number) : k.digest;
    flags = static_cast<std::uint8_t>(kKeyed | (k.is_number ? kKeyIsNumber : 0));
  }
  void set_scanned(bool number, double value) {
    payload = std::bit_cast<std::uint64_t>(value);
    flags = static_cast<std::uint8_t>(kScanned | (number ? kIsNumber : 0));
  }
};
static_assert(sizeof(PajeToken) == 32);

/// What a worker computes of the words it splits (split_paje_line with `keys`): every word's
/// lookup key and the value of every time (digits and a decimal point). The last such word read
/// as a line's first field after the id (an event's time) is remembered, and the last ones read
/// elsewhere (a variable's value, a size) in a small table by their length and last bytes, so
/// that a time or value repeated is not parsed again: SimGrid writes runs of lines at one time,
/// and its resource variables take a few values over and over, in turn (the halo trace of
/// docs/trace-formats.md has 9 distinct values in 334 144 changes, a different one from the
/// line before in 308 807).
struct KeyScan {
  struct Last {
    std::string_view text;
    bool is_number = false;
    double value = 0;
  };
  Last time;                    ///< the time field
  std::array<Last, 16> values;  ///< the other decimals, by value_slot
  /// The table entry for decimal `text` (at least two bytes: digits and a point).
  static std::size_t value_slot(std::string_view text) {
    const std::size_t n = text.size();
    return (n + 3 * static_cast<unsigned char>(text[n - 1]) + 5 * static_cast<unsigned char>(text[n - 2])) & 15U;
  }
};

/// The end of the word starting at text[i] (a byte that is no separator, line end, NUL, '"' or
/// comment start): the first separator (space, tab, CR), line end, NUL or '"' after it, or the
/// end of the text; `digits` is set to the number of its leading decimal digits. Sixteen bytes
/// at a time (SSE2) when the word ends within them, as nearly all words of a trace do; byte by
/// byte otherwise, with the same result.
std::size_t word_end(std::string_view text, std::size_t i, std::size_t& digits) {
  const std::size_t n = text.size();
#if defined(__SSE2__)
  if (n - i >= 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    const auto is = [&b](char c) { return _mm_cmpeq_epi8(b, _mm_set1_epi8(c)); };
    const __m128i stop = _mm_or_si128(_mm_or_si128(_mm_or_si128(is(' '), is('\t')), _mm_or_si128(is('\r'), is('\n'))),
                                      _mm_or_si128(is('\0'), is('"')));
    const auto stops = static_cast<unsigned>(_mm_movemask_epi8(stop));
    if (stops != 0) {
      // A byte is a digit when its distance from '0', as an unsigned byte, is at most 9.
      const __m128i d = _mm_sub_epi8(b, _mm_set1_epi8('0'));
      const __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
      const unsigned not_digits = ~static_cast<unsigned>(_mm_movemask_epi8(digit));  // bits 16 and up set
      const auto end = static_cast<std::size_t>(std::countr_zero(stops));
      digits = std::min(static_cast<std::size_t>(std::countr_zero(not_digits)), end);
      return i + end;
    }
  }
#endif
  std::size_t j = i;
  while (j < n && static_cast<unsigned>(text[j] - '0') < 10U) ++j;
  digits = j - i;
  if (j == i) ++j;
  while (j < n && kWordChar[static_cast<unsigned char>(text[j])]) ++j;
  return j;
}

/// A worker's part of reading word `t`, whose first `digits` bytes are decimal digits: its lookup
/// key, or, for digits and a decimal point (a time or other decimal: no name, it needs no key),
/// its value. `time_field`: the word is the line's first field after the id.
inline void scan_word(PajeToken& t, std::size_t digits, bool time_field, KeyScan& keys) {
  if (digits == 0 || digits == t.text.size() || t.text[digits] != '.') {
    // key_of reads the value of a word of up to 7 digits only.
    std::size_t value = 0;
    if (digits == t.text.size() && digits <= 7) {
      for (const char ch : t.text) value = value * 10 + static_cast<std::size_t>(ch - '0');
    }
    t.set_key(FlatStringIndex::key_of(t.text, digits, value));
  } else if (KeyScan::Last& last = time_field ? keys.time : keys.values[KeyScan::value_slot(t.text)];
             FlatStringIndex::equal(t.text, last.text)) {
    t.set_scanned(last.is_number, last.value);
  } else {
    double v = 0;
    const bool is_number = parse_double(t.text, v);
    t.set_scanned(is_number, v);
    last = KeyScan::Last{t.text, is_number, v};
  }
}

/// Splits the line starting at text[begin] into tokens, from byte `i`: words, quoted strings
/// (without their quotes), up to a '#' comment. The line ends at a '\n' or the end of `text`;
/// `stop` is set to where. Columns are shifted by `shift` (a byte order mark removed before the
/// line). With `keys`, words also get their keys and times (a worker's split). False at the
/// first lexical error, with its column and message, or when the line has more than
/// `max_tokens` tokens (error nullptr).
bool split_paje_line(std::string_view text, std::size_t begin, std::size_t i, std::size_t shift,
                     std::vector<PajeToken>& out, std::size_t& stop, std::size_t& error_column, const char*& error,
                     KeyScan* keys = nullptr, std::size_t max_tokens = std::numeric_limits<std::size_t>::max()) {
  const std::size_t line_first = out.size();  ///< this line's first token
  const std::size_t limit = max_tokens > std::numeric_limits<std::size_t>::max() - out.size()
                                ? std::numeric_limits<std::size_t>::max()
                                : out.size() + max_tokens;
  const std::size_t n = text.size();
  const auto fail = [&](std::size_t at, const char* what) {
    error_column = at - begin + 1 + shift;
    error = what;
    return false;
  };
  while (i < n && text[i] != '\n') {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (out.size() == limit) {
      error = nullptr;
      return false;
    }
    if (c == '#') {
      const void* nl = std::memchr(text.data() + i, '\n', n - i);
      i = nl == nullptr ? n : static_cast<std::size_t>(static_cast<const char*>(nl) - text.data());
      break;
    }
    if (c == '\0') return fail(i, "binary content (NUL byte): not a text trace");
    if (c == '"') {
      std::size_t close = i + 1;
      while (close < n && text[close] != '"' && text[close] != '\n') ++close;
      if (close == n || text[close] != '"') return fail(i, "unterminated quoted string");
      const std::string_view q = text.substr(i + 1, close - i - 1);
      if (const std::size_t nul = q.find('\0'); nul != std::string_view::npos) {
        return fail(i + 1 + nul, "binary content (NUL byte): not a text trace");
      }
      PajeToken& t = out.emplace_back();
      t.text = q;
      t.column = static_cast<std::uint32_t>(i - begin + 1 + shift);
      i = close + 1;
      continue;
    }
    // A word ends at a separator or the line's end; NUL and '"' inside it are errors. Its
    // leading digits are counted on the way.
    std::size_t digits = 0;
    const std::size_t j = word_end(text, i, digits);
    if (j < n && (text[j] == '\0' || text[j] == '"')) {
      return fail(j, text[j] == '\0' ? "binary content (NUL byte): not a text trace" : "unexpected '\"' inside a word");
    }
    PajeToken& t = out.emplace_back();
    t.text = text.substr(i, j - i);
    t.column = static_cast<std::uint32_t>(i - begin + 1 + shift);
    if (keys != nullptr) scan_word(t, digits, out.size() - line_first == 2, *keys);
    i = j;
  }
  stop = i;
  return true;
}

/// Tokens split_plain_line writes at most (a word and a separator per two of its 64 bytes).
constexpr std::size_t kPlainLineTokens = 32;

/// The common case of split_paje_line for a worker: a body line of fewer than 64 bytes, after
/// which the text goes on for at least 64 bytes, with no quote, NUL or '#' and not starting with
/// '%' or a byte order mark. Its bytes are classified in 16-byte blocks (SSE2) into bit masks
/// (separators, digits, the line end) once, and every word is read from them: the same tokens,
/// keys and values as split_paje_line, without a pass per word. Writes the tokens to out[0..],
/// which has room for kPlainLineTokens, and returns their number; or returns -1 (nothing
/// written) for any other line, which split_paje_line then reads. `stop` is the line's '\n'.
int split_plain_line(std::string_view text, std::size_t pos, PajeToken* out, KeyScan& keys, std::size_t& stop) {
#if defined(__SSE2__)
  if (text.size() - pos < 64) return -1;
  const char* p = text.data() + pos;
  std::uint64_t nl = 0;
  std::uint64_t sep = 0;
  std::uint64_t special = 0;
  std::uint64_t digit = 0;
  for (unsigned k = 0; k < 64 && nl == 0; k += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
    const auto is = [&b](char c) { return _mm_cmpeq_epi8(b, _mm_set1_epi8(c)); };
    const auto bits = [k](__m128i v) {
      return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(v))) << k;
    };
    nl = bits(is('\n'));
    sep |= bits(_mm_or_si128(_mm_or_si128(is(' '), is('\t')), is('\r')));
    special |= bits(_mm_or_si128(_mm_or_si128(is('\0'), is('"')), is('#')));
    // A byte is a digit when its distance from '0', as an unsigned byte, is at most 9.
    const __m128i d = _mm_sub_epi8(b, _mm_set1_epi8('0'));
    digit |= bits(_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d));
  }
  if (nl == 0) return -1;
  const auto end = static_cast<unsigned>(std::countr_zero(nl));
  const std::uint64_t inside = (std::uint64_t{1} << end) - 1;
  if ((special & inside) != 0 || p[0] == '\xEF') return -1;
  const std::uint64_t word = ~sep & inside;
  std::uint64_t starts = word & ~(word << 1U);
  std::uint64_t ends = word & ~(word >> 1U);  // the last byte of each word
  if (starts != 0 && p[std::countr_zero(starts)] == '%') return -1;
  // Separators and the line end are no digits, so a word's leading digits stop within it.
  const std::uint64_t not_digit = ~digit;
  int count = 0;
  for (; starts != 0; ++count) {
    const auto s = static_cast<unsigned>(std::countr_zero(starts));
    const auto e = static_cast<unsigned>(std::countr_zero(ends)) + 1;
    starts &= starts - 1;
    ends &= ends - 1;
    PajeToken& t = out[count];
    t.text = std::string_view(p + s, e - s);
    t.column = s + 1;
    scan_word(t, static_cast<std::size_t>(std::countr_zero(not_digit >> s)), count == 1, keys);
  }
  stop = pos + end;
  return count;
#else
  (void)text, (void)pos, (void)out, (void)keys, (void)stop;
  return -1;
#endif
}

/// An event id below kSmallIds written in decimal digits (leading zeros allowed): the event ids
/// of every known writer.
bool small_event_id(std::string_view id, std::size_t& out) {
  while (id.size() > 1 && id[0] == '0') id.remove_prefix(1);
  return decimal_digits(id, 4, out) && out < kSmallIds;
}

/// A body line as a worker thread split it.
struct SplitLine {
  std::uint32_t offset = 0;  ///< the line in its batch's text
  std::uint32_t length = 0;
  std::uint32_t first = 0;   ///< its tokens in the batch's tokens
  std::uint32_t count = 0;
  std::int32_t small_id = -1;  ///< the event id when small_event_id takes it
  bool split = false;        ///< false: the parser reads the line itself (header lines, errors)
};
struct SplitBatch {
  /// The batch's tokens are tokens[0 .. used): the vector only grows (its size is its high-water
  /// mark), so that tokens are written once, not zeroed first.
  std::vector<PajeToken> tokens;
  std::size_t used = 0;
  std::vector<PajeToken> scratch;  ///< a line split_paje_line reads
  std::vector<SplitLine> lines;
};

/// Tokens a worker splits a line into at most: a longer line (up to 16 MiB of one-byte words)
/// is left to the parser, which splits one line at a time, so that batches in flight stay small.
constexpr std::size_t kMaxSplitTokens = 4096;

/// Makes `tokens` at least `size` long, with room to double: only the new tokens are written
/// (a fresh page is touched when the batch's tokens reach it, not before).
void grow_tokens(std::vector<PajeToken>& tokens, std::size_t size) {
  if (tokens.capacity() < size) tokens.reserve(2 * size);
  tokens.resize(size);
}

/// A worker's part of reading a batch: tokens of the body lines, with their times and keys.
/// Header lines, lines with a lexical error or a byte order mark, and lines of more than
/// kMaxSplitTokens tokens are left to the parser.
void split_paje_batch(const LineBatch& batch, SplitBatch& out) {
  out.used = 0;
  out.lines.clear();
  // Room for every token the batch can hold (a word and a separator per two bytes), reserved
  // once with a quarter to spare for longer batches: growing by doubling copies the tokens and,
  // past malloc's mmap threshold, maps fresh pages at each step (page faults in every slot of
  // ParallelLineReader; untouched reserved pages cost nothing).
  const std::size_t most = batch.text.size() / 2 + 2 * kPlainLineTokens;
  if (out.tokens.capacity() < most) out.tokens.reserve(most + most / 4);
  KeyScan keys;
  const std::string_view text = batch.text;
  std::size_t pos = 0;
  while (pos < text.size()) {
    SplitLine& l = out.lines.emplace_back();
    l.offset = static_cast<std::uint32_t>(pos);
    const std::size_t first = out.used;
    if (out.tokens.size() < first + kPlainLineTokens) grow_tokens(out.tokens, first + kPlainLineTokens);
    std::size_t stop = 0;
    const int plain = split_plain_line(text, pos, out.tokens.data() + first, keys, stop);
    if (plain >= 0) {
      l.split = true;
      l.count = static_cast<std::uint32_t>(plain);
    } else {
      std::size_t i = pos;
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
      std::size_t error_column = 0;
      const char* error = nullptr;
      const bool header = i < text.size() && text[i] == '%';
      out.scratch.clear();
      l.split = !header && text.substr(pos, 3) != "\xEF\xBB\xBF" &&
                split_paje_line(text, pos, i, 0, out.scratch, stop, error_column, error, &keys, kMaxSplitTokens);
      if (l.split) {
        l.count = static_cast<std::uint32_t>(out.scratch.size());
        if (out.tokens.size() < first + l.count) grow_tokens(out.tokens, first + l.count);
        std::copy(out.scratch.begin(), out.scratch.end(), out.tokens.begin() + static_cast<std::ptrdiff_t>(first));
      } else {
        const void* nl = std::memchr(text.data() + pos, '\n', text.size() - pos);
        stop = nl == nullptr ? text.size() : static_cast<std::size_t>(static_cast<const char*>(nl) - text.data());
      }
    }
    if (l.split) {
      l.first = static_cast<std::uint32_t>(first);
      out.used += l.count;
    }
    l.length = static_cast<std::uint32_t>(stop - pos);
    pos = stop + 1;
    if (!l.split) continue;
    if (l.count == 0) continue;
    // The id's key is its number when it is one without leading zeros (as writers write ids).
    const PajeToken& id_token = out.tokens[first];
    const FlatStringIndex::Key key = id_token.key();
    std::size_t id = 0;
    if (id_token.keyed() && key.is_number) {
      if (key.number < kSmallIds) l.small_id = static_cast<std::int32_t>(key.number);
    } else if (small_event_id(id_token.text, id)) {
      l.small_id = static_cast<std::int32_t>(id);
    }
  }
}

enum Warn : std::uint8_t {
  wEndWithoutStart, wStartWithoutEnd, wPopWithoutPush, wUndeclaredContainer, wUndeclaredType,
  wUnknownEventId, wUnsupportedEvent, wDuplicateContainer, wPlatformCapped, wMissingSize, wVariableBackwards, wPairedInOrder,
  wBadLnumber, wCount
};
constexpr std::array<const char*, wCount> kWarnText{
    "link end without a matching start",
    "link start without a matching end",
    "pop of an empty state stack",
    "reference to an undeclared container (line skipped)",
    "reference to an undeclared type (line skipped)",
    "event id not defined in the header (line skipped)",
    "event Kanoko does not read (line skipped)",
    "container alias or name declared twice (the later one wins)",
    "platform graph joins more than 4194304 entity pairs (the rest are not reported as links)",
    "line without the last field, Size, that its definition declares (SimGrid writes platform links so; size 0)",
    "variable change dated before an earlier line (SimGrid's lazy resource updates; applied at the current time)",
    "link paired in order with an end of the same sender and receiver, as their keys differ (SMPI receives with "
    "MPI_ANY_TAG)",
    "Lnumber that is not a line number (the state's location has no line)",
};

class PajeParser {
 public:
  PajeParser(std::string name, TraceSink& sink, const PajeOptions& options)
      : name_(std::move(name)), sink_(sink), options_(options), locations_(sink) {
    Type root;
    root.alias = "0";
    root.name = "0";
    types_.push_back(root);
    type_index_.try_emplace("0", 0);
    Container c;
    c.alias = "0";
    c.name = "0";
    containers_.push_back(c);
    container_alias_.try_emplace("0", 0);
    container_name_.try_emplace("0", 0);
    decided_ = !options_.entity_type.empty();
    small_ids_.assign(kSmallIds, -1);
  }

  void parse_line(std::string_view line) {
    ++line_number_;
    if (line.size() > kMaxTextLineBytes) fail_at(1, "line is longer than 16 MiB: not a Pajé trace (binary file?)");
    bom_ = 0;
    if (line_number_ == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") {
      line.remove_prefix(3);
      bom_ = 3;
    }
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i < line.size() && line[i] == '%') {
      tokenize(line, i + 1);
      header_line();
      return;
    }
    tokenize(line, i);
    small_id_ = kIdUnknown;
    body_tokens();
  }

  /// Reads line `number` from the tokens a worker split it into (split_paje_batch).
  void parse_split(std::span<const PajeToken> tokens, std::int32_t small_id, std::int64_t number) {
    line_number_ = number;
    bom_ = 0;
    tokens_ = tokens;
    small_id_ = small_id < 0 ? kIdNotSmall : small_id;
    body_tokens();
  }

  /// Parses line `number` (the lines before it were given, by either call).
  void parse_line_numbered(std::string_view line, std::int64_t number) {
    line_number_ = number - 1;
    parse_line(line);
  }

 private:
  static constexpr std::int32_t kIdUnknown = -1;   ///< the line's event id is not looked at yet
  static constexpr std::int32_t kIdNotSmall = -2;  ///< the event id is not a small one

  /// The rest of a body line once it is split into tokens_.
  void body_tokens() {
    if (tokens_.empty()) return;
    if (in_def_ >= 0) fail(tokens_[0], "event line inside an %EventDef block (missing %EndEventDef?)");
    try {
      body_line();
    } catch (const InputError& e) {
      // A sink may refuse an event (a timeline too long to bin) without knowing where it came from.
      const auto& ds = e.diagnostics();
      if (ds.size() == 1 && ds[0].loc.file.empty()) fail_at(tokens_[0].column, ds[0].message);
      throw;
    }
    if (held_.size() > options_.max_held || blockers_.size() > 4 * options_.max_held) relieve();
  }

 public:
  PajeSummary finish() {
    if (in_def_ >= 0) fail_at(1, "the trace ends inside an %EventDef block (missing %EndEventDef)");
    if (defs_.empty()) fail_at(1, "no %EventDef header: not a Pajé trace");
    if (!decided_) decide();
    if (!options_.entity_type.empty() && !any_chosen_) {
      std::string valid;
      std::vector<std::string> names;
      for (const Type& t : types_) {
        if (t.kind == Kind::Container && &t != types_.data()) {
          names.push_back(t.name);
          valid += (valid.empty() ? "" : ", ") + t.name;
        }
      }
      throw InputError(FileLoc{name_}, "entity type '" + options_.entity_type + "' is not a container type of this trace (expected a "
                                           "PajeDefineContainerType of that name)" +
                                           did_you_mean(options_.entity_type, names) + "; container types: " +
                                           (valid.empty() ? "none" : valid));
    }
    // States still open end with the trace; link starts still pending are paired in order if
    // their keys allow it, else dropped.
    for (std::size_t c = 0; c < containers_.size(); ++c) close_all_states(static_cast<int>(c), last_time_);
    pair_in_order();
    pending_.for_each([&](PendingLinks::Entry& en) {
      for (const PendingLink& p : en.list) warn_at(p.is_start ? wStartWithoutEnd : wEndWithoutStart, p.line);
    });
    pending_.clear();
    blockers_.clear();
    try {
      drain(std::numeric_limits<double>::infinity());
      emit_platform_links();
      sink_.on_end(last_time_);
    } catch (const InputError& e) {
      const auto& ds = e.diagnostics();
      if (ds.size() == 1 && ds[0].loc.file.empty()) fail_at(1, ds[0].message);
      throw;
    }

    PajeSummary s;
    s.containers = containers_.size();
    s.states = states_;
    s.links = links_;
    s.platform_links = platform_links_;
    s.variable_events = variables_;
    s.point_events = point_events_;
    s.end_at = end_line_ > 0 ? FileLoc{name_, end_line_, static_cast<std::int64_t>(end_column_)} : FileLoc{name_};
    std::vector<std::uint64_t> per_type(types_.size(), 0);
    for (std::size_t c = 1; c < containers_.size(); ++c) ++per_type[static_cast<std::size_t>(containers_[c].type)];
    // Types are reported by name: SimGrid defines a HOST type per zone level, with one name.
    std::vector<std::string> chosen;
    for (std::size_t t = 0; t < types_.size(); ++t) {
      const std::string& n = types_[t].name;
      if (per_type[t] > 0) {
        const auto it = std::find_if(s.containers_by_type.begin(), s.containers_by_type.end(),
                                     [&](const auto& e) { return e.first == n; });
        if (it == s.containers_by_type.end()) {
          s.containers_by_type.emplace_back(n, per_type[t]);
        } else {
          it->second += per_type[t];
        }
      }
      if (types_[t].chosen && std::find(chosen.begin(), chosen.end(), n) == chosen.end()) {
        chosen.push_back(n);
        s.entity_type += (s.entity_type.empty() ? "" : ",") + n;
      }
    }
    for (std::size_t w = 0; w < wCount; ++w) {
      if (warn_count_[w] > 0) s.warnings.push_back(PajeWarning{kWarnText[w], warn_count_[w], FileLoc{name_, warn_line_[w], 0}});
    }
    return s;
  }

  [[nodiscard]] std::int64_t next_line_number() const { return line_number_ + 1; }

 private:

  [[noreturn]] void fail_at(std::size_t column, const std::string& msg) const {
    throw InputError(FileLoc{name_, std::max<std::int64_t>(line_number_, 1), static_cast<std::int64_t>(column)}, msg);
  }
  [[noreturn]] void fail(const PajeToken& t, const std::string& msg) const { fail_at(t.column, msg); }

  void warn_at(Warn w, std::int64_t line) {
    if (warn_count_[w]++ == 0) warn_line_[w] = line;
  }
  void warn(Warn w) { warn_at(w, line_number_); }

  void tokenize(std::string_view line, std::size_t i) {
    token_store_.clear();
    std::size_t error_column = 0;
    const char* error = nullptr;
    std::size_t stop = 0;
    if (!split_paje_line(line, 0, i, bom_, token_store_, stop, error_column, error)) fail_at(error_column, error);
    tokens_ = token_store_;
  }

  // ---- header ----

  void header_line() {
    if (tokens_.empty()) {
      if (in_def_ >= 0) return;  // a bare '%' line
      fail_at(1, "expected %EventDef or %EndEventDef");
    }
    const PajeToken& first = tokens_[0];
    if (first.text == "EventDef") {
      if (in_def_ >= 0) fail(first, "%EventDef inside another %EventDef block (missing %EndEventDef?)");
      if (tokens_.size() < 3) fail_at(tokens_.back().column + tokens_.back().text.size(), "missing field: expected '%EventDef NAME ID'");
      if (tokens_.size() > 3) fail(tokens_[3], "unexpected extra field '" + shown(tokens_[3].text) + "' after '%EventDef NAME ID'");
      EventDef d;
      d.name = std::string(tokens_[1].text);
      d.pos.fill(-1);
      for (const EvName& e : kEvents) {
        if (tokens_[1].text == e.name) d.ev = e.ev;
      }
      const std::string_view id = tokens_[2].text;
      if (lookup_def(id) >= 0) fail(tokens_[2], "event id '" + shown(id) + "' is defined twice");
      const int index = static_cast<int>(defs_.size());
      defs_.push_back(std::move(d));
      std::size_t small = 0;
      if (small_event_id(id, small)) {
        small_ids_[small] = index;
      } else {
        big_ids_.emplace(std::string(id), index);
      }
      in_def_ = index;
      def_line_ = line_number_;
      return;
    }
    if (first.text == "EndEventDef") {
      if (in_def_ < 0) fail(first, "%EndEventDef without %EventDef");
      if (tokens_.size() > 1) fail(tokens_[1], "unexpected text after %EndEventDef");
      EventDef& d = defs_[static_cast<std::size_t>(in_def_)];
      for (const Field f : required_fields(d.ev)) {
        if (d.pos[f] < 0) {
          fail(first, "event " + d.name + " (defined on line " + std::to_string(def_line_) + ") lacks the field '" +
                          kFieldNames[f] + "'");
        }
      }
      d.complete = true;
      if (d.ev == Ev::PushState && d.pos[fFname] >= 0 && d.pos[fLnumber] >= 0) call_locations_ = true;
      in_def_ = -1;
      return;
    }
    if (in_def_ < 0) fail(first, "expected %EventDef or %EndEventDef, found '%" + shown(first.text) + "'");
    if (tokens_.size() < 2) fail_at(first.column + first.text.size(), "missing field type: expected '% NAME TYPE'");
    if (tokens_.size() > 2) fail(tokens_[2], "unexpected extra text after '% NAME TYPE'");
    const std::string_view type = tokens_[1].text;
    if (type != "date" && type != "int" && type != "double" && type != "hex" && type != "string" && type != "color") {
      fail(tokens_[1], "unknown field type '" + shown(type) + "'" +
                           did_you_mean(type, {"date", "int", "double", "hex", "string", "color"}) +
                           "; valid: date, int, double, hex, string, color");
    }
    EventDef& d = defs_[static_cast<std::size_t>(in_def_)];
    const Field f = field_of(first.text);
    if (f != kFieldCount) {
      if (d.pos[f] >= 0) fail(first, "field '" + shown(first.text) + "' given twice in " + d.name);
      d.pos[f] = static_cast<int>(d.field_count);
    }
    ++d.field_count;
  }

  int lookup_def(std::string_view id) const {
    std::size_t small = 0;
    if (small_event_id(id, small)) return small_ids_[small];
    const auto it = big_ids_.find(id);
    return it == big_ids_.end() ? -1 : it->second;
  }

  // ---- body ----

  const PajeToken& field(const EventDef& d, Field f) const { return tokens_[static_cast<std::size_t>(d.pos[f]) + 1]; }
  bool has(const EventDef& d, Field f) const { return d.pos[f] >= 0 && static_cast<std::size_t>(d.pos[f]) < line_fields_; }

  double time_of(const EventDef& d) {
    const PajeToken& t = field(d, fTime);
    double v = 0;
    if (t.scanned()) {
      v = t.number();
      if (!t.is_number() || !std::isfinite(v)) fail(t, "expected a time in seconds, found '" + shown(t.text) + "'");
    } else if (!time_text_.empty() && FlatStringIndex::equal(time_text_, t.text)) {
      v = time_value_;  // consecutive lines often share their time stamp: no parse
    } else if (!parse_double(t.text, v) || !std::isfinite(v)) {
      fail(t, "expected a time in seconds, found '" + shown(t.text) + "'");
    }
    if (v < 0) fail(t, "time must be >= 0, found " + shown(t.text));
    if (v < last_time_ && (d.ev == Ev::SetVariable || d.ev == Ev::AddVariable || d.ev == Ev::SubVariable)) {
      // SimGrid's resource tracing (tracing/uncategorized) updates variables lazily and may date
      // a change before lines already written: applied now.
      warn(wVariableBackwards);
      return last_time_;
    }
    if (v < last_time_) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.9g", last_time_);
      fail(t, "time goes backwards: " + shown(t.text) + " after " + buf + " (Pajé events must be sorted by time)");
    }
    // The entity types are chosen when the first state is read or the clock leaves the start
    // time: SimGrid declares the platform (HOST, LINK) at the start, the MPI ranks soon after.
    if (v > last_time_) {
      if (!decided_ && seen_time_) decide();
      end_line_ = line_number_;  // times never go back: the first line at the latest time sets the end
      end_column_ = t.column;
    }
    seen_time_ = true;
    last_time_ = v;
    if (!t.scanned() && t.text.size() <= 32) {
      time_text_.assign(t.text);
      time_value_ = v;
    }
    return v;
  }

  double number(const PajeToken& t, const char* what) const {
    double v = t.number();
    if (!(t.scanned() ? t.is_number() : parse_double(t.text, v)) || !std::isfinite(v)) {
      fail(t, std::string("expected ") + what + ", found '" + shown(t.text) + "'");
    }
    return v;
  }

  /// `t` in a name index, with the key a worker computed when it did. A small number's lookup is
  /// inlined here; the rest is flattened (the index's find, alone, is not inlined).
  static const std::uint32_t* lookup(const FlatStringIndex& index, const PajeToken& t) {
    if ((t.flags & (PajeToken::kKeyed | PajeToken::kKeyIsNumber)) == (PajeToken::kKeyed | PajeToken::kKeyIsNumber)) {
      // A small number (SimGrid's aliases): an array index, inlined here.
      FlatStringIndex::Key k;
      k.is_number = true;
      k.number = static_cast<std::size_t>(t.payload);
      return index.find(t.text, k);
    }
    return lookup_named(index, t);
  }
  [[gnu::flatten, gnu::noinline]] static const std::uint32_t* lookup_named(const FlatStringIndex& index, const PajeToken& t) {
    return t.keyed() ? index.find(t.text, t.key()) : index.find(t.text);
  }

  int find_type(const PajeToken& t) {
    const std::uint32_t* found = lookup(type_index_, t);
    if (found == nullptr) {
      warn(wUndeclaredType);
      return -1;
    }
    return static_cast<int>(*found);
  }
  [[gnu::always_inline]] int find_container(const PajeToken& t) {
    // An alias names a container before a name does: SimGrid's MSG traces call a host "3" by
    // alias and a network link "3" by name.
    const std::uint32_t* found = lookup(container_alias_, t);
    if (found == nullptr) found = lookup(container_name_, t);
    if (found == nullptr) {
      warn(wUndeclaredContainer);
      return -1;
    }
    return static_cast<int>(*found);
  }

  void body_line() {
    const PajeToken& id = tokens_[0];
    int index = 0;
    if (small_id_ >= 0) {
      index = small_ids_[static_cast<std::size_t>(small_id_)];
    } else if (small_id_ == kIdNotSmall) {
      const auto it = big_ids_.find(id.text);
      index = it == big_ids_.end() ? -1 : it->second;
    } else {
      index = lookup_def(id.text);
    }
    if (index < 0 || !defs_[static_cast<std::size_t>(index)].complete) {
      warn(wUnknownEventId);
      return;
    }
    const EventDef& d = defs_[static_cast<std::size_t>(index)];
    const std::size_t have = tokens_.size() - 1;
    line_fields_ = have;
    if (have + 1 == d.field_count && d.pos[fSize] == static_cast<int>(have) &&
        (d.ev == Ev::StartLink || d.ev == Ev::PushState)) {
      // SimGrid 3.32 with display-sizes writes the platform's topology links without the Size
      // its header declares.
      warn(wMissingSize);
    } else if (have < d.field_count) {
      const PajeToken& last = tokens_.back();
      fail_at(last.column + last.text.size(), "missing field: " + d.name + " takes " + std::to_string(d.field_count) +
                                                  " fields, found " + std::to_string(have));
    }
    if (have == d.field_count + 2 && d.ev == Ev::PopState && call_locations_) {
      // SimGrid 3.32 with smpi/trace-call-location writes Fname and Lnumber on PopState lines too,
      // though its header declares them on PajePushState only; they repeat the push's.
    } else if (have > d.field_count) {
      fail(tokens_[d.field_count + 1], "unexpected extra field '" + shown(tokens_[d.field_count + 1].text) + "': " +
                                           d.name + " takes " + std::to_string(d.field_count) + " fields");
    }
    switch (d.ev) {
      case Ev::DefContainerType:
      case Ev::DefStateType:
      case Ev::DefEventType:
      case Ev::DefVariableType:
      case Ev::DefLinkType: define_type(d); return;
      case Ev::DefEntityValue: define_entity_value(d); return;
      case Ev::CreateContainer: create_container(d); return;
      case Ev::DestroyContainer: destroy_container(d); return;
      case Ev::Unsupported: warn(wUnsupportedEvent); return;
      default: break;
    }
    // A line at the time of the line before (SimGrid writes runs of them: 1000 distinct times in
    // the 850 880 lines of the halo trace) needs none of time_of's checks.
    const PajeToken& time = field(d, fTime);
    const double t = time.scanned() && time.is_number() && seen_time_ && time.number() == last_time_ ? last_time_
                                                                                                        : time_of(d);
    if (!decided_ && (d.ev == Ev::SetState || d.ev == Ev::PushState || d.ev == Ev::PopState || d.ev == Ev::ResetState)) {
      decide();
    }
    const int type = find_type(field(d, fType));
    if (type < 0) return;
    const int c = find_container(field(d, fContainer));
    if (c < 0) return;
    switch (d.ev) {
      case Ev::SetState:
      case Ev::PushState: push_state(d, t, c, type); break;
      case Ev::PopState: pop_state(t, c, type); break;
      case Ev::ResetState: reset_state(t, c, type); break;
      case Ev::SetVariable:
      case Ev::AddVariable:
      case Ev::SubVariable: variable(d, t, c, type); break;
      case Ev::StartLink:
      case Ev::EndLink: link(d, t, c); break;
      case Ev::NewEvent:
        ++point_events_;
        // Point events are markers (iteration starts): docs/trace-formats.md.
        hold(Held{t, seq_++, Held::What::Marker, c, 0, t, 0, state_value(type, field(d, fValue))});
        break;
      default: break;
    }
    drain(watermark());
  }

  void define_type(const EventDef& d) {
    Type ty;
    ty.alias = std::string(field(d, has(d, fAlias) ? fAlias : fName).text);
    ty.name = std::string(field(d, fName).text);
    ty.kind = d.ev == Ev::DefContainerType  ? Kind::Container
              : d.ev == Ev::DefStateType    ? Kind::State
              : d.ev == Ev::DefVariableType ? Kind::Variable
              : d.ev == Ev::DefLinkType     ? Kind::Link
                                            : Kind::Event;
    const int parent = find_type(field(d, fType));
    if (parent < 0) return;
    ty.parent = parent;
    Type& p = types_[static_cast<std::size_t>(parent)];
    if (ty.kind == Kind::Container) p.has_child_container = true;
    if (ty.kind == Kind::State) p.has_state = true;
    if (ty.kind == Kind::Container && !options_.entity_type.empty() &&
        (ty.alias == options_.entity_type || ty.name == options_.entity_type)) {
      ty.chosen = true;
      any_chosen_ = true;
    }
    const int index = static_cast<int>(types_.size());
    *type_index_.try_emplace(ty.alias, static_cast<std::uint32_t>(index)).first = static_cast<std::uint32_t>(index);
    type_index_.try_emplace(ty.name, static_cast<std::uint32_t>(index));
    types_.push_back(std::move(ty));
  }

  /// A value name (PajeDefineEntityValue) that states of its type may give by alias: SimGrid
  /// 3.32 writes `5 16 2 computing "0 1 1"` and then pushes value `16`.
  void define_entity_value(const EventDef& d) {
    const int type = find_type(field(d, fType));
    if (type < 0) return;
    const std::uint32_t name = intern(field(d, fName));
    if (!has(d, fAlias)) return;
    const std::uint32_t alias = intern(field(d, fAlias));
    if (alias == name) return;
    *entity_values_.try_emplace(value_key(type, alias), name).first = name;
  }

  static std::uint64_t value_key(int type, std::uint32_t value) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(type)) << 32U) | value;
  }

  /// The index of a value's text among the value names.
  std::uint32_t intern(const PajeToken& t) {
    if (const std::uint32_t* id = lookup(value_ids_, t)) return *id;
    if (value_names_.size() >= kMaxValueNames) fail(t, "more than " + std::to_string(kMaxValueNames) + " distinct state values");
    const auto id = static_cast<std::uint32_t>(value_names_.size());
    value_ids_.try_emplace(t.text, id);
    value_names_.emplace_back(t.text);
    return id;
  }

  /// The name a state's Value field gives: an entity value's name when the field is its alias.
  std::uint32_t state_value(int type, const PajeToken& t) {
    const std::uint32_t id = intern(t);
    if (entity_values_.size() == 0) return id;
    const std::uint32_t* name = entity_values_.find(value_key(type, id));
    return name != nullptr ? *name : id;
  }

  void create_container(const EventDef& d) {
    time_of(d);
    const int type = find_type(field(d, fType));
    if (type < 0) return;
    const int parent = find_container(field(d, fContainer));
    if (parent < 0) return;
    Container c;
    c.name = std::string(field(d, fName).text);
    c.alias = has(d, fAlias) ? std::string(field(d, fAlias).text) : c.name;
    c.type = type;
    c.parent = parent;
    const int index = static_cast<int>(containers_.size());
    bool dup = false;
    const auto add = [&](FlatStringIndex& to, const std::string& key) {
      const auto [value, inserted] = to.try_emplace(key, static_cast<std::uint32_t>(index));
      if (!inserted) {
        dup = true;
        *value = static_cast<std::uint32_t>(index);
      }
    };
    if (has(d, fAlias)) add(container_alias_, c.alias);
    add(container_name_, c.name);
    if (dup) warn(wDuplicateContainer);
    containers_.push_back(std::move(c));
    if (decided_) attribute(index);
  }

  void destroy_container(const EventDef& d) {
    const double t = time_of(d);
    if (find_type(field(d, fType)) < 0) return;
    const int c = find_container(field(d, fName));
    if (c < 0) return;
    close_all_states(c, t);
    drain(watermark());
  }

  /// Chooses the entity types by the default rule, then attributes every container so far.
  void decide() {
    decided_ = true;
    if (options_.entity_type.empty()) {
      const auto choose = [&](auto pred) {
        for (std::size_t t = 1; t < types_.size(); ++t) {
          if (types_[t].kind == Kind::Container && pred(types_[t])) {
            types_[t].chosen = true;
            any_chosen_ = true;
          }
        }
      };
      choose([](const Type& t) { return t.name == "MPI" || t.alias == "MPI"; });
      if (!any_chosen_) choose([](const Type& t) { return !t.has_child_container && t.has_state; });
      if (!any_chosen_) choose([](const Type& t) { return t.name == "HOST" || t.alias == "HOST"; });
      if (!any_chosen_) choose([](const Type& t) { return !t.has_child_container; });
    }
    for (std::size_t c = 1; c < containers_.size(); ++c) attribute(static_cast<int>(c));
  }

  void attribute(int index) {
    Container& c = containers_[static_cast<std::size_t>(index)];
    const Container& parent = containers_[static_cast<std::size_t>(c.parent)];
    if (!types_[static_cast<std::size_t>(c.type)].chosen) {
      c.entity = parent.entity;
      return;
    }
    if (entity_count_ >= std::numeric_limits<EntityIndex>::max()) fail_at(1, "too many entities");
    Entity e;
    e.index = static_cast<EntityIndex>(entity_count_++);
    e.id = index;
    e.name = c.name;
    e.rank = static_cast<std::int64_t>(e.index);
    std::int64_t rank = 0;
    if (c.name.rfind("rank-", 0) == 0) {
      const auto r = std::from_chars(c.name.data() + 5, c.name.data() + c.name.size(), rank);
      if (r.ec == std::errc() && r.ptr == c.name.data() + c.name.size() && rank >= 0) e.rank = rank;
    }
    // The host is the nearest HOST container above; the containers above it (above the entity when
    // there is none, as for the HOST entities of a platform trace) are its enclosing ones, the root
    // (index 0, one container holding everything) left out: SimGrid's zones, by depth "L1", "L2".
    int above = c.parent;
    for (int a = c.parent; a > 0; a = containers_[static_cast<std::size_t>(a)].parent) {
      const Type& at = types_[static_cast<std::size_t>(containers_[static_cast<std::size_t>(a)].type)];
      if (at.name == "HOST" || at.alias == "HOST") {
        e.host = containers_[static_cast<std::size_t>(a)].name;
        above = containers_[static_cast<std::size_t>(a)].parent;
        break;
      }
    }
    for (int a = above; a > 0; a = containers_[static_cast<std::size_t>(a)].parent) {
      const Container& ac = containers_[static_cast<std::size_t>(a)];
      e.above_host.push_back({types_[static_cast<std::size_t>(ac.type)].name, ac.name});
    }
    c.entity = static_cast<std::int64_t>(e.index);
    c.is_entity = true;
    sink_.on_entity(e);
  }

  // ---- states ----

  static std::uint64_t stack_key(int c, int type) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(c)) << 32U) | static_cast<std::uint32_t>(type);
  }

  std::vector<OpenState>& stack(int c, int type) {
    const auto [index, inserted] = stack_index_.try_emplace(stack_key(c, type), static_cast<std::uint32_t>(stacks_.size()));
    if (inserted) {
      stacks_.emplace_back();
      containers_[static_cast<std::size_t>(c)].state_types.push_back(static_cast<std::uint32_t>(type));
    }
    return stacks_[*index];
  }
  /// The stack of a container and state type, or nullptr when it never had a state.
  std::vector<OpenState>* find_stack(std::uint64_t key) {
    const std::uint32_t* index = stack_index_.find(key);
    return index == nullptr ? nullptr : &stacks_[*index];
  }

  void close_state(int c, const OpenState& s, double end_s) {
    if (s.blocker != kNone) kill_blocker(s.blocker);
    const Container& con = containers_[static_cast<std::size_t>(c)];
    if (!con.is_entity) return;
    hold(Held{s.begin_s, seq_++, Held::What::State, c, 0, end_s, 0, s.value, s.location});
  }

  void push_state(const EventDef& d, double t, int c, int type) {
    ++states_;
    auto& st = stack(c, type);
    if (d.ev == Ev::SetState && !st.empty()) {
      close_state(c, st.back(), t);
      st.pop_back();
    }
    if (st.size() >= kMaxDepth) {
      fail(tokens_[0], "states nested deeper than " + std::to_string(kMaxDepth) + " on one container (pushes without pops?)");
    }
    const bool tracked = containers_[static_cast<std::size_t>(c)].is_entity;
    const LocationIndex location = call_locations_ && has(d, fFname) && has(d, fLnumber) ? call_location(d) : 0;
    st.push_back(OpenState{t, state_value(type, field(d, fValue)), location,
                           tracked ? add_blocker(t, false, stack_key(c, type), PendingLinks::kNoEntry) : kNone});
    if (call_locations_) set_top_location(c, location);
  }

  /// The location a PushState's Fname and Lnumber name (SimGrid SMPI's call sites).
  /// Each state of an SMPI trace names its call site; a program has a few dozen, visited by rank
  /// after rank, so a small cache of the texts seen saves building and hashing the location
  /// table's key for nearly every state (docs/profile.md, "Reading speed").
  LocationIndex call_location(const EventDef& d) {
    const std::string_view file = field(d, fFname).text;
    const std::string_view line_text = field(d, fLnumber).text;
    std::size_t h = file.size();
    for (const char c : line_text) h = h * 31 + static_cast<unsigned char>(c);
    for (const char c : file.substr(file.size() - std::min<std::size_t>(file.size(), 8))) h = h * 31 + static_cast<unsigned char>(c);
    SiteCache& slot = site_cache_[h % site_cache_.size()];
    if (slot.used && file == slot.fname && line_text == slot.lnumber) {
      if (slot.bad_line) warn(wBadLnumber);
      return slot.location;
    }
    std::int64_t line = 0;
    const auto r = std::from_chars(line_text.data(), line_text.data() + line_text.size(), line);
    slot.bad_line = r.ec != std::errc() || r.ptr != line_text.data() + line_text.size() || line_text.empty() || line < 0;
    if (slot.bad_line) {
      warn(wBadLnumber);
      line = 0;
    }
    slot.used = true;
    slot.fname.assign(file);
    slot.lnumber.assign(line_text);
    slot.location = locations_.intern(file, line, {}, 0);
    return slot.location;
  }

  /// The call site a container is in now: its innermost open state's (SMPI has one state type).
  void set_top_location(int c, LocationIndex location) {
    if (top_location_.size() <= static_cast<std::size_t>(c)) top_location_.resize(static_cast<std::size_t>(c) + 1, 0);
    top_location_[static_cast<std::size_t>(c)] = location;
  }
  [[nodiscard]] LocationIndex top_location(int c) const {
    return static_cast<std::size_t>(c) < top_location_.size() ? top_location_[static_cast<std::size_t>(c)] : 0;
  }

  void pop_state(double t, int c, int type) {
    std::vector<OpenState>* st = find_stack(stack_key(c, type));
    if (st == nullptr || st->empty()) {
      warn(wPopWithoutPush);
      return;
    }
    close_state(c, st->back(), t);
    st->pop_back();
    if (call_locations_) set_top_location(c, st->empty() ? 0 : st->back().location);
  }

  void reset_state(double t, int c, int type) {
    std::vector<OpenState>* st = find_stack(stack_key(c, type));
    if (st == nullptr) return;
    while (!st->empty()) {
      close_state(c, st->back(), t);
      st->pop_back();
    }
  }

  void close_all_states(int c, double t) {
    for (const std::uint32_t type : containers_[static_cast<std::size_t>(c)].state_types) {
      reset_state(t, c, static_cast<int>(type));
    }
  }

  // ---- variables ----

  void variable(const EventDef& d, double t, int c, int type) {
    ++variables_;
    const double v = number(field(d, fValue), "a number");
    const Type& ty = types_[static_cast<std::size_t>(type)];
    const Container& con = containers_[static_cast<std::size_t>(c)];
    if (options_.load_variable.empty() || (decided_ && !con.is_entity) ||
        (ty.alias != options_.load_variable && ty.name != options_.load_variable)) {
      return;
    }
    double& value = values_[stack_key(c, type)];
    value = d.ev == Ev::SetVariable ? v : d.ev == Ev::AddVariable ? value + v : value - v;
    // A load's value travels in t2; a negative one (a variable below zero) is no load.
    hold(Held{t, seq_++, Held::What::Load, c, 0, std::max(0.0, value), 0, 0});
  }

  // ---- links ----

  void link(const EventDef& d, double t, int c) {
    const bool is_start = d.ev == Ev::StartLink;
    const int other = find_container(field(d, is_start ? fStartContainer : fEndContainer));
    if (other < 0) return;
    std::uint64_t bytes = 0;
    if (is_start && has(d, fSize)) {
      const double size = number(field(d, fSize), "a size in bytes");
      if (size < 0 || size > 1.8e19) fail(field(d, fSize), "size must be between 0 and 1.8e19 bytes, found " + shown(field(d, fSize).text));
      bytes = static_cast<std::uint64_t>(std::llround(size));
    }
    char number[16];
    key_.assign(number, std::to_chars(number, number + sizeof number, c).ptr);
    key_ += '\x1f';
    key_ += field(d, fValue).text;
    key_ += '\x1f';
    key_ += field(d, fKey).text;
    const std::uint64_t h = FlatStringIndex::digest(key_);
    std::uint32_t entry = pending_.find(key_, h);
    if (entry != PendingLinks::kNoEntry) {
      auto& list = pending_[entry].list;
      const auto match = std::find_if(list.begin(), list.end(), [&](const PendingLink& p) { return p.is_start != is_start; });
      if (match != list.end()) {
        const PendingLink p = *match;
        list.erase(match);
        if (list.empty()) pending_.erase(entry);
        if (p.blocker != kNone) kill_blocker(p.blocker);
        ++links_;
        const int src = is_start ? other : p.other;
        const int dst = is_start ? p.other : other;
        note_platform_edge(src, dst);
        // Before the entity types are chosen every message is held; drain() drops the ones
        // that do not join two entities.
        if (!decided_ || (containers_[static_cast<std::size_t>(src)].entity >= 0 &&
                          containers_[static_cast<std::size_t>(dst)].entity >= 0)) {
          const double send = is_start ? t : p.time_s;
          const double recv = is_start ? p.time_s : t;
          const LocationIndex location = is_start ? top_location(other) : p.location;
          hold(Held{send, seq_++, Held::What::Message, src, dst, recv, is_start ? bytes : p.bytes, 0, location});
        }
        return;
      }
    }
    const bool tracked = is_start && (!decided_ || containers_[static_cast<std::size_t>(other)].entity >= 0);
    if (entry == PendingLinks::kNoEntry) entry = pending_.insert(key_, h);
    pending_[entry].list.push_back(PendingLink{is_start, t, other, is_start ? top_location(other) : 0, bytes, line_number_,
                                               tracked ? add_blocker(t, true, 0, entry) : kNone});
  }

  /// The part of a pending entry's key ("container\x1fvalue\x1fkey") that names the sender
  /// and the receiver: a SimGrid key `src_dst_tag_counter` without its tag and counter. Empty
  /// when the key has fewer than four `_`-separated fields (an opaque key: no pairing).
  static std::string_view pair_class(std::string_view entry_key) {
    const std::size_t sep = entry_key.rfind('\x1f');
    if (sep == std::string_view::npos) return {};
    const std::string_view key = entry_key.substr(sep + 1);
    const std::size_t counter = key.rfind('_');
    if (counter == std::string_view::npos || counter == 0) return {};
    const std::size_t tag = key.rfind('_', counter - 1);
    if (tag == std::string_view::npos || key.substr(0, tag).find('_') == std::string_view::npos) return {};
    return entry_key.substr(0, sep + 1 + tag);
  }

  /// Pairs the link ends whose keys never matched (SMPI writes the MPI_ANY_TAG wildcard in the
  /// receiver's key and its own counter): per link container, value, sender and receiver, the
  /// k-th unmatched start in file order with the k-th unmatched end.
  void pair_in_order() {
    struct Ends {
      std::vector<PendingLink> starts;
      std::vector<PendingLink> ends;
    };
    // Classes are numbered through a flat index (no string built per entry) and paired in the
    // order of their names. The names point into the pending entries' keys, which stay until
    // the table is cleared.
    FlatStringIndex class_ids;
    std::vector<std::string_view> names;
    std::vector<Ends> classes;
    // The ends are sorted by line below, and the classes by name: the visiting order is free.
    pending_.for_each_stored([&](PendingLinks::Entry& en) {
      const std::string_view cls = pair_class(en.key);
      if (cls.empty()) return;
      const auto [id, added] = class_ids.try_emplace(cls, static_cast<std::uint32_t>(classes.size()));
      if (added) {
        names.push_back(cls);
        classes.emplace_back();
      }
      Ends& ends = classes[*id];
      for (const PendingLink& p : en.list) (p.is_start ? ends.starts : ends.ends).push_back(p);
      en.list.clear();
    });
    std::vector<std::uint32_t> order(classes.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return names[a] < names[b]; });
    const auto by_line = [](const PendingLink& a, const PendingLink& b) { return a.line < b.line; };
    for (const std::uint32_t id : order) {
      Ends& ends = classes[id];
      std::sort(ends.starts.begin(), ends.starts.end(), by_line);
      std::sort(ends.ends.begin(), ends.ends.end(), by_line);
      const std::size_t n = std::min(ends.starts.size(), ends.ends.size());
      for (std::size_t k = 0; k < n; ++k) {
        const PendingLink& from = ends.starts[k];
        const PendingLink& to = ends.ends[k];
        warn_at(wPairedInOrder, to.line);
        ++links_;
        const Container& src = containers_[static_cast<std::size_t>(from.other)];
        const Container& dst = containers_[static_cast<std::size_t>(to.other)];
        if (src.entity >= 0 && dst.entity >= 0) {
          hold(Held{from.time_s, seq_++, Held::What::Message, from.other, to.other, to.time_s, from.bytes, 0});
        }
      }
      for (std::size_t k = n; k < ends.starts.size(); ++k) warn_at(wStartWithoutEnd, ends.starts[k].line);
      for (std::size_t k = n; k < ends.ends.size(); ++k) warn_at(wEndWithoutStart, ends.ends[k].line);
    }
  }

  // ---- the platform graph ----

  /// Remembers the containers a matched link joins, once per pair, unless it is a message
  /// between two entities: what is left is the platform graph (SimGrid's `topology` links
  /// between hosts, routers and network links).
  void note_platform_edge(int a, int b) {
    if (a == b) return;
    if (decided_ && containers_[static_cast<std::size_t>(a)].entity >= 0 &&
        containers_[static_cast<std::size_t>(b)].entity >= 0) {
      return;
    }
    const auto lo = static_cast<std::uint64_t>(std::min(a, b));
    const auto hi = static_cast<std::uint64_t>(std::max(a, b));
    if (platform_pairs_.try_emplace((lo << 32U) | hi, 0).second) platform_edges_.emplace_back(std::min(a, b), std::max(a, b));
  }

  /// Reduces the platform graph to links between entities (docs/trace-formats.md, "Platform
  /// links"): two entities are joined when a path of non-entity containers (network links,
  /// routers, zones) joins them on which no container but the last touches another entity and
  /// at most one router lies. A torus's hosts are joined to their torus neighbours, a cluster's
  /// hosts behind its router to each other, hosts of different clusters not.
  void emit_platform_links() {
    const std::size_t n = containers_.size();
    const auto entity_of = [&](std::size_t c) { return containers_[c].entity; };
    // The graph without entity-entity edges, as adjacency lists in one array.
    std::vector<std::uint32_t> begin(n + 1, 0);
    std::vector<std::pair<int, int>> edges;
    for (const auto& [a, b] : platform_edges_) {
      const auto ua = static_cast<std::size_t>(a);
      const auto ub = static_cast<std::size_t>(b);
      if (entity_of(ua) >= 0 && entity_of(ub) >= 0) continue;
      edges.emplace_back(a, b);
      ++begin[ua + 1];
      ++begin[ub + 1];
    }
    platform_edges_.clear();
    platform_edges_.shrink_to_fit();
    if (edges.empty()) return;
    for (std::size_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
    std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
    std::vector<std::uint32_t> adjacent(begin[n]);
    // The entity each non-entity container touches: -1 none, -2 several.
    std::vector<std::int64_t> touches(n, -1);
    const auto touch = [&](std::size_t x, std::int64_t e) {
      if (touches[x] == -1) {
        touches[x] = e;
      } else if (touches[x] != e) {
        touches[x] = -2;
      }
    };
    for (const auto& [a, b] : edges) {
      const auto ua = static_cast<std::size_t>(a);
      const auto ub = static_cast<std::size_t>(b);
      adjacent[fill[ua]++] = static_cast<std::uint32_t>(b);
      adjacent[fill[ub]++] = static_cast<std::uint32_t>(a);
      if (entity_of(ua) >= 0) touch(ub, entity_of(ua));
      if (entity_of(ub) >= 0) touch(ua, entity_of(ub));
    }
    // Routers (containers of a type named ROUTER) may be crossed once per path.
    std::vector<std::uint8_t> router(n, 0);
    for (std::size_t c = 1; c < n; ++c) {
      const Type& t = types_[static_cast<std::size_t>(containers_[c].type)];
      router[c] = t.name == "ROUTER" || t.alias == "ROUTER" ? 1 : 0;
    }
    FlatIndex found;
    std::vector<std::pair<EntityIndex, EntityIndex>> pairs;
    std::array<std::vector<std::size_t>, 2> stamp{std::vector<std::size_t>(n, 0), std::vector<std::size_t>(n, 0)};
    std::vector<std::pair<std::uint32_t, std::uint8_t>> queue;  ///< (container, routers crossed)
    bool capped = false;
    for (std::size_t c = 1; c < n && !capped; ++c) {
      const std::int64_t s = entity_of(c);
      if (s < 0 || begin[c] == begin[c + 1]) continue;
      queue.clear();
      const auto visit = [&](std::size_t y, std::uint8_t crossed) {
        const auto k = static_cast<std::uint8_t>(crossed + router[y]);
        if (k > 1 || stamp[k][y] == c) return;
        stamp[k][y] = c;
        queue.emplace_back(static_cast<std::uint32_t>(y), k);
      };
      for (std::uint32_t i = begin[c]; i < begin[c + 1]; ++i) visit(adjacent[i], 0);
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const auto [x, crossed] = queue[q];
        const bool expand = touches[x] == -1 || touches[x] == s;
        for (std::uint32_t i = begin[x]; i < begin[x + 1]; ++i) {
          const std::size_t y = adjacent[i];
          const std::int64_t e = entity_of(y);
          if (e >= 0) {
            if (e == s) continue;
            const auto lo = static_cast<EntityIndex>(std::min(s, e));
            const auto hi = static_cast<EntityIndex>(std::max(s, e));
            if (found.try_emplace((std::uint64_t{lo} << 32U) | hi, 0).second) pairs.emplace_back(lo, hi);
            if (pairs.size() >= kMaxPlatformLinks) capped = true;
          } else if (expand) {
            visit(y, crossed);
          }
        }
      }
    }
    if (capped) warn_at(wPlatformCapped, line_number_);
    std::sort(pairs.begin(), pairs.end());
    std::vector<std::size_t> container_of(entity_count_, 0);
    for (std::size_t c = 1; c < n; ++c) {
      if (containers_[c].is_entity) container_of[static_cast<std::size_t>(containers_[c].entity)] = c;
    }
    for (const auto& [a, b] : pairs) {
      Link l;
      l.id = static_cast<std::int64_t>(platform_links_++);
      l.a = a;
      l.b = b;
      l.name = containers_[container_of[a]].name + "-" + containers_[container_of[b]].name;
      sink_.on_link(l);
    }
  }

  // ---- time order ----

  std::uint64_t add_blocker(double t, bool is_link, std::uint64_t skey, std::uint32_t entry) {
    blockers_.push_back(Blocker{t, true, is_link, skey, entry});
    return blocker_base_ + blockers_.size() - 1;
  }
  void kill_blocker(std::uint64_t seq) {
    if (seq >= blocker_base_ && seq - blocker_base_ < blockers_.size()) {
      blockers_[seq - blocker_base_].alive = false;
    }
  }
  [[gnu::always_inline]] double watermark() {
    if (!decided_) return -std::numeric_limits<double>::infinity();
    while (!blockers_.empty() && !blockers_.front().alive) {
      blockers_.pop_front();
      ++blocker_base_;
    }
    return blockers_.empty() ? last_time_ : std::min(blockers_.front().t, last_time_);
  }

  void hold(const Held& h) { held_.push(h); }

  void drain(double until) {
    // Most lines release nothing: the call is made only when the earliest held event is due.
    if (held_.due(until)) held_.drain(until, [this](const Held& h) { emit(h); });
  }

  /// Passes a held event to the sink (an entity's state, load or marker, a message between two
  /// entities; the rest are dropped).
  void emit(const Held& h) {
    const Container& a = containers_[static_cast<std::size_t>(h.a)];
    switch (h.what) {
      case Held::What::State: {
        if (!a.is_entity) break;
        StateInterval s;
        s.begin_s = h.t;
        s.end_s = h.t2;
        s.entity = static_cast<EntityIndex>(a.entity);
        s.name = value_names_[h.name];
        s.location = h.location;
        sink_.on_state(s);
        break;
      }
      case Held::What::Message: {
        const Container& b = containers_[static_cast<std::size_t>(h.b)];
        if (a.entity < 0 || b.entity < 0) break;
        Message m;
        m.send_s = h.t;
        m.recv_s = h.t2;
        m.src = static_cast<EntityIndex>(a.entity);
        m.dst = static_cast<EntityIndex>(b.entity);
        m.bytes = h.bytes;
        m.location = h.location;
        sink_.on_message(m);
        break;
      }
      case Held::What::Load:
        if (a.is_entity) sink_.on_load(LoadSample{h.t, static_cast<EntityIndex>(a.entity), h.t2});
        break;
      case Held::What::Marker:
        if (a.is_entity) sink_.on_marker(Marker{h.t, static_cast<EntityIndex>(a.entity), value_names_[h.name]});
        break;
    }
  }

  /// Too much held back: emit the oldest open state up to now and drop the oldest pending start.
  void relieve() {
    if (!decided_) decide();
    while (held_.size() > options_.max_held / 2 || blockers_.size() > 2 * options_.max_held) {
      watermark();
      // Only a blocker older than now holds events back; states re-opened now come after it.
      if (blockers_.empty() || !(blockers_.front().t < last_time_)) break;
      const Blocker b = blockers_.front();
      blockers_.pop_front();
      ++blocker_base_;
      if (b.is_link) {
        // The blocker is alive, so its link is still pending in this entry.
        auto& list = pending_[b.link_entry].list;
        const auto victim = std::find_if(list.begin(), list.end(), [&](const PendingLink& p) { return p.blocker == blocker_base_ - 1; });
        if (victim != list.end()) {
          warn_at(wStartWithoutEnd, victim->line);
          list.erase(victim);
        }
        if (list.empty()) pending_.erase(b.link_entry);
      } else {
        const int c = static_cast<int>(b.stack_key >> 32U);
        std::vector<OpenState>& st = *find_stack(b.stack_key);
        for (OpenState& s : st) {
          if (s.blocker != blocker_base_ - 1) continue;
          if (last_time_ > s.begin_s) {
            hold(Held{s.begin_s, seq_++, Held::What::State, c, 0, last_time_, 0, s.value, s.location});
          }
          s.begin_s = last_time_;
          s.blocker = add_blocker(last_time_, false, b.stack_key, PendingLinks::kNoEntry);
        }
      }
      drain(watermark());
    }
  }

  std::string name_;
  TraceSink& sink_;
  PajeOptions options_;
  // SMPI call sites (Fname/Lnumber of PushState)
  LocationTable locations_;
  bool call_locations_ = false;  ///< PajePushState is defined with Fname and Lnumber
  struct SiteCache {
    std::string fname, lnumber;  ///< the texts as written
    LocationIndex location = 0;
    bool bad_line = false;       ///< the Lnumber is no line (warned at each use)
    bool used = false;
  };
  std::array<SiteCache, 64> site_cache_;  ///< direct-mapped by a hash of the texts
  std::vector<LocationIndex> top_location_;  ///< per container: its innermost open state's call site
  std::int64_t line_number_ = 0;
  std::int64_t end_line_ = 0;    ///< the first line at the latest time (0: no time past 0)
  std::size_t end_column_ = 0;
  std::size_t bom_ = 0;
  std::span<const PajeToken> tokens_;  ///< the line's tokens: token_store_'s or a worker's
  std::vector<PajeToken> token_store_;
  std::int32_t small_id_ = kIdUnknown;  ///< the line's event id as a worker read it
  std::size_t line_fields_ = 0;  ///< fields of the body line being read (after the id)
  std::vector<EventDef> defs_;
  std::vector<int> small_ids_;
  StringMap<int> big_ids_;
  int in_def_ = -1;
  std::int64_t def_line_ = 0;
  std::vector<Type> types_;
  FlatStringIndex type_index_;  ///< type alias or name → index in types_
  std::vector<Container> containers_;
  FlatStringIndex container_alias_;  ///< container alias → index in containers_
  FlatStringIndex container_name_;   ///< container name → index in containers_
  FlatStringIndex value_ids_;  ///< state value text → index in value_names_
  std::vector<std::string> value_names_;
  FlatIndex entity_values_;  ///< (state type << 32 | value id of an entity value's alias) → value id of its name
  bool decided_ = false;
  bool seen_time_ = false;
  bool any_chosen_ = false;
  std::size_t entity_count_ = 0;
  FlatIndex stack_index_;  ///< (container << 32 | state type) → index in stacks_
  std::vector<std::vector<OpenState>> stacks_;
  std::unordered_map<std::uint64_t, double> values_;
  PendingLinks pending_;
  std::string key_;
  HeldQueue<Held> held_;
  RingQueue<Blocker> blockers_;
  std::uint64_t blocker_base_ = 0;
  std::uint64_t seq_ = 0;
  double last_time_ = 0;
  std::string time_text_;   ///< the last time field read (up to 32 bytes), and its value
  double time_value_ = 0;
  std::uint64_t states_ = 0;
  std::uint64_t links_ = 0;
  std::uint64_t platform_links_ = 0;
  FlatIndex platform_pairs_;  ///< container pairs joined by a non-message link
  std::vector<std::pair<int, int>> platform_edges_;
  std::uint64_t variables_ = 0;
  std::uint64_t point_events_ = 0;
  std::array<std::uint64_t, wCount> warn_count_{};
  std::array<std::int64_t, wCount> warn_line_{};
};

/// Feeds complete lines from successive chunks to the parser, keeping the partial last line.
class PajeLineSplitter {
 public:
  PajeLineSplitter(PajeParser& p, std::string name) : parser_(p), name_(std::move(name)) {}

  void feed(std::string_view chunk) {
    std::size_t pos = 0;
    while (pos < chunk.size()) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data() + pos, '\n', chunk.size() - pos));
      if (nl == nullptr) {
        carry_.append(chunk.substr(pos));
        if (carry_.size() > kMaxTextLineBytes) {
          throw InputError(FileLoc{name_, parser_.next_line_number(), 1},
                           "line is longer than 16 MiB: not a Pajé trace (binary file?)");
        }
        return;
      }
      const auto end = static_cast<std::size_t>(nl - chunk.data());
      if (carry_.empty()) {
        parser_.parse_line(chunk.substr(pos, end - pos));
      } else {
        carry_.append(chunk.substr(pos, end - pos));
        parser_.parse_line(carry_);
        carry_.clear();
      }
      pos = end + 1;
    }
  }

  PajeSummary finish() {
    if (!carry_.empty()) parser_.parse_line(carry_);
    carry_.clear();
    return parser_.finish();
  }

 private:
  PajeParser& parser_;
  std::string name_;
  std::string carry_;
};

}  // namespace

std::uint64_t PajeSummary::warning_count() const {
  std::uint64_t n = 0;
  for (const PajeWarning& w : warnings) n += w.count;
  return n;
}

PajeSummary read_paje_trace_text(std::string_view text, const std::string& name, TraceSink& sink,
                                 const PajeOptions& options) {
  PajeParser parser(name, sink, options);
  PajeLineSplitter splitter(parser, name);
  splitter.feed(text);
  return splitter.finish();
}

PajeSummary read_paje_trace(const std::filesystem::path& path, TraceSink& sink, const PajeOptions& options) {
  const std::string name = path.string();
  PajeParser parser(name, sink, options);
  read_line_batches<SplitBatch>(
      path, options.read, kMaxTextLineBytes, split_paje_batch, "Pajé trace",
      [&parser](const LineBatch& batch, const SplitBatch& split, std::int64_t before) {
        std::int64_t line = before;
        for (const SplitLine& l : split.lines) {
          ++line;
          if (l.split) {
            parser.parse_split(std::span<const PajeToken>(split.tokens).subspan(l.first, l.count), l.small_id, line);
          } else {
            parser.parse_line_numbered(std::string_view(batch.text).substr(l.offset, l.length), line);
          }
        }
        return static_cast<std::int64_t>(split.lines.size());
      });
  return parser.finish();
}

}  // namespace kanoko::trace
