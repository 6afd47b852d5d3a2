// Writing OTF2 archives in tests with libotf2's own writer.
#pragma once

#include <otf2/otf2.h>

#include <filesystem>

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

}  // namespace kanoko::trace::testing
