// The benchmarks' simulated Twilio reads the bridge's WebSocket frames here, each with the kernel's
// receive stamp of its last byte: when it reached this host, not when a busy event loop got round
// to it. (SIP's load generators get that from SIOCGSTAMPNS per datagram; a TCP socket keeps no
// per-read stamp for that ioctl, only the SCM_TIMESTAMPNS of recvmsg, which Node never asks for.)
//
// One thread per process sleeps in epoll on every registered socket and reads frame by frame:
// the header, then exactly the rest of the frame, so a recvmsg never reaches into the next frame
// and the stamp it returns is that of the segment holding this frame's last byte. On loopback
// that is the moment the bridge wrote it. A thread that sleeps is woken at once when a segment
// comes, even on busy cores, so segments seldom pile up; when they do (TCP may merge queued
// segments, keeping the newest stamp), a frame is stamped later than it came, never earlier:
// lateness is overstated, never hidden.
//
// The thread can be given its own nice (start's second argument): a soak runs the load generators
// at nice 19 so they take only what the bridge leaves, and a reader starved with them for a few
// hundred ms lets a socket's segments merge, every frame in them stamped with the last one's
// arrival, which looks like the bridge going quiet. At the bridge's own nice it reads as promptly
// as the bridge writes; its work is a few recvmsg per frame.
//
// JS registers a socket's fd after the WebSocket handshake (add; the thread reads a dup of it, so
// JS closing its own fd cannot hand the number to another socket under the thread), stops Node's
// own reading of it, and takes the frames read so far with drain() whenever `onReady` is called
// (once each time the queue goes from empty to not). remove() unregisters and closes the dup.
//
// drain()'s buffer holds records: u32 handle (add()'s), u8 kind (0 frame, 1 end of stream), u8 the frame's
// first header byte (FIN and opcode), u16 0, u32 payload length, f64 stamp (ms on the monotonic
// clock, process.hrtime's; NaN if the kernel gave none), then the payload.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../monotonic-stamp.h"

#define MAX_SLOTS 8192 /* 2^13: a handle is (generation << 13) | slot, so a reused slot is told apart */
#define SLOT_BITS 13
#define GEN_MASK 0x7ffffu
#define MAX_FRAME (16u << 20)
#define RECORD_HEAD 20

typedef struct {
  int fd; /* the dup the thread reads; -1: free */
  uint32_t gen;
  uint8_t hdr[14];
  uint32_t hdr_have, hdr_need;
  int in_payload;
  uint8_t *payload;
  uint64_t pay_len, pay_have, pay_cap;
  double stamp_ms;
} Slot;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static Slot slots[MAX_SLOTS];
static int ep = -1;
static napi_threadsafe_function ready_fn;
static pthread_cond_t tid_known = PTHREAD_COND_INITIALIZER;
static pid_t reader_tid; /* the reading thread's id, for setpriority; 0 until it runs */
static uint8_t *queue;
static size_t queue_len, queue_cap;

#define CHECK(call)                                                   \
  do {                                                                \
    if ((call) != napi_ok) {                                          \
      napi_throw_error(env, NULL, "ws stamps: Node-API call failed"); \
      return NULL;                                                    \
    }                                                                 \
  } while (0)

static int reserve(size_t more) {
  if (queue_len + more <= queue_cap) return 1;
  size_t cap = queue_cap ? queue_cap : 65536;
  while (cap < queue_len + more) cap *= 2;
  uint8_t *grown = realloc(queue, cap);
  if (!grown) return 0;
  queue = grown;
  queue_cap = cap;
  return 1;
}

static void put_record(uint32_t handle, uint8_t kind, uint8_t first, const uint8_t *data, uint32_t len, double stamp) {
  if (!reserve(RECORD_HEAD + (size_t)len)) return; /* out of memory: the frame is lost, JS sees a gap */
  uint8_t *p = queue + queue_len;
  uint16_t zero = 0;
  memcpy(p, &handle, 4);
  p[4] = kind;
  p[5] = first;
  memcpy(p + 6, &zero, 2);
  memcpy(p + 8, &len, 4);
  memcpy(p + 12, &stamp, 8);
  if (len) memcpy(p + RECORD_HEAD, data, len);
  queue_len += RECORD_HEAD + (size_t)len;
}

static void reset_frame(Slot *s) {
  s->hdr_have = 0;
  s->hdr_need = 2;
  s->in_payload = 0;
  s->pay_len = s->pay_have = 0;
  s->stamp_ms = NAN;
}

static void release(Slot *s) {
  if (s->fd >= 0) {
    epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
  }
  s->fd = -1;
  s->gen = (s->gen + 1) & GEN_MASK;
  free(s->payload);
  s->payload = NULL;
  s->pay_cap = 0;
  reset_frame(s);
}

