// A Discord voice connection's UDP socket read straight, off libuv: Node's socket (node:dgram)
// keeps it, this only takes what is queued on it (bridges/discord/voice-socket-io.ts).
//
// drain(fd, slab, slotBytes, lengths): reads every datagram queued on the socket in one recvmmsg,
// without blocking; datagram i goes to slab[i*slotBytes ..], its length to lengths[i] (-1 if it was
// longer than a slot and cut: to be dropped); returns how many were read (0 when none was queued),
// at most lengths.length and slab.length / slotBytes. Throws on a socket error other than "nothing
// queued" (EAGAIN), naming errno. The voice socket is read this way once per 20 ms tick of the
// voice clock while members speak (udp-tick-reads.ts), so packets cost no wake-up of the loop each.
//
// Sending stays with node:dgram: one send() from here measured 6.0 against 7.0 µs a packet on
// loopback (the kernel's delivery is most of both), ~50 µs/s per channel, not worth a second path.
#define _GNU_SOURCE
#include <errno.h>
#include <node_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_BATCH 256

static napi_value drain(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4], out;
  int32_t fd, slot;
  napi_typedarray_type slab_type, len_type;
  size_t slab_len, len_count;
  void *slab_data, *len_data;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 ||
      napi_get_typedarray_info(env, argv[1], &slab_type, &slab_len, &slab_data, NULL, NULL) != napi_ok ||
      slab_type != napi_uint8_array || napi_get_value_int32(env, argv[2], &slot) != napi_ok || slot <= 0 ||
      napi_get_typedarray_info(env, argv[3], &len_type, &len_count, &len_data, NULL, NULL) != napi_ok ||
      len_type != napi_int32_array) {
    napi_throw_type_error(
        env, NULL, "drain(fd: a socket descriptor, slab: Uint8Array, slotBytes: > 0, lengths: Int32Array)");
    return NULL;
  }
  size_t n = slab_len / (size_t)slot;
  if (n > len_count) n = len_count;
  if (n > MAX_BATCH) n = MAX_BATCH;
  struct mmsghdr msgs[MAX_BATCH];
  struct iovec iov[MAX_BATCH];
  memset(msgs, 0, n * sizeof msgs[0]);
  for (size_t i = 0; i < n; i++) {
    iov[i].iov_base = (uint8_t *)slab_data + i * (size_t)slot;
    iov[i].iov_len = (size_t)slot;
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  int got = n == 0 ? 0 : recvmmsg(fd, msgs, (unsigned)n, MSG_DONTWAIT, NULL);
  if (got < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      got = 0;
    } else {
      char msg[96];
      snprintf(msg, sizeof msg, "recvmmsg on fd %d failed: %s", fd, strerror(errno));
      napi_throw_error(env, NULL, msg);
      return NULL;
    }
  }
  int32_t *lengths = len_data;
  for (int i = 0; i < got; i++) {
    lengths[i] = (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) ? -1 : (int32_t)msgs[i].msg_len;
  }
  napi_create_int32(env, got, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "drain", NAPI_AUTO_LENGTH, drain, NULL, &fn);
  napi_set_named_property(env, exports, "drain", fn);
  return exports;
}
