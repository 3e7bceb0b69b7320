// glibc headers that Swift's Glibc module leaves out, for cask-bench's memory and
// file-system figures: mallinfo2 and malloc_trim (malloc.h), statfs (sys/vfs.h).
#pragma once
#include <malloc.h>
#include <sys/vfs.h>