/** One recvmsg of up to `want` bytes; the segment's receive stamp, if the kernel gave one, into *stamp. */
static ssize_t read_stamped(int fd, uint8_t *dst, size_t want, double *stamp) {
  struct iovec iov = {dst, want};
  union {
    char buf[CMSG_SPACE(sizeof(struct timespec))];
    struct cmsghdr align;
  } ctl;
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl.buf;
  msg.msg_controllen = sizeof ctl.buf;
  ssize_t r = recvmsg(fd, &msg, MSG_DONTWAIT);
  if (r <= 0) return r;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      struct timespec ts;
      memcpy(&ts, CMSG_DATA(c), sizeof ts);
      *stamp = monotonic_ms_of(&ts);
    }
  }
  return r;
}

/** The header is whole: its payload length (or -1 for a frame a server may not send). */
static int64_t header_done(Slot *s) {
  uint8_t len7 = s->hdr[1] & 0x7f;
  if (s->hdr_need == 2 && len7 >= 126) {
    s->hdr_need = len7 == 126 ? 4 : 10;
    return -2; /* read the extended length first */
  }
  if (s->hdr[1] & 0x80) return -1; /* masked: only clients mask */
  if (len7 < 126) return len7;
  if (len7 == 126) return ((uint64_t)s->hdr[2] << 8) | s->hdr[3];
  uint64_t n = 0;
  for (int i = 2; i < 10; i++) n = (n << 8) | s->hdr[i];
  return n > MAX_FRAME ? -1 : (int64_t)n;
}

static uint32_t handle_of(uint32_t id) { return (slots[id].gen << SLOT_BITS) | id; }

/** Reads every whole frame the socket holds; called with `mu` held. */
static void read_slot(uint32_t id) {
  Slot *s = &slots[id];
  uint32_t h = handle_of(id);
  for (;;) {
    if (s->in_payload && s->pay_have == s->pay_len) {
      put_record(h, 0, s->hdr[0], s->payload, (uint32_t)s->pay_len, s->stamp_ms);
      reset_frame(s);
    }
    uint8_t *dst;
    size_t want;
    if (!s->in_payload) {
      dst = s->hdr + s->hdr_have;
      want = s->hdr_need - s->hdr_have;
    } else {
      dst = s->payload + s->pay_have;
      want = s->pay_len - s->pay_have;
    }
    ssize_t r = read_stamped(s->fd, dst, want, &s->stamp_ms);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (r <= 0) {
      put_record(h, 1, 0, NULL, 0, NAN);
      release(s);
      return;
    }
    if (!s->in_payload) {
      s->hdr_have += (uint32_t)r;
      if (s->hdr_have < s->hdr_need) continue;
      int64_t len = header_done(s);
      if (len == -2) continue;
      if (len < 0) {
        put_record(h, 1, 0, NULL, 0, NAN);
        release(s);
        return;
      }
      if ((uint64_t)len > s->pay_cap) {
        uint64_t cap = s->pay_cap ? s->pay_cap : 512;
        while (cap < (uint64_t)len) cap *= 2;
        uint8_t *grown = realloc(s->payload, cap);
        if (!grown) {
          put_record(h, 1, 0, NULL, 0, NAN);
          release(s);
          return;
        }
        s->payload = grown;
        s->pay_cap = cap;
      }
      s->pay_len = (uint64_t)len;
      s->pay_have = 0;
      s->in_payload = 1;
    } else {
      s->pay_have += (uint64_t)r;
    }
  }
}

static void *run(void *arg) {
  (void)arg;
  struct epoll_event evs[64];
  pthread_mutex_lock(&mu);
  reader_tid = (pid_t)syscall(SYS_gettid);
  pthread_cond_signal(&tid_known);
  pthread_mutex_unlock(&mu);
  for (;;) {
    int n = epoll_wait(ep, evs, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return NULL;
    }
    pthread_mutex_lock(&mu);
    int was_empty = queue_len == 0;
    for (int i = 0; i < n; i++) {
      uint32_t id = (uint32_t)evs[i].data.u64, gen = (uint32_t)(evs[i].data.u64 >> 32);
      if (id < MAX_SLOTS && slots[id].fd >= 0 && slots[id].gen == gen) read_slot(id);
    }
    int notify = was_empty && queue_len > 0;
    pthread_mutex_unlock(&mu);
    if (notify) napi_call_threadsafe_function(ready_fn, NULL, napi_tsfn_nonblocking);
  }
}

/**
 * start(onReady, nice?): starts the reading thread (once per process), at `nice` if given
 * (setpriority on the thread alone; a nice below the process's needs CAP_SYS_NICE).
 */
