/*
 * Long-lived espeak-ng synthesis worker: one process serves many requests, so neither the
 * process spawn nor espeak's data loading sits on the latency path of a sentence. The service
 * keeps a small pool of these (libespeak-ng is a per-process singleton, so parallelism needs
 * processes) and streams the audio as it is produced.
 *
 * Request, one line on stdin (fields separated by TAB, text has no TAB/CR/LF):
 *   <id> TAB <voice> TAB <rate wpm> TAB <pitch 0-100> TAB <range 0-100> TAB <text> LF
 * Response frames on stdout, little-endian: u32 id, i32 len, then len bytes of mono s16le PCM
 * at the rate announced once at start-up. len == 0 ends the request; len < 0 is an error and
 * is followed by -len bytes of UTF-8 message.
 * Start-up: one line "ready <sample_rate>\n" on stdout before any frame.
 */
#include <espeak-ng/speak_lib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t current_id;

static int write_all(const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(STDOUT_FILENO, p, n);
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int frame(uint32_t id, int32_t len, const void *data, size_t n) {
  unsigned char head[8];
  memcpy(head, &id, 4);
  memcpy(head + 4, &len, 4);
  if (write_all(head, 8) < 0) return -1;
  return n ? write_all(data, n) : 0;
}

static int on_audio(short *wav, int numsamples, espeak_EVENT *events) {
  (void)events;
  if (wav && numsamples > 0) {
    if (frame(current_id, numsamples * 2, wav, (size_t)numsamples * 2) < 0) exit(1);
  }
  return 0;
}

static void fail(uint32_t id, const char *msg) {
  frame(id, -(int32_t)strlen(msg), msg, strlen(msg));
}

int main(void) {
  /* 60 ms buffers: the first audio of a sentence leaves after ~60 ms of it is synthesized. */
  int rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 60, NULL, 0);
  if (rate <= 0) {
    fprintf(stderr, "espeak_Initialize failed\n");
    return 1;
  }
  espeak_SetSynthCallback(on_audio);
  char hello[32];
  int hn = snprintf(hello, sizeof hello, "ready %d\n", rate);
  if (write_all(hello, (size_t)hn) < 0) return 1;

  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  char voice_now[128] = "";
  while ((len = getline(&line, &cap, stdin)) > 0) {
    if (line[len - 1] == '\n') line[--len] = 0;
    char *fields[6];
    int nf = 0;
    char *p = line;
    fields[nf++] = p;
    while (nf < 6 && (p = strchr(p, '\t'))) {
      *p++ = 0;
      fields[nf++] = p;
    }
    uint32_t id = (uint32_t)strtoul(fields[0], NULL, 10);
    if (nf < 6) {
      fail(id, "malformed request");
      continue;
    }
    current_id = id;
    if (strcmp(voice_now, fields[1]) != 0) {
      if (espeak_SetVoiceByName(fields[1]) != EE_OK) {
        fail(id, "unknown espeak voice");
        voice_now[0] = 0;
        continue;
      }
      snprintf(voice_now, sizeof voice_now, "%s", fields[1]);
    }
    espeak_SetParameter(espeakRATE, atoi(fields[2]), 0);
    espeak_SetParameter(espeakPITCH, atoi(fields[3]), 0);
    espeak_SetParameter(espeakRANGE, atoi(fields[4]), 0);
    const char *text = fields[5];
    espeak_ERROR e = espeak_Synth(text, strlen(text) + 1, 0, POS_CHARACTER, 0,
                                  espeakCHARS_UTF8 | espeakENDPAUSE, NULL, NULL);
    if (e != EE_OK) {
      fail(id, "synthesis failed");
      continue;
    }
    if (frame(id, 0, NULL, 0) < 0) return 1;
  }
  free(line);
  espeak_Terminate();
  return 0;
}
