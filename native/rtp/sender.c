// The send side of every SIP call's RTP, on one native thread per process.
//
// Why native: at 200 calls the JS pacer woke 10,000 times a second on a loop that also decoded,
// latched and posted frames; on two busy cores its timers ran 15-30 ms late (p99) and each
// datagram cost ~17 us in Node. Here one thread sleeps on an absolute monotonic deadline every
// 20 ms, and at each tick sends every call's packet (the agent's next queued payload, or
// silence) with one sendto each. A thread that sleeps almost all the time is woken promptly by
// the kernel even when the cores are busy, and the calls share one wake-up instead of one each.
//
// JS owns the socket (Node's dgram receives on it) and the call's life: open() registers the
// call's fd and RTP state, push() queues encoded payloads, clear() drops what is unsent,
// close() unregisters it before JS closes the fd. Every call is on one 20 ms grid; a call's
// first packet goes out at the next tick. A tick that comes late sends what is due (catch-up);
// one more than LATE_SKIP_NS late moves the timestamp on over the lost time with the marker.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <math.h>
#include <netinet/in.h>
#include <node_api.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "srtp-session.h"
#include "../monotonic-stamp.h"

#define TICK_NS 20000000LL
#define LATE_SKIP_NS 200000000LL
#define HEADER 12
#define MAX_PAYLOAD (1500 - 28 - HEADER)
#define EV_EVENT 0x100
#define EV_START 0x200
#define LATE_BUCKETS 101 /* wake-up lateness histogram, 1 ms buckets; the last is ">= 100 ms" */

typedef struct {
  int fd;
  struct sockaddr_storage dest;
  socklen_t dest_len; /* 0: no destination yet (nothing is put on the wire) */
  int family;         /* of the socket: a v4 destination on a v6 socket is v4-mapped */
  uint8_t payload_type;
  uint32_t ssrc, timestamp, ticks;
  uint16_t sequence;
  int transmit, first, quiet;
  int64_t next_due; /* ns on CLOCK_MONOTONIC; 0 until the first tick */
  /* queued payloads: a ring of `cap` slots of `slot_bytes` each */
  uint8_t *slots;
  uint16_t *lens;
  /* per slot: 0 for audio; for an RFC 4733 telephone-event packet EV_EVENT | its payload type,
     plus EV_START on an event's first packet (the marker, and the timestamp all its packets carry) */
  uint16_t *evs;
  uint32_t event_ts;
  uint32_t cap, head, count, slot_bytes;
  uint8_t silence[MAX_PAYLOAD];
  uint16_t silence_len;
  srtp_t srtp; /* SDES-SRTP: packets are protected before sendto; NULL for plain RTP */
  double audio_sent, silence_sent, packets, send_errors, skips;
} Call;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static Call **calls;
static uint32_t calls_cap, calls_active;
static int thread_started;
static double late_hist[LATE_BUCKETS], ticks_run, late_max_ms;
static int realtime; /* the thread runs SCHED_FIFO */

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void send_one(Call *c) {
  const uint8_t *payload;
  uint16_t len;
  int marker = c->first;
  uint8_t pt = c->payload_type;
  uint32_t ts = c->timestamp;
  if (c->count > 0) {
    payload = c->slots + (size_t)c->head * c->slot_bytes;
    len = c->lens[c->head];
    uint16_t ev = c->evs[c->head];
    c->head = (c->head + 1) % c->cap;
    c->count--;
    if (ev & EV_EVENT) {
      /* A telephone-event packet takes the place of this tick's audio; every packet of one event
         carries the timestamp of its first, whose marker starts it (RFC 4733 §2.3.5, §2.5.1). */
      if (ev & EV_START) c->event_ts = c->timestamp;
      marker = c->first || (ev & EV_START) != 0;
      pt = (uint8_t)(ev & 0x7f);
      ts = c->event_ts;
    } else {
      marker |= c->quiet;
    }
    c->quiet = 0;
    c->audio_sent++;
  } else {
    payload = c->silence;
    len = c->silence_len;
    c->quiet = 1;
    c->silence_sent++;
  }
  if (c->transmit && c->dest_len > 0) {
    // The marker stays due until a packet carries it: a tick before the destination is known (or
    // during hold) must not use it up.
    c->first = 0;
    uint8_t pkt[HEADER + MAX_PAYLOAD + SRTP_MAX_TRAILER_LEN];
    pkt[0] = 0x80;
    pkt[1] = (uint8_t)((marker ? 0x80 : 0) | (pt & 0x7f));
    pkt[2] = (uint8_t)(c->sequence >> 8);
    pkt[3] = (uint8_t)c->sequence;
    pkt[4] = (uint8_t)(ts >> 24);
    pkt[5] = (uint8_t)(ts >> 16);
    pkt[6] = (uint8_t)(ts >> 8);
    pkt[7] = (uint8_t)ts;
    pkt[8] = (uint8_t)(c->ssrc >> 24);
    pkt[9] = (uint8_t)(c->ssrc >> 16);
    pkt[10] = (uint8_t)(c->ssrc >> 8);
    pkt[11] = (uint8_t)c->ssrc;
    memcpy(pkt + HEADER, payload, len);
    int n = HEADER + len;
    if (c->srtp && srtp_session_protect(c->srtp, pkt, &n) != 0)
      c->send_errors++; /* never sent in clear */
    else if (sendto(c->fd, pkt, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&c->dest, c->dest_len) < 0)
      c->send_errors++;
    else
      c->packets++;
    c->sequence++;
  }
  c->timestamp += c->ticks;
}

