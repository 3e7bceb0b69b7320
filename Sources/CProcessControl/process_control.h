#ifndef CASK_PROCESS_CONTROL_H
#define CASK_PROCESS_CONTROL_H

#include <sys/prctl.h>

/// prctl(PR_SET_DUMPABLE, 0): Swift does not import C functions with variable arguments, so
/// this fixed-argument inline function is the one way CaskPlatform reaches it. Returns
/// prctl's result.
static inline int cask_process_set_undumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

/// prctl(PR_GET_DUMPABLE): 1 when the process may be dumped or attached to, 0 when not.
static inline int cask_process_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

#endif
