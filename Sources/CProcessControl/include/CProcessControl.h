#ifndef CASK_PROCESS_CONTROL_H
#define CASK_PROCESS_CONTROL_H

/// prctl(PR_SET_DUMPABLE, 0): Swift does not import C functions with variable arguments, so
/// this fixed-argument wrapper is the one way CaskPlatform reaches it. Returns prctl's result.
int cask_process_set_undumpable(void);

/// prctl(PR_GET_DUMPABLE): 1 when the process may be dumped or attached to, 0 when not.
int cask_process_dumpable(void);

#endif