static void *run(void *arg) {
  (void)arg;
  int64_t tick = 0;
  // Real-time priority, as PBX media threads have it (Asterisk -p, FreeSWITCH -rp): woken on time
  // however busy the cores are. It runs ~1 ms per 20 ms tick, so it cannot starve anyone. Needs
  // CAP_SYS_NICE (root, or a container given it); without it the thread runs at normal priority.
  struct sched_param param = {.sched_priority = 10};
  int rt = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
  pthread_mutex_lock(&mu);
  realtime = rt;
  for (;;) {
    while (calls_active == 0) {
      pthread_cond_wait(&wake, &mu);
      tick = 0;
    }
    int64_t now = now_ns();
    if (tick == 0) tick = now;
    double late_ms = (double)(now - tick) / 1e6;
    late_hist[late_ms >= LATE_BUCKETS - 1 ? LATE_BUCKETS - 1 : (int)late_ms]++;
    if (late_ms > late_max_ms) late_max_ms = late_ms;
    ticks_run++;
    for (uint32_t i = 0; i < calls_cap; i++) {
      Call *c = calls[i];
      if (!c) continue;
      if (c->next_due == 0) c->next_due = tick;
      if (now - c->next_due > LATE_SKIP_NS) {
        int64_t lost = (now - c->next_due) / TICK_NS;
        c->timestamp += (uint32_t)(lost * c->ticks);
        c->next_due += lost * TICK_NS;
        c->first = 1;
        c->skips++;
      }
      while (c->next_due <= now) {
        send_one(c);
        c->next_due += TICK_NS;
      }
    }
    tick += TICK_NS;
    if (tick <= now) tick = now + TICK_NS - (now - tick) % TICK_NS;
    pthread_mutex_unlock(&mu);
    struct timespec at = {.tv_sec = tick / 1000000000LL, .tv_nsec = tick % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
    }
    pthread_mutex_lock(&mu);
  }
  return NULL;
}

/* ---- Node-API glue ---- */

#define CHECK(call)                                                  \
  do {                                                               \
    if ((call) != napi_ok) {                                         \
      napi_throw_error(env, NULL, "rtp sender: Node-API call failed"); \
      return NULL;                                                   \
    }                                                                \
  } while (0)

static void free_call(Call *c) {
  if (c->srtp) srtp_dealloc(c->srtp);
  free(c->slots);
  free(c->lens);
  free(c->evs);
  free(c);
}

static napi_value throw_range(napi_env env, const char *msg) {
  napi_throw_range_error(env, NULL, msg);
  return NULL;
}

static int get_u32(napi_env env, napi_value obj, const char *key, uint32_t *out) {
  napi_value v;
  if (napi_get_named_property(env, obj, key, &v) != napi_ok) return 0;
  return napi_get_value_uint32(env, v, out) == napi_ok;
}