static napi_value start(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], name;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_valuetype t = napi_undefined;
  if (argc) CHECK(napi_typeof(env, argv[0], &t));
  if (t != napi_function) {
    napi_throw_type_error(env, NULL, "start(onReady, nice?): onReady must be a function");
    return NULL;
  }
  int has_nice = 0;
  int32_t nice = 0;
  if (argc > 1) {
    napi_valuetype nt;
    CHECK(napi_typeof(env, argv[1], &nt));
    if (nt != napi_undefined) {
      double d = NAN;
      if (nt == napi_number) CHECK(napi_get_value_double(env, argv[1], &d));
      if (!(d >= -20 && d <= 19) || d != (double)(int32_t)d) {
        napi_throw_range_error(env, NULL, "start(onReady, nice?): nice must be an integer from -20 to 19");
        return NULL;
      }
      has_nice = 1;
      nice = (int32_t)d;
    }
  }
  if (ep >= 0) {
    napi_throw_error(env, NULL, "start(onReady): already started in this process");
    return NULL;
  }
  for (int i = 0; i < MAX_SLOTS; i++) {
    slots[i].fd = -1;
    reset_frame(&slots[i]);
  }
  CHECK(napi_create_string_utf8(env, "ws stamps ready", NAPI_AUTO_LENGTH, &name));
  CHECK(napi_create_threadsafe_function(env, argv[0], NULL, name, 0, 1, NULL, NULL, NULL, NULL, &ready_fn));
  CHECK(napi_unref_threadsafe_function(env, ready_fn)); /* the process may exit while it waits */
  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    napi_throw_error(env, NULL, "start: epoll_create1 failed");
    return NULL;
  }
  pthread_t th;
  if (pthread_create(&th, NULL, run, NULL) != 0) {
    napi_throw_error(env, NULL, "start: pthread_create failed");
    return NULL;
  }
  pthread_detach(th);
  pthread_mutex_lock(&mu);
  while (reader_tid == 0) pthread_cond_wait(&tid_known, &mu);
  pid_t tid = reader_tid;
  pthread_mutex_unlock(&mu);
  if (has_nice && setpriority(PRIO_PROCESS, (id_t)tid, nice) != 0) {
    char msg[160];
    snprintf(msg, sizeof msg, "start: cannot run the reading thread at nice %d: %s", nice, strerror(errno));
    napi_throw_error(env, NULL, msg);
    return NULL;
  }
  return NULL;
}

/** add(fd): registers a connected TCP socket whose WebSocket handshake is done; its handle. */
static napi_value add(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int32_t fd;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_range_error(env, NULL, "add(fd): expected a socket's file descriptor");
    return NULL;
  }
  if (ep < 0) {
    napi_throw_error(env, NULL, "add(fd): start(onReady) first");
    return NULL;
  }
  int one = 1;
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0 || setsockopt(own, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0) {
    if (own >= 0) close(own);
    napi_throw_error(env, NULL, "add(fd): not a socket that can be stamped");
    return NULL;
  }
  fcntl(own, F_SETFL, fcntl(own, F_GETFL) | O_NONBLOCK);
  pthread_mutex_lock(&mu);
  uint32_t id = MAX_SLOTS;
  for (uint32_t i = 0; i < MAX_SLOTS; i++)
    if (slots[i].fd < 0) {
      id = i;
      break;
    }
  if (id == MAX_SLOTS) {
    pthread_mutex_unlock(&mu);
    close(own);
    napi_throw_range_error(env, NULL, "add(fd): too many sockets");
    return NULL;
  }
  Slot *s = &slots[id];
  s->fd = own;
  reset_frame(s);
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = ((uint64_t)s->gen << 32) | id};
  int ok = epoll_ctl(ep, EPOLL_CTL_ADD, own, &ev) == 0;
  if (!ok) release(s);
  pthread_mutex_unlock(&mu);
  if (!ok) {
    napi_throw_error(env, NULL, "add(fd): epoll_ctl failed");
    return NULL;
  }
  CHECK(napi_create_uint32(env, handle_of(id), &out));
  return out;
}

/** remove(handle): stops reading it and closes the thread's dup (one already ended is fine). */
static napi_value remove_slot(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  uint32_t h;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || napi_get_value_uint32(env, argv[0], &h) != napi_ok) {
    napi_throw_range_error(env, NULL, "remove(handle): expected a handle from add()");
    return NULL;
  }
  uint32_t id = h & (MAX_SLOTS - 1);
  pthread_mutex_lock(&mu);
  if (slots[id].fd >= 0 && handle_of(id) == h) release(&slots[id]);
  pthread_mutex_unlock(&mu);
  return NULL;
}

/** drain(): the records read since the last drain, or undefined if none. */
static napi_value drain(napi_env env, napi_callback_info info) {
  napi_value out;
  void *data;
  pthread_mutex_lock(&mu);
  if (queue_len == 0) {
    pthread_mutex_unlock(&mu);
    CHECK(napi_get_undefined(env, &out));
    return out;
  }
  napi_status st = napi_create_buffer_copy(env, queue_len, queue, &data, &out);
  queue_len = 0;
  pthread_mutex_unlock(&mu);
  CHECK(st);
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"start", NULL, start, NULL, NULL, NULL, napi_default, NULL},
      {"add", NULL, add, NULL, NULL, NULL, napi_default, NULL},
      {"remove", NULL, remove_slot, NULL, NULL, NULL, napi_default, NULL},
      {"drain", NULL, drain, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof *props, props) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE_INIT() { return init(env, exports); }
