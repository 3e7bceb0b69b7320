// CRC-32C with the processor's own instruction: header only, no C sources, no library.
// Only CaskEngine's Log/CRC32C.swift imports this, with `internal import`; it keeps the
// table-driven Swift code for processors without the instruction.
#ifndef CIPHERCASK_CCRC32C_H
#define CIPHERCASK_CCRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
// The compiler's builtins for `crc32`, not <nmmintrin.h>'s wrappers: those are inline functions
// of another module, which the Swift compiler does not emit into this one.

/// Whether this processor has SSE4.2's `crc32` instruction (cpuid, asked once by the caller).
static inline int cask_crc32c_hardware_available(void) {
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

/// The CRC-32C register after `length` bytes at `bytes`, from register `state` (no inversion
/// here: the caller inverts before and after, as for the table-driven code). Callable only
/// where `cask_crc32c_hardware_available()` returned 1.
__attribute__((target("sse4.2")))
static inline uint32_t cask_crc32c_hardware(uint32_t state, const void *bytes, size_t length) {
    const unsigned char *pointer = (const unsigned char *)bytes;
    uint64_t wide = state;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, pointer, 8);  // unaligned starts are allowed
        wide = __builtin_ia32_crc32di(wide, word);
        pointer += 8;
        length -= 8;
    }
    uint32_t narrow = (uint32_t)wide;
    while (length > 0) {
        narrow = __builtin_ia32_crc32qi(narrow, *pointer);
        pointer += 1;
        length -= 1;
    }
    return narrow;
}

#else

static inline int cask_crc32c_hardware_available(void) { return 0; }

static inline uint32_t cask_crc32c_hardware(uint32_t state, const void *bytes, size_t length) {
    (void)bytes;
    (void)length;
    return state;
}

#endif

#endif