static int get_str(napi_env env, napi_value v, char *buf, size_t size) {
  size_t n;
  return napi_get_value_string_utf8(env, v, buf, size, &n) == napi_ok;
}

/** Fills `c->dest` from an IP literal; 0 when it is not one. Caller holds the lock (or owns c). */
static int set_dest(Call *c, const char *host, uint32_t port) {
  struct in_addr v4;
  struct in6_addr v6;
  memset(&c->dest, 0, sizeof c->dest);
  if (c->family == AF_INET6) {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&c->dest;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons((uint16_t)port);
    if (inet_pton(AF_INET6, host, &v6) == 1) {
      a->sin6_addr = v6;
    } else if (inet_pton(AF_INET, host, &v4) == 1) {
      a->sin6_addr.s6_addr[10] = 0xff;
      a->sin6_addr.s6_addr[11] = 0xff;
      memcpy(&a->sin6_addr.s6_addr[12], &v4, 4);
    } else {
      c->dest_len = 0;
      return 0;
    }
    c->dest_len = sizeof *a;
    return 1;
  }
  struct sockaddr_in *a = (struct sockaddr_in *)&c->dest;
  if (inet_pton(AF_INET, host, &v4) != 1) {
    c->dest_len = 0;
    return 0;
  }
  a->sin_family = AF_INET;
  a->sin_port = htons((uint16_t)port);
  a->sin_addr = v4;
  c->dest_len = sizeof *a;
  return 1;
}

static Call *call_arg(napi_env env, napi_value v) {
  uint32_t h;
  if (napi_get_value_uint32(env, v, &h) != napi_ok || h >= calls_cap || !calls[h]) {
    napi_throw_range_error(env, NULL, "rtp sender: not an open call handle");
    return NULL;
  }
  return calls[h];
}

/** The call a handle argument names, with the lock held; NULL (lock released, error thrown) if none. */
static Call *lock_call(napi_env env, size_t argc, napi_value *argv) {
  if (argc < 1) {
    napi_throw_range_error(env, NULL, "rtp sender: not an open call handle");
    return NULL;
  }
  pthread_mutex_lock(&mu);
  Call *c = call_arg(env, argv[0]);
  if (!c) pthread_mutex_unlock(&mu);
  return c;
}

/** bindUdp(host, port): a UDP socket bound there, for dgram to adopt; its fd, or −errno. */
static napi_value bind_udp(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], out;
  char host[64];
  uint32_t port;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 2 || !get_str(env, argv[0], host, sizeof host) || napi_get_value_uint32(env, argv[1], &port) != napi_ok)
    return throw_range(env, "bindUdp(host, port): expected an IP literal and a port");
  struct sockaddr_storage ss;
  socklen_t len;
  memset(&ss, 0, sizeof ss);
  int family;
  struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
    family = a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    len = sizeof *a4;
  } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
    family = a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    len = sizeof *a6;
  } else {
    return throw_range(env, "bindUdp: host must be an IPv4 or IPv6 literal");
  }
  int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int result = fd;
  if (fd < 0) {
    result = -errno;
  } else if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
    result = -errno;
    close(fd);
  }
  CHECK(napi_create_int32(env, result, &out));
  return out;
}

/**
 * rxStampMs(fd): when the kernel received the datagram last read from fd (SIOCGSTAMPNS), ms on the
 * monotonic clock (process.hrtime's),
 * or NaN before the first stamped one. The first call turns stamping on for the socket. Why: a
 * receiver that reads late (a busy event loop) still learns when the packet came, which on
 * loopback is the moment its sender sent it. libuv hands each datagram to JS right after its
 * recvmsg, so in a 'message' handler "last read" is that message.
 */
static napi_value rx_stamp(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int32_t fd;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0)
    return throw_range(env, "rxStampMs(fd): expected a socket's file descriptor");
  struct timespec ts;
  double ms = NAN;
  if (ioctl(fd, SIOCGSTAMPNS, &ts) == 0) ms = monotonic_ms_of(&ts);
  CHECK(napi_create_double(env, ms, &out));
  return out;
}

/**
 * open(fd, {payloadType, ssrc, sequence, timestamp, ticks, slotBytes, transmit}, silence):
 * registers a call; its handle. The destination comes with update().
 */
