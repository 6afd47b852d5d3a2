// Writing OTF2 archives in tests with libotf2's own writer.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace kanoko::trace::testing {

inline OTF2_FlushType otf2_pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
inline OTF2_TimeStamp otf2_post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }

/// An archive at `dir` (anchor `traces.otf2`) opened for writing, with flushing and serial
/// collective callbacks set and its event files open; nullptr if libotf2 refuses.
inline OTF2_Archive* open_otf2_for_writing(const std::filesystem::path& dir) {
  static OTF2_FlushCallbacks flush{otf2_pre_flush, otf2_post_flush};
  OTF2_Archive* a = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (a == nullptr) return nullptr;
  OTF2_Archive_SetFlushCallbacks(a, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(a);
  OTF2_Archive_OpenEvtFiles(a);
  return a;
}

/// Closes the event writers of locations 0, 1, ... (in that order), the event files and empty
/// local definition files; returns each location's event count, for its Location definition.
inline std::vector<std::uint64_t> close_otf2_events(OTF2_Archive* a, const std::vector<OTF2_EvtWriter*>& writers) {
  std::vector<std::uint64_t> counts;
  for (OTF2_EvtWriter* w : writers) {
    std::uint64_t n = 0;
    OTF2_EvtWriter_GetNumberOfEvents(w, &n);
    counts.push_back(n);
    OTF2_Archive_CloseEvtWriter(a, w);
  }
  OTF2_Archive_CloseEvtFiles(a);
  OTF2_Archive_OpenDefFiles(a);
  for (std::size_t l = 0; l < writers.size(); ++l) {
    OTF2_Archive_CloseDefWriter(a, OTF2_Archive_GetDefWriter(a, static_cast<OTF2_LocationRef>(l)));
  }
  OTF2_Archive_CloseDefFiles(a);
  return counts;
}

}  // namespace kanoko::trace::testing
