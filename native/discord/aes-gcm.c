// Discord's voice transport encryption, aead_aes256_gcm_rtpsize, as a Node-API addon: one AES-256-GCM
// context per voice connection that keeps its key schedule, reset per packet with the packet's nonce
// only. node:crypto has no such reuse: a packet costs a new Cipheriv/Decipheriv (key expansion, a
// JS object, two or three output buffers), 50 packets a second per member and per channel.
//
// Packet layout (rtpsize): [RTP header, with the 4-byte extension preamble if any: the AAD]
// [ciphertext][16-byte tag][4-byte nonce suffix]; the 12-byte GCM nonce is the suffix followed by
// 8 zero bytes. open() decrypts the packet in place (the plaintext starts where the ciphertext was);
// seal() writes ciphertext, tag and nonce suffix after a header already in the output buffer.
//
// The EVP calls resolve to the OpenSSL that Node carries and exports (as node-gyp addons' do).
#include <node_api.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KEY_LEN 32
#define TAG_LEN 16
#define NONCE_SUFFIX 4
#define NONCE_LEN 12

typedef struct {
  EVP_CIPHER_CTX *dec;
  EVP_CIPHER_CTX *enc;
} aes_gcm;

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  aes_gcm *c = data;
  EVP_CIPHER_CTX_free(c->dec);
  EVP_CIPHER_CTX_free(c->enc);
  free(c);
}

static napi_value undefined(napi_env env) {
  napi_value u;
  napi_get_undefined(env, &u);
  return u;
}

static napi_value number(napi_env env, int32_t n) {
  napi_value v;
  napi_create_int32(env, n, &v);
  return v;
}

/** aesGcm(key: Buffer of 32 bytes): an opaque context for open()/seal(), freed when collected. */
static napi_value create(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  void *key;
  size_t key_len;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_buffer_info(env, argv[0], &key, &key_len) != napi_ok || key_len != KEY_LEN) {
    napi_throw_type_error(env, NULL, "aesGcm(key: a Buffer of 32 bytes)");
    return NULL;
  }
  aes_gcm *c = calloc(1, sizeof *c);
  if (!c) {
    napi_throw_error(env, NULL, "aesGcm: out of memory");
    return NULL;
  }
  c->dec = EVP_CIPHER_CTX_new();
  c->enc = EVP_CIPHER_CTX_new();
  if (!c->dec || !c->enc || EVP_DecryptInit_ex(c->dec, EVP_aes_256_gcm(), NULL, key, NULL) != 1 ||
      EVP_EncryptInit_ex(c->enc, EVP_aes_256_gcm(), NULL, key, NULL) != 1) {
    finalize(env, c, NULL);
    napi_throw_error(env, NULL, "aesGcm: OpenSSL refused the AES-256-GCM context");
    return NULL;
  }
  if (napi_create_external(env, c, finalize, NULL, &out) != napi_ok) {
    finalize(env, c, NULL);
    return NULL;
  }
  return out;
}

static aes_gcm *context(napi_env env, napi_value v) {
  void *c = NULL;
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external) return NULL;
  if (napi_get_value_external(env, v, &c) != napi_ok) return NULL;
  return c;
}

/**
 * open(ctx, packet: Buffer, headerSize): decrypts the packet in place and returns the plaintext's
 * length (it starts at headerSize), or -1 if the packet is too short or does not authenticate.
 */
static napi_value open_packet(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  uint8_t *p;
  size_t len;
  uint32_t header;
  aes_gcm *c;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 ||
      !(c = context(env, argv[0])) || napi_get_buffer_info(env, argv[1], (void **)&p, &len) != napi_ok ||
      napi_get_value_uint32(env, argv[2], &header) != napi_ok) {
    napi_throw_type_error(env, NULL, "open(ctx, packet: Buffer, headerSize: number)");
    return NULL;
  }
  if (len < (size_t)header + TAG_LEN + NONCE_SUFFIX) return number(env, -1);
  size_t body = len - header - TAG_LEN - NONCE_SUFFIX;
  uint8_t nonce[NONCE_LEN] = {0};
  memcpy(nonce, p + len - NONCE_SUFFIX, NONCE_SUFFIX);
  int n = 0, fin = 0;
  if (EVP_DecryptInit_ex(c->dec, NULL, NULL, NULL, nonce) != 1 ||
      EVP_DecryptUpdate(c->dec, NULL, &n, p, (int)header) != 1 ||
      EVP_DecryptUpdate(c->dec, p + header, &n, p + header, (int)body) != 1 ||
      EVP_CIPHER_CTX_ctrl(c->dec, EVP_CTRL_GCM_SET_TAG, TAG_LEN, p + header + body) != 1 ||
      EVP_DecryptFinal_ex(c->dec, p + header + n, &fin) != 1)
    return number(env, -1);
  return number(env, n + fin);
}

/**
 * seal(ctx, out: Buffer, headerSize, payload: Buffer, nonce: uint32): out holds the RTP header in
 * its first headerSize bytes and has room for exactly payload + tag + nonce suffix after it; writes
 * them. Returns undefined; throws if the sizes do not fit.
 */
static napi_value seal_packet(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  uint8_t *out, *payload;
  size_t out_len, payload_len;
  uint32_t header, nonce_value;
  aes_gcm *c;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5 ||
      !(c = context(env, argv[0])) ||
      napi_get_buffer_info(env, argv[1], (void **)&out, &out_len) != napi_ok ||
      napi_get_value_uint32(env, argv[2], &header) != napi_ok ||
      napi_get_buffer_info(env, argv[3], (void **)&payload, &payload_len) != napi_ok ||
      napi_get_value_uint32(env, argv[4], &nonce_value) != napi_ok ||
      out_len != (size_t)header + payload_len + TAG_LEN + NONCE_SUFFIX) {
    napi_throw_type_error(env, NULL,
                          "seal(ctx, out: Buffer of header+payload+20 bytes, headerSize, payload: Buffer, nonce)");
    return NULL;
  }
  uint8_t nonce[NONCE_LEN] = {0};
  nonce[0] = (uint8_t)(nonce_value >> 24);
  nonce[1] = (uint8_t)(nonce_value >> 16);
  nonce[2] = (uint8_t)(nonce_value >> 8);
  nonce[3] = (uint8_t)nonce_value;
  int n = 0, fin = 0;
  uint8_t *body = out + header;
  if (EVP_EncryptInit_ex(c->enc, NULL, NULL, NULL, nonce) != 1 ||
      EVP_EncryptUpdate(c->enc, NULL, &n, out, (int)header) != 1 ||
      EVP_EncryptUpdate(c->enc, body, &n, payload, (int)payload_len) != 1 ||
      EVP_EncryptFinal_ex(c->enc, body + n, &fin) != 1 ||
      EVP_CIPHER_CTX_ctrl(c->enc, EVP_CTRL_GCM_GET_TAG, TAG_LEN, body + payload_len) != 1) {
    napi_throw_error(env, NULL, "seal: OpenSSL refused to encrypt the packet");
    return NULL;
  }
  memcpy(body + payload_len + TAG_LEN, nonce, NONCE_SUFFIX);
  return undefined(env);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"aesGcm", NULL, create, NULL, NULL, NULL, napi_default, NULL},
      {"open", NULL, open_packet, NULL, NULL, NULL, napi_default, NULL},
      {"seal", NULL, seal_packet, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