static napi_value open_call(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t fd;
  uint32_t pt, ssrc, seq, ts, ticks, slot_bytes, transmit;
  void *silence;
  size_t silence_len;
  if (argc < 3 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0)
    return throw_range(env, "open: fd must be a socket descriptor");
  if (!get_u32(env, argv[1], "payloadType", &pt) || !get_u32(env, argv[1], "ssrc", &ssrc) ||
      !get_u32(env, argv[1], "sequence", &seq) || !get_u32(env, argv[1], "timestamp", &ts) ||
      !get_u32(env, argv[1], "ticks", &ticks) || !get_u32(env, argv[1], "slotBytes", &slot_bytes) ||
      !get_u32(env, argv[1], "transmit", &transmit))
    return throw_range(env, "open: options need payloadType, ssrc, sequence, timestamp, ticks, slotBytes, transmit");
  if (slot_bytes == 0 || slot_bytes > MAX_PAYLOAD) return throw_range(env, "open: slotBytes out of range");
  if (napi_get_buffer_info(env, argv[2], &silence, &silence_len) != napi_ok || silence_len > MAX_PAYLOAD)
    return throw_range(env, "open: silence must be a Buffer of one payload");
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) return throw_range(env, "open: fd is not a bound socket");
  Call *c = calloc(1, sizeof *c);
  if (!c) return throw_range(env, "open: out of memory");
  if (argc >= 5) {
    /* SRTP: the key material we put in our SDP (30 bytes) and the tag length (80 or 32 bits). */
    napi_valuetype t;
    CHECK(napi_typeof(env, argv[3], &t));
    if (t != napi_undefined) {
      void *key;
      size_t key_len;
      uint32_t bits;
      if (napi_get_buffer_info(env, argv[3], &key, &key_len) != napi_ok ||
          napi_get_value_uint32(env, argv[4], &bits) != napi_ok ||
          srtp_session_new(&c->srtp, key, key_len, (int)bits, 1) != 0) {
        free(c);
        return throw_range(env, "open: SRTP needs a 30-byte key and a tag of 80 or 32 bits");
      }
    }
  }
  c->fd = fd;
  c->family = ss.ss_family;
  c->payload_type = (uint8_t)pt;
  c->ssrc = ssrc;
  c->sequence = (uint16_t)seq;
  c->timestamp = ts;
  c->ticks = ticks;
  c->transmit = transmit != 0;
  c->first = 1;
  c->quiet = 1;
  c->slot_bytes = slot_bytes;
  c->cap = 64;
  c->slots = malloc((size_t)c->cap * slot_bytes);
  c->lens = malloc(c->cap * sizeof *c->lens);
  c->evs = malloc(c->cap * sizeof *c->evs);
  memcpy(c->silence, silence, silence_len);
  c->silence_len = (uint16_t)silence_len;
  if (!c->slots || !c->lens || !c->evs) {
    free_call(c);
    return throw_range(env, "open: out of memory");
  }
  pthread_mutex_lock(&mu);
  uint32_t h = 0;
  while (h < calls_cap && calls[h]) h++;
  if (h == calls_cap) {
    uint32_t cap = calls_cap ? calls_cap * 2 : 256;
    Call **grown = realloc(calls, cap * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&mu);
      free_call(c);
      return throw_range(env, "open: out of memory");
    }
    memset(grown + calls_cap, 0, (cap - calls_cap) * sizeof *grown);
    calls = grown;
    calls_cap = cap;
  }
  calls[h] = c;
  calls_active++;
  if (!thread_started) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, run, NULL) == 0) thread_started = 1;
    pthread_attr_destroy(&attr);
  }
  pthread_cond_signal(&wake);
  int started = thread_started;
  pthread_mutex_unlock(&mu);
  if (!started) return throw_range(env, "open: could not start the RTP send thread");
  CHECK(napi_create_uint32(env, h, &out));
  return out;
}

/**
 * push(handle, payloads, lengths?, events?): queues payloads; without lengths, each is slotBytes
 * long. `events` (a Uint16Array, one per payload) marks RFC 4733 packets: EV_EVENT | payload type,
 * with EV_START on each event's first; 0 is audio.
 */
