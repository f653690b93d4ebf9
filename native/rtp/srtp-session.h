// SRTP sessions for the RTP addon (srtp.c): what the send thread (sender.c) needs.
#ifndef VB_SRTP_SESSION_H
#define VB_SRTP_SESSION_H
#include <node_api.h>
#include <srtp2/srtp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* SDES key material: 16 bytes of master key, 14 of master salt. */
#define SRTP_SDES_KEY_LEN 30

/* A session for one direction; 0, or negative on a bad key/tag (−2) or a libsrtp failure. */
int srtp_session_new(srtp_t *out, const uint8_t *key, size_t key_len, int tag_bits, int outbound);
/* Protects a packet in place (room for SRTP_MAX_TRAILER_LEN more bytes); 0 or −1. */
int srtp_session_protect(srtp_t s, uint8_t *packet, int *len);
/* Adds srtpInbound and srtpUnprotect to the addon's exports. */
int srtp_register(napi_env env, napi_value exports);
#endif
