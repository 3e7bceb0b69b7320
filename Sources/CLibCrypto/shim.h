// The one C bridge of CipherCask: OpenSSL 3's libcrypto (Debian: libssl-dev).
// Only the RNCryptorCodec module imports this, with `internal import`.
// The inline helpers build OSSL_PARAM arrays, which Swift cannot express.
#ifndef CIPHERCASK_CLIBCRYPTO_SHIM_H
#define CIPHERCASK_CLIBCRYPTO_SHIM_H

#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

/// Creates an HMAC-SHA256 context keyed with `key`; NULL on failure.
static inline EVP_MAC_CTX *cask_hmac_sha256_new(EVP_MAC *mac, const unsigned char *key, size_t key_length) {
    EVP_MAC_CTX *context = EVP_MAC_CTX_new(mac);
    if (context == NULL) {
        return NULL;
    }
    char digest[] = "SHA256";
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0);
    params[1] = OSSL_PARAM_construct_end();
    if (EVP_MAC_init(context, key, key_length, params) != 1) {
        EVP_MAC_CTX_free(context);
        return NULL;
    }
    return context;
}

#endif