static napi_value push(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  void *data;
  size_t len;
  uint16_t *lens = NULL;
  size_t nlens = 0;
  if (argc < 2 || napi_get_buffer_info(env, argv[1], &data, &len) != napi_ok)
    return throw_range(env, "push: payloads must be a Buffer");
  if (argc >= 3) {
    napi_valuetype t;
    CHECK(napi_typeof(env, argv[2], &t));
    if (t != napi_undefined) {
      napi_typedarray_type tt;
      void *p;
      if (napi_get_typedarray_info(env, argv[2], &tt, &nlens, &p, NULL, NULL) != napi_ok || tt != napi_uint16_array)
        return throw_range(env, "push: lengths must be a Uint16Array");
      lens = p;
    }
  }
  uint16_t *evs = NULL;
  size_t nevs = 0;
  if (argc >= 4) {
    napi_valuetype t;
    CHECK(napi_typeof(env, argv[3], &t));
    if (t != napi_undefined) {
      napi_typedarray_type tt;
      void *p;
      if (napi_get_typedarray_info(env, argv[3], &tt, &nevs, &p, NULL, NULL) != napi_ok || tt != napi_uint16_array)
        return throw_range(env, "push: events must be a Uint16Array");
      evs = p;
    }
  }
  Call *c = lock_call(env, argc, argv);
  if (!c) return NULL;
  size_t n = lens ? nlens : len / c->slot_bytes;
  if (evs && nevs != n) {
    pthread_mutex_unlock(&mu);
    return throw_range(env, "push: events must have one entry per payload");
  }
  if (c->count + n > c->cap) {
    uint32_t cap = c->cap;
    while (c->count + n > cap) cap *= 2;
    uint8_t *slots = malloc((size_t)cap * c->slot_bytes);
    uint16_t *ls = malloc(cap * sizeof *ls);
    uint16_t *es = malloc(cap * sizeof *es);
    if (!slots || !ls || !es) {
      free(slots);
      free(ls);
      free(es);
      pthread_mutex_unlock(&mu);
      return throw_range(env, "push: out of memory");
    }
    for (uint32_t i = 0; i < c->count; i++) {
      uint32_t from = (c->head + i) % c->cap;
      memcpy(slots + (size_t)i * c->slot_bytes, c->slots + (size_t)from * c->slot_bytes, c->lens[from]);
      ls[i] = c->lens[from];
      es[i] = c->evs[from];
    }
    free(c->slots);
    free(c->lens);
    free(c->evs);
    c->slots = slots;
    c->lens = ls;
    c->evs = es;
    c->cap = cap;
    c->head = 0;
  }
  const uint8_t *src = data;
  size_t off = 0;
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = lens ? lens[i] : c->slot_bytes;
    if (l > c->slot_bytes || off + l > len) {
      bad = 1;
      break;
    }
    uint32_t at = (c->head + c->count) % c->cap;
    memcpy(c->slots + (size_t)at * c->slot_bytes, src + off, l);
    c->lens[at] = (uint16_t)l;
    c->evs[at] = evs ? evs[i] : 0;
    c->count++;
    off += l;
  }
  uint32_t queued = c->count;
  pthread_mutex_unlock(&mu);
  if (bad) return throw_range(env, "push: a payload is longer than slotBytes or runs past the buffer");
  CHECK(napi_create_uint32(env, queued, &out));
  return out;
}

/** clear(handle): drops the unsent payloads; how many. */
static napi_value clear(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Call *c = lock_call(env, argc, argv);
  if (!c) return NULL;
  uint32_t dropped = c->count;
  c->count = 0;
  c->head = 0;
  pthread_mutex_unlock(&mu);
  CHECK(napi_create_uint32(env, dropped, &out));
  return out;
}

/** sent(handle): payloads of audio sent so far (the playout position, in packets). */
static napi_value sent(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Call *c = lock_call(env, argc, argv);
  if (!c) return NULL;
  double n = c->audio_sent;
  pthread_mutex_unlock(&mu);
  CHECK(napi_create_double(env, n, &out));
  return out;
}

