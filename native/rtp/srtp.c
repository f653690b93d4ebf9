// SRTP (RFC 3711) for the RTP addon, by libsrtp2 (the library Asterisk, FreeSWITCH and baresip
// use): a session per direction per call, keyed by SDES (RFC 4568) with AES_CM_128_HMAC_SHA1_80
// or _32. The send thread protects each packet in place (srtp_session_protect); the receive path
// (JS, whichever thread carries the call's socket) unprotects through srtpInbound/srtpUnprotect,
// libsrtp keeping the replay window and the rollover counter.
#include "srtp-session.h"

#include <pthread.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_status = -1;

static void init_library(void) { init_status = srtp_init() == srtp_err_status_ok ? 0 : -1; }

int srtp_session_new(srtp_t *out, const uint8_t *key, size_t key_len, int tag_bits, int outbound) {
  pthread_once(&once, init_library);
  if (init_status != 0) return -1;
  if (key_len != SRTP_SDES_KEY_LEN || (tag_bits != 80 && tag_bits != 32)) return -2;
  srtp_policy_t p;
  memset(&p, 0, sizeof p);
  if (tag_bits == 80)
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&p.rtp);
  else
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&p.rtp);
  // RTCP stays _80 whatever the RTP tag (RFC 4568 §6.2.1); we send none but libsrtp needs a policy.
  srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&p.rtcp);
  p.ssrc.type = outbound ? ssrc_any_outbound : ssrc_any_inbound;
  p.key = (unsigned char *)key; /* copied by srtp_create */
  p.window_size = 128;
  p.allow_repeat_tx = 0;
  p.next = NULL;
  return srtp_create(out, &p) == srtp_err_status_ok ? 0 : -3;
}

int srtp_session_protect(srtp_t s, uint8_t *packet, int *len) {
  return srtp_protect(s, packet, len) == srtp_err_status_ok ? 0 : -1;
}

/* ---- Node-API: the receive side ---- */

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  srtp_t *s = data;
  if (*s) srtp_dealloc(*s);
  free(s);
}

/** A session object for `outbound` (srtpProtect) or inbound (srtpUnprotect) use. */
static napi_value session_js(napi_env env, napi_callback_info info, int outbound) {
  size_t argc = 2;
  napi_value argv[2], out;
  void *key;
  size_t key_len;
  uint32_t bits;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_buffer_info(env, argv[0], &key, &key_len) != napi_ok ||
      napi_get_value_uint32(env, argv[1], &bits) != napi_ok) {
    napi_throw_type_error(env, NULL, "srtpInbound(key: Buffer, tagBits: 80 | 32)");
    return NULL;
  }
  srtp_t *s = calloc(1, sizeof *s);
  if (!s) {
    napi_throw_error(env, NULL, "srtpInbound: out of memory");
    return NULL;
  }
  int err = srtp_session_new(s, key, key_len, (int)bits, outbound);
  if (err != 0) {
    free(s);
    napi_throw_range_error(env, NULL, err == -2 ? "srtpInbound: the key must be 30 bytes and the tag 80 or 32 bits"
                                                : "srtpInbound: libsrtp could not make the session");
    return NULL;
  }
  if (napi_create_external(env, s, finalize, NULL, &out) != napi_ok) {
    srtp_dealloc(*s);
    free(s);
    napi_throw_error(env, NULL, "srtpInbound: Node-API call failed");
    return NULL;
  }
  return out;
}

/** srtpInbound(key: Buffer(30), tagBits: 80 | 32): an inbound session (freed with its object). */
static napi_value srtp_inbound(napi_env env, napi_callback_info info) { return session_js(env, info, 0); }

/** srtpOutbound(key, tagBits): a session for srtpProtect (a caller in a test or a benchmark). */
static napi_value srtp_outbound(napi_env env, napi_callback_info info) { return session_js(env, info, 1); }

/**
 * srtpProtect(session, buffer: Buffer, length): encrypts the RTP packet in buffer[0..length) in
 * place and appends the tag (the buffer needs SRTP_MAX_TAG_LEN, 16, spare bytes); the new length,
 * or −(libsrtp status).
 */
static napi_value srtp_protect_js(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], out;
  srtp_t *s;
  void *data;
  size_t cap;
  uint32_t len;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 ||
      napi_get_value_external(env, argv[0], (void **)&s) != napi_ok ||
      napi_get_buffer_info(env, argv[1], &data, &cap) != napi_ok ||
      napi_get_value_uint32(env, argv[2], &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "srtpProtect(session, buffer: Buffer, length: number)");
    return NULL;
  }
  int result = -1;
  if (*s && len >= 12 && (size_t)len + SRTP_MAX_TAG_LEN <= cap) {
    int n = (int)len;
    srtp_err_status_t st = srtp_protect(*s, data, &n);
    result = st == srtp_err_status_ok ? n : -(int)st;
  }
  napi_create_int32(env, result, &out);
  return out;
}

/**
 * srtpUnprotect(session, packet: Buffer): checks and decrypts in place; the plain packet's length,
 * or −(libsrtp status) when it fails (a forged or replayed packet: 7 auth, 9/10 replay).
 */
static napi_value srtp_unprotect_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], out;
  srtp_t *s;
  void *data;
  size_t len;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_value_external(env, argv[0], (void **)&s) != napi_ok ||
      napi_get_buffer_info(env, argv[1], &data, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "srtpUnprotect(session, packet: Buffer)");
    return NULL;
  }
  int n = (int)len;
  int result;
  if (!*s || len < 12 || len > 65535)
    result = -1;
  else {
    srtp_err_status_t st = srtp_unprotect(*s, data, &n);
    result = st == srtp_err_status_ok ? n : -(int)st;
  }
  napi_create_int32(env, result, &out);
  return out;
}

#ifndef VB_SRTP_CRYPTO
#define VB_SRTP_CRYPTO "unknown"
#endif

int srtp_register(napi_env env, napi_value exports) {
  /* Which ciphers libsrtp was built on (native/build.sh): "openssl", or "nss" (Debian's library). */
  napi_value crypto;
  if (napi_create_string_utf8(env, VB_SRTP_CRYPTO, NAPI_AUTO_LENGTH, &crypto) != napi_ok) return -1;
  napi_property_descriptor props[] = {
      {"srtpCrypto", NULL, NULL, NULL, NULL, crypto, napi_enumerable, NULL},
      {"srtpInbound", NULL, srtp_inbound, NULL, NULL, NULL, napi_default, NULL},
      {"srtpOutbound", NULL, srtp_outbound, NULL, NULL, NULL, napi_default, NULL},
      {"srtpProtect", NULL, srtp_protect_js, NULL, NULL, NULL, napi_default, NULL},
      {"srtpUnprotect", NULL, srtp_unprotect_js, NULL, NULL, NULL, napi_default, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof *props, props) == napi_ok ? 0 : -1;
}
