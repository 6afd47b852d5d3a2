#include "src/base/background.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

namespace kanoko {

int lower_thread_priority() {
  // On Linux, PRIO_PROCESS with a thread id sets that thread's nice value alone (setpriority(2),
  // "a thread's nice value"); getpriority returns -1 legitimately, hence errno.
  const auto tid = static_cast<id_t>(::gettid());
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (errno != 0) return 0;
  if (::setpriority(PRIO_PROCESS, tid, now + kBackgroundNice) != 0) return now;
  return ::getpriority(PRIO_PROCESS, tid);
}

}  // namespace kanoko