/** update(handle, {payloadType, transmit}, host?, port?): a re-INVITE, a hold, or a latch. */
static napi_value update(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint32_t pt, transmit, port = 0;
  char host[64] = "";
  if (argc < 2 || !get_u32(env, argv[1], "payloadType", &pt) || !get_u32(env, argv[1], "transmit", &transmit))
    return throw_range(env, "update: options need payloadType and transmit");
  int with_dest = argc >= 4;
  if (with_dest && (!get_str(env, argv[2], host, sizeof host) || napi_get_value_uint32(env, argv[3], &port) != napi_ok))
    return throw_range(env, "update: destination must be an IP literal and a port");
  Call *c = lock_call(env, argc, argv);
  if (!c) return NULL;
  c->payload_type = (uint8_t)pt;
  c->transmit = transmit != 0;
  int ok = with_dest ? set_dest(c, host, port) : 1;
  pthread_mutex_unlock(&mu);
  CHECK(napi_get_boolean(env, ok, &out));
  return out;
}

static napi_value set_num(napi_env env, napi_value obj, const char *key, double v) {
  napi_value n;
  if (napi_create_double(env, v, &n) != napi_ok || napi_set_named_property(env, obj, key, n) != napi_ok) return NULL;
  return obj;
}

/** A call's counts onto `out` (caller holds the lock, or owns the unregistered call). */
static void set_counts(napi_env env, napi_value out, const Call *c) {
  set_num(env, out, "audioPackets", c->audio_sent);
  set_num(env, out, "silencePackets", c->silence_sent);
  set_num(env, out, "packets", c->packets);
  set_num(env, out, "sendErrors", c->send_errors);
  set_num(env, out, "skips", c->skips);
}

/** close(handle): unregisters the call (the fd is no longer used when this returns); its counts. */
static napi_value close_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Call *c = lock_call(env, argc, argv);
  if (!c) return NULL;
  uint32_t h;
  napi_get_value_uint32(env, argv[0], &h);
  calls[h] = NULL;
  calls_active--;
  pthread_mutex_unlock(&mu);
  CHECK(napi_create_object(env, &out));
  set_counts(env, out, c);
  free_call(c);
  return out;
}

/** stats(handle?): a call's counts, or (no handle) the thread's: ticks and wake-up lateness. */
static napi_value stats(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(napi_create_object(env, &out));
  napi_valuetype t = napi_undefined;
  if (argc) CHECK(napi_typeof(env, argv[0], &t));
  if (t == napi_undefined) {
    pthread_mutex_lock(&mu);
    double hist[LATE_BUCKETS], n = ticks_run, max = late_max_ms, rt = realtime;
    memcpy(hist, late_hist, sizeof hist);
    pthread_mutex_unlock(&mu);
    double seen = 0, p50 = -1, p99 = -1;
    for (int i = 0; i < LATE_BUCKETS; i++) {
      seen += hist[i];
      if (p50 < 0 && seen >= n * 0.5) p50 = i;
      if (p99 < 0 && seen >= n * 0.99) p99 = i;
    }
    set_num(env, out, "ticks", n);
    set_num(env, out, "lateMsP50", p50 < 0 ? 0 : p50);
    set_num(env, out, "lateMsP99", p99 < 0 ? 0 : p99);
    set_num(env, out, "lateMsMax", max);
    set_num(env, out, "realtime", rt);
    return out;
  }
  Call *c = lock_call(env, argc, argv);
  if (!c) return NULL;
  set_counts(env, out, c);
  set_num(env, out, "queued", c->count);
  pthread_mutex_unlock(&mu);
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"bindUdp", NULL, bind_udp, NULL, NULL, NULL, napi_default, NULL},
      {"rxStampMs", NULL, rx_stamp, NULL, NULL, NULL, napi_default, NULL},
      {"open", NULL, open_call, NULL, NULL, NULL, napi_default, NULL},
      {"push", NULL, push, NULL, NULL, NULL, napi_default, NULL},
      {"clear", NULL, clear, NULL, NULL, NULL, napi_default, NULL},
      {"sent", NULL, sent, NULL, NULL, NULL, napi_default, NULL},
      {"update", NULL, update, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, close_call, NULL, NULL, NULL, napi_default, NULL},
      {"stats", NULL, stats, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof *props, props) != napi_ok) return NULL;
  if (srtp_register(env, exports) != 0) return NULL;
  return exports;
}

NAPI_MODULE_INIT() { return init(env, exports); }
