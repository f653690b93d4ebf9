// A kernel receive stamp (CLOCK_REALTIME) moved onto CLOCK_MONOTONIC, in ms: the clock of
// process.hrtime() and performance.now(). Why: NTP slews and steps the wall clock, so an epoch stamp
// less performance.timeOrigin (the wall clock once, at the thread's start) is off by a few ms that
// grow as the process runs. Moved at once, while the two clocks have not drifted apart. Shared by
// the addons that read stamps (rtp/sender.c rxStampMs, bench/ws-stamps.c).
#ifndef VB_MONOTONIC_STAMP_H
#define VB_MONOTONIC_STAMP_H
#include <time.h>

static inline double monotonic_ms_of(const struct timespec *stamp) {
  struct timespec wall, mono;
  clock_gettime(CLOCK_REALTIME, &wall);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  double age = (double)(wall.tv_sec - stamp->tv_sec) * 1e3 + (double)(wall.tv_nsec - stamp->tv_nsec) / 1e6;
  return (double)mono.tv_sec * 1e3 + (double)mono.tv_nsec / 1e6 - age;
}

#endif
