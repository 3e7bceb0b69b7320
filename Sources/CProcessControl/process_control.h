#ifndef CASK_PROCESS_CONTROL_H
#define CASK_PROCESS_CONTROL_H

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/// prctl(PR_SET_DUMPABLE, 0): Swift does not import C functions with variable arguments, so
/// this fixed-argument inline function is the one way CaskPlatform reaches it. Returns
/// prctl's result.
static inline int cask_process_set_undumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

/// prctl(PR_GET_DUMPABLE): 1 when the process may be dumped or attached to, 0 when not.
static inline int cask_process_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

/// The CPUs the calling thread may run on, or 0 when the call fails. The raw system call:
/// glibc's sched_getaffinity and CPU_COUNT need _GNU_SOURCE, which the system headers' module
/// Swift builds is compiled without. The kernel returns how many bytes of the mask it wrote.
static inline int cask_process_usable_cpus(void) {
  unsigned long mask[64] = {0};
  long written = syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask);
  if (written <= 0) return 0;
  int count = 0;
  for (long word = 0; word < written / (long)sizeof(unsigned long); word++) count += __builtin_popcountl(mask[word]);
  return count;
}

#endif
