// The one C bridge of CipherCask: OpenSSL 3's libcrypto (Debian: libssl-dev).
// Only the RNCryptorCodec module imports this, with `internal import`.
#ifndef CIPHERCASK_CLIBCRYPTO_SHIM_H
#define CIPHERCASK_CLIBCRYPTO_SHIM_H

// HMAC-SHA256 is computed from two SHA-256 states precomputed per key (RNCryptorCodec's
// HMACKey), through the low-level SHA256_* calls: OpenSSL 3 marks them deprecated in favour of
// EVP, whose per-message context copies allocate. They are still part of its API.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#endif
