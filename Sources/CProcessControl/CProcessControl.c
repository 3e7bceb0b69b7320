#include "CProcessControl.h"

#include <sys/prctl.h>

int cask_process_set_undumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int cask_process_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
