// Copies out of and into a file mapping that survive the file being cut short, failing to
// read, or finding no disk space for a page. Header only, no C sources, no library. Only
// CaskEngine's IO/FileMapping.swift imports this (with `internal import`): the handler, the
// thread's recovery point and the previous action are static, one copy per object file that
// uses them, so exactly one Swift file may.
//
// Touching a mapped page past the end of its file, one the disk cannot read, or (writing) one
// the file system cannot give a block raises SIGBUS. `cask_mapped_copy` marks the thread as
// copying before it touches the mapping; the handler jumps back to that mark and the copy
// reports failure, and the caller reads the same bytes with `pread` (or writes them with
// `pwrite`), which reports the short file, the I/O error or the full disk as any read or write
// does. A SIGBUS raised anywhere else goes on to the handler installed before (or ends the
// process, as it would have without this one).
#ifndef CIPHERCASK_CMAPPEDCOPY_H
#define CIPHERCASK_CMAPPEDCOPY_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

// The state lives in function-local statics: the Swift compiler emits a header's functions
// into the object that calls them, but not its global variables.

/// Where this thread's copy from or into a mapping resumes after a SIGBUS (NULL when it is not
/// copying).
static inline sigjmp_buf *volatile *cask_mapped_recovery(void) {
    static __thread sigjmp_buf *volatile recovery;
    return &recovery;
}

/// The SIGBUS action installed before `cask_mapped_install`.
static inline struct sigaction *cask_mapped_previous(void) {
    static struct sigaction previous;
    return &previous;
}

static void cask_mapped_on_sigbus(int number, siginfo_t *info, void *context) {
    sigjmp_buf *recovery = *cask_mapped_recovery();
    if (recovery != NULL) {
        *cask_mapped_recovery() = NULL;
        // The jump restores no signal mask (sigsetjmp saving one costs a system call on every
        // copy), so SIGBUS is unblocked here: SA_NODEFER asks for that, but a sanitizer's
        // handler that calls this one may have blocked it, and a later fault on this thread
        // would then end the process.
        sigset_t bus;
        sigemptyset(&bus);
        sigaddset(&bus, SIGBUS);
        pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
        siglongjmp(*recovery, 1);
    }
    const struct sigaction *previous = cask_mapped_previous();
    if ((previous->sa_flags & SA_SIGINFO) != 0 && previous->sa_sigaction != NULL) {
        previous->sa_sigaction(number, info, context);
        return;
    }
    if ((previous->sa_flags & SA_SIGINFO) == 0 && previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        previous->sa_handler(number);
        return;
    }
    // Sent by kill() or sigqueue() rather than raised by a fault.
    int sent = info == NULL || info->si_code <= 0;
    if (sent && (previous->sa_flags & SA_SIGINFO) == 0 && previous->sa_handler == SIG_IGN) {
        return;
    }
    // The default action (a fault cannot be ignored): restored, then a fault's instruction runs
    // again on return, and a sent signal is raised again, and either ends the process as it
    // would have without this handler.
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(SIGBUS, &fallback, NULL);
    if (sent) {
        raise(SIGBUS);
    }
}

/// Installs the SIGBUS handler (once per process: the caller makes sure). Returns 0, or -1
/// with errno set.
static inline int cask_mapped_install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = cask_mapped_on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGBUS, &action, cask_mapped_previous());
}

/// Copies `count` bytes from `source` to `destination`, one of them inside a mapping. Returns
/// 0, or -1 when a SIGBUS stopped it (the destination then holds part of the bytes).
///
/// The copy is written out rather than a call to memcpy. Prevents: a sanitizer's memcpy
/// interceptor (ThreadSanitizer, AddressSanitizer) being left by the jump, with its own
/// bookkeeping half done.
__attribute__((noinline)) static inline int cask_mapped_copy(void *destination, const void *source, size_t count) {
    sigjmp_buf recovery;
    if (sigsetjmp(recovery, 0) != 0) {
        return -1;
    }
    *cask_mapped_recovery() = &recovery;
    __asm__ __volatile__("" ::: "memory");
#if defined(__x86_64__)
    __asm__ __volatile__("rep movsb" : "+D"(destination), "+S"(source), "+c"(count) : : "memory");
#else
    volatile unsigned char *to = (volatile unsigned char *)destination;
    const volatile unsigned char *from = (const volatile unsigned char *)source;
    for (size_t index = 0; index < count; index++) {
        to[index] = from[index];
    }
#endif
    __asm__ __volatile__("" ::: "memory");
    *cask_mapped_recovery() = NULL;
    return 0;
}

#endif
