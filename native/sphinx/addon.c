/*
 * PocketSphinx kept loaded in-process, as a Node-API addon (plain C, no npm deps).
 *
 * Why native: loading the en-us model takes ~0.3 s; a process per request would pay it every
 * time. One decoder is a single-threaded object, so the JS side owns a pool of decoders and
 * never uses one decoder from two requests at once. The slow calls (create, prime, process,
 * end) run on the libuv thread pool so the event loop keeps serving calls.
 *
 * JS surface (all handles are externals):
 *   create(args: string[]) -> Promise<handle>             args as for pocketsphinx_continuous
 *   useSearch(h, name) -> void                            "" selects the default search
 *   lookup(h, word) -> string | null                      dictionary pronunciation
 *   addWord(h, word, phones) -> boolean
 *   start(h) -> void
 *   prime(h, Int16Array) -> Promise<void>                  CMN estimate from a whole utterance
 *   process(h, Int16Array, fullUtt) -> Promise<{hyp, words}>   partial hypothesis so far
 *   end(h, nbest?) -> Promise<{hyp, words, nbest?}>        final hypothesis (+ lattice alternatives)
 *   free(h) -> void
 * words: [{word, startFrame, endFrame}] (100 frames per second, fillers included).
 */
#include <node_api.h>
#include <pocketsphinx.h>
#include <sphinxbase/ckd_alloc.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/err.h>
#include <sphinxbase/fe.h>
#include <sphinxbase/feat.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    if ((call) != napi_ok) {                                                                 \
      napi_throw_error(env, NULL, "sphinx addon: N-API call failed: " #call);              \
      return NULL;                                                                           \
    }                                                                                        \
  } while (0)

typedef struct {
  ps_decoder_t *ps;
  fe_t *prime_fe; /* own front end for prime(), so the decoder's stream state is untouched */
  char default_search[64];
  int busy; /* guards against two async operations on one decoder */
} decoder_t;

typedef struct seg_s {
  char *word;
  int sf, ef;
} seg_t;

typedef struct nbest_s {
  char *hyp;
  int32 score;
  seg_t *segs;
  int nseg;
} nbest_t;

typedef enum { OP_CREATE, OP_PROCESS, OP_END, OP_PRIME } op_t;

typedef struct {
  op_t op;
  napi_async_work work;
  napi_deferred deferred;
  napi_ref handle_ref;
  decoder_t *dec;
  /* inputs */
  int argc;
  char **argv;
  int16_t *pcm;
  size_t n;
  int full_utt;
  /* outputs */
  int rc;
  char err[256];
  char *hyp;
  seg_t *segs;
  int nseg;
  int nbest_max; /* end(): alternatives to collect from the lattice */
  struct nbest_s *nbest;
  int n_nbest;
} job_t;

static void job_free(napi_env env, job_t *j) {
  if (j->argv) {
    for (int i = 0; i < j->argc; i++) free(j->argv[i]);
    free(j->argv);
  }
  free(j->pcm);
  free(j->hyp);
  for (int i = 0; i < j->nseg; i++) free(j->segs[i].word);
  free(j->segs);
  for (int k = 0; k < j->n_nbest; k++) {
    free(j->nbest[k].hyp);
    for (int i = 0; i < j->nbest[k].nseg; i++) free(j->nbest[k].segs[i].word);
    free(j->nbest[k].segs);
  }
  free(j->nbest);
  if (j->handle_ref) napi_delete_reference(env, j->handle_ref);
  free(j);
}

static void decoder_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  decoder_t *d = data;
  if (d->prime_fe) fe_free(d->prime_fe);
  if (d->ps) ps_free(d->ps);
  free(d);
}

static seg_t *collect_segs(ps_seg_t *it, int *count) {
  int cap = 16, n = 0;
  seg_t *segs = malloc(sizeof(seg_t) * cap);
  for (; it; it = ps_seg_next(it)) {
    if (n == cap) {
      cap *= 2;
      segs = realloc(segs, sizeof(seg_t) * cap);
    }
    int sf = 0, ef = 0;
    ps_seg_frames(it, &sf, &ef);
    segs[n].word = strdup(ps_seg_word(it));
    segs[n].sf = sf;
    segs[n].ef = ef;
    n++;
  }
  *count = n;
  return segs;
}

static void collect_nbest(job_t *j) {
  if (j->nbest_max <= 0) return;
  j->nbest = calloc(j->nbest_max, sizeof(nbest_t));
  ps_nbest_t *nb = ps_nbest(j->dec->ps);
  while (nb && j->n_nbest < j->nbest_max) {
    int32 score = 0;
    const char *hyp = ps_nbest_hyp(nb, &score);
    if (hyp) {
      nbest_t *e = &j->nbest[j->n_nbest++];
      e->hyp = strdup(hyp);
      e->score = score;
      e->segs = collect_segs(ps_nbest_seg(nb), &e->nseg);
    }
    nb = ps_nbest_next(nb);
  }
  if (nb) ps_nbest_free(nb);
}

static void collect_result(job_t *j) {
  int32 score = 0;
  const char *hyp = ps_get_hyp(j->dec->ps, &score);
  j->hyp = strdup(hyp ? hyp : "");
  int cap = 16;
  j->segs = malloc(sizeof(seg_t) * cap);
  for (ps_seg_t *it = ps_seg_iter(j->dec->ps); it; it = ps_seg_next(it)) {
    if (j->nseg == cap) {
      cap *= 2;
      j->segs = realloc(j->segs, sizeof(seg_t) * cap);
    }
    int sf = 0, ef = 0;
    ps_seg_frames(it, &sf, &ef);
    j->segs[j->nseg].word = strdup(ps_seg_word(it));
    j->segs[j->nseg].sf = sf;
    j->segs[j->nseg].ef = ef;
    j->nseg++;
  }
}

static void execute(napi_env env, void *data) {
  (void)env;
  job_t *j = data;
  switch (j->op) {
    case OP_CREATE: {
      cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), j->argc, j->argv, FALSE);
      if (!config) {
        j->rc = -1;
        snprintf(j->err, sizeof j->err, "invalid decoder arguments");
        return;
      }
      ps_default_search_args(config);
      ps_decoder_t *ps = ps_init(config);
      cmd_ln_free_r(config);
      if (!ps) {
        j->rc = -1;
        snprintf(j->err, sizeof j->err, "ps_init failed (model paths?)");
        return;
      }
      j->dec = calloc(1, sizeof(decoder_t));
      j->dec->ps = ps;
      const char *s = ps_get_search(ps);
      snprintf(j->dec->default_search, sizeof j->dec->default_search, "%s", s ? s : "");
      return;
    }
    case OP_PROCESS: {
      int r = ps_process_raw(j->dec->ps, j->pcm, j->n, FALSE, j->full_utt);
      if (r < 0) {
        j->rc = r;
        snprintf(j->err, sizeof j->err, "ps_process_raw failed");
        return;
      }
      collect_result(j);
      return;
    }
    case OP_PRIME: {
      /* Cepstral mean of the whole utterance (speech frames), set as the live CMN estimate: the
         chunked decode then normalizes like batch CMN while still giving partial results. */
      decoder_t *d = j->dec;
      if (!d->prime_fe) d->prime_fe = fe_init_auto_r(ps_get_config(d->ps));
      if (!d->prime_fe) {
        j->rc = -1;
        snprintf(j->err, sizeof j->err, "cannot create front end");
        return;
      }
      int ncep = fe_get_output_size(d->prime_fe);
      const int block = 256;
      mfcc_t **cep = ckd_calloc_2d(block + 1, ncep, sizeof(mfcc_t));
      double *sum = calloc(ncep, sizeof(double));
      long frames = 0;
      const int16 *p = j->pcm;
      size_t left = j->n;
      fe_start_stream(d->prime_fe); /* forget noise estimates of earlier requests */
      fe_start_utt(d->prime_fe);
      while (left > 0) {
        int32 nfr = block;
        size_t before = left;
        if (fe_process_frames(d->prime_fe, &p, &left, cep, &nfr, NULL) < 0) break;
        for (int f = 0; f < nfr; f++)
          for (int c = 0; c < ncep; c++) sum[c] += cep[f][c];
        frames += nfr;
        if (nfr == 0 && left == before) break;
      }
      int32 nlast = 0;
      fe_end_utt(d->prime_fe, cep[0], &nlast);
      for (int f = 0; f < nlast; f++)
        for (int c = 0; c < ncep; c++) sum[c] += cep[f][c];
      frames += nlast;
      feat_t *feat = ps_get_feat(d->ps);
      if (frames > 0 && feat && feat->cmn_struct) {
        mfcc_t *mean = calloc(ncep, sizeof(mfcc_t));
        for (int c = 0; c < ncep; c++) mean[c] = (mfcc_t)(sum[c] / frames);
        cmn_live_set(feat->cmn_struct, mean);
        free(mean);
      }
      free(sum);
      ckd_free_2d(cep);
      return;
    }
    case OP_END: {
      int r = ps_end_utt(j->dec->ps);
      if (r < 0) {
        j->rc = r;
        snprintf(j->err, sizeof j->err, "ps_end_utt failed");
        return;
      }
      collect_result(j);
      collect_nbest(j);
      return;
    }
  }
}

static napi_value make_words(napi_env env, seg_t *segs, int nseg) {
  napi_value words;
  napi_create_array_with_length(env, nseg, &words);
  for (int i = 0; i < nseg; i++) {
    napi_value w, s, e, o;
    napi_create_object(env, &o);
    napi_create_string_utf8(env, segs[i].word, NAPI_AUTO_LENGTH, &w);
    napi_create_int32(env, segs[i].sf, &s);
    napi_create_int32(env, segs[i].ef, &e);
    napi_set_named_property(env, o, "word", w);
    napi_set_named_property(env, o, "startFrame", s);
    napi_set_named_property(env, o, "endFrame", e);
    napi_set_element(env, words, i, o);
  }
  return words;
}

static napi_value make_result(napi_env env, job_t *j) {
  napi_value obj, hyp, words;
  napi_create_object(env, &obj);
  napi_create_string_utf8(env, j->hyp ? j->hyp : "", NAPI_AUTO_LENGTH, &hyp);
  napi_set_named_property(env, obj, "hyp", hyp);
  napi_create_array_with_length(env, j->nseg, &words);
  for (int i = 0; i < j->nseg; i++) {
    napi_value w, s, e, o;
    napi_create_object(env, &o);
    napi_create_string_utf8(env, j->segs[i].word, NAPI_AUTO_LENGTH, &w);
    napi_create_int32(env, j->segs[i].sf, &s);
    napi_create_int32(env, j->segs[i].ef, &e);
    napi_set_named_property(env, o, "word", w);
    napi_set_named_property(env, o, "startFrame", s);
    napi_set_named_property(env, o, "endFrame", e);
    napi_set_element(env, words, i, o);
  }
  napi_set_named_property(env, obj, "words", words);
  if (j->nbest_max > 0) {
    napi_value list;
    napi_create_array_with_length(env, j->n_nbest, &list);
    for (int k = 0; k < j->n_nbest; k++) {
      napi_value o, h, sc;
      napi_create_object(env, &o);
      napi_create_string_utf8(env, j->nbest[k].hyp, NAPI_AUTO_LENGTH, &h);
      napi_create_int32(env, j->nbest[k].score, &sc);
      napi_set_named_property(env, o, "hyp", h);
      napi_set_named_property(env, o, "score", sc);
      napi_set_named_property(env, o, "words", make_words(env, j->nbest[k].segs, j->nbest[k].nseg));
      napi_set_element(env, list, k, o);
    }
    napi_set_named_property(env, obj, "nbest", list);
  }
  return obj;
}

static void complete(napi_env env, napi_status status, void *data) {
  job_t *j = data;
  if (j->dec && j->op != OP_CREATE) j->dec->busy = 0;
  napi_value result = NULL;
  if (status != napi_ok || j->rc < 0) {
    napi_value msg, error;
    napi_create_string_utf8(env, j->err[0] ? j->err : "sphinx operation failed", NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &error);
    if (j->op == OP_CREATE && j->dec) {
      ps_free(j->dec->ps);
      free(j->dec);
    }
    napi_reject_deferred(env, j->deferred, error);
  } else {
    switch (j->op) {
      case OP_CREATE:
        napi_create_external(env, j->dec, decoder_finalize, NULL, &result);
        break;
      case OP_PRIME:
        napi_get_undefined(env, &result);
        break;
      default:
        result = make_result(env, j);
    }
    napi_resolve_deferred(env, j->deferred, result);
  }
  napi_delete_async_work(env, j->work);
  job_free(env, j);
}

static napi_value queue(napi_env env, job_t *j, const char *label) {
  napi_value promise, name;
  CHECK(napi_create_promise(env, &j->deferred, &promise));
  CHECK(napi_create_string_utf8(env, label, NAPI_AUTO_LENGTH, &name));
  CHECK(napi_create_async_work(env, NULL, name, execute, complete, j, &j->work));
  CHECK(napi_queue_async_work(env, j->work));
  return promise;
}

static char *get_string(napi_env env, napi_value v) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  napi_get_value_string_utf8(env, v, s, len + 1, &len);
  return s;
}

/* Takes the decoder out of argument 0, refusing a decoder in use by another operation. */
static decoder_t *get_decoder(napi_env env, napi_value v, int claim) {
  decoder_t *d = NULL;
  if (napi_get_value_external(env, v, (void **)&d) != napi_ok || !d || !d->ps) {
    napi_throw_type_error(env, NULL, "sphinx addon: expected a decoder handle");
    return NULL;
  }
  if (d->busy) {
    napi_throw_error(env, NULL, "sphinx addon: decoder is busy with another operation");
    return NULL;
  }
  if (claim) d->busy = 1;
  return d;
}

static job_t *new_job(napi_env env, op_t op, napi_value handle, decoder_t *d) {
  job_t *j = calloc(1, sizeof(job_t));
  j->op = op;
  j->dec = d;
  if (handle) napi_create_reference(env, handle, 1, &j->handle_ref); /* keep the decoder alive */
  return j;
}

static napi_value js_create(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint32_t n = 0;
  if (argc < 1 || napi_get_array_length(env, argv[0], &n) != napi_ok) {
    napi_throw_type_error(env, NULL, "create(args: string[])");
    return NULL;
  }
  job_t *j = new_job(env, OP_CREATE, NULL, NULL);
  j->argc = (int)n;
  j->argv = calloc(n + 1, sizeof(char *));
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    napi_get_element(env, argv[0], i, &el);
    j->argv[i] = get_string(env, el);
    if (!j->argv[i]) {
      job_free(env, j);
      napi_throw_type_error(env, NULL, "create: every argument must be a string");
      return NULL;
    }
  }
  return queue(env, j, "sphinx.create");
}

static napi_value js_use_search(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = get_decoder(env, argv[0], 0);
  if (!d) return NULL;
  char *name = get_string(env, argv[1]);
  const char *target = (name && name[0]) ? name : d->default_search;
  int rc = ps_set_search(d->ps, target);
  free(name);
  if (rc < 0) {
    napi_throw_error(env, NULL, "sphinx addon: no such search");
    return NULL;
  }
  return NULL;
}

static napi_value js_lookup(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = get_decoder(env, argv[0], 0);
  if (!d) return NULL;
  char *word = get_string(env, argv[1]);
  char *phones = word ? ps_lookup_word(d->ps, word) : NULL;
  free(word);
  if (!phones) {
    napi_get_null(env, &out);
    return out;
  }
  napi_create_string_utf8(env, phones, NAPI_AUTO_LENGTH, &out);
  ckd_free(phones);
  return out;
}

static napi_value js_add_word(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = get_decoder(env, argv[0], 0);
  if (!d) return NULL;
  char *word = get_string(env, argv[1]);
  char *phones = get_string(env, argv[2]);
  int rc = (word && phones) ? ps_add_word(d->ps, word, phones, TRUE) : -1;
  free(word);
  free(phones);
  napi_get_boolean(env, rc >= 0, &out);
  return out;
}

static napi_value js_start(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = get_decoder(env, argv[0], 0);
  if (!d) return NULL;
  /* Each request is its own stream: segment times start at 0 (the CMN estimate still carries over). */
  ps_start_stream(d->ps);
  if (ps_start_utt(d->ps) < 0) napi_throw_error(env, NULL, "sphinx addon: ps_start_utt failed");
  return NULL;
}

/* A job on argv[0]'s decoder carrying a copy of the Int16Array in argv[1] (the JS buffer may be
   reused or collected while the thread pool reads it); NULL with a JS exception pending on bad
   arguments. */
static job_t *pcm_job(napi_env env, size_t argc, napi_value *argv, op_t op, const char *usage) {
  napi_typedarray_type type;
  size_t length = 0;
  void *data = NULL;
  if (argc < 2 || napi_get_typedarray_info(env, argv[1], &type, &length, &data, NULL, NULL) != napi_ok ||
      type != napi_int16_array) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  decoder_t *d = get_decoder(env, argv[0], 1);
  if (!d) return NULL;
  job_t *j = new_job(env, op, argv[0], d);
  j->pcm = malloc(length * sizeof(int16_t) + 1);
  memcpy(j->pcm, data, length * sizeof(int16_t));
  j->n = length;
  return j;
}

static napi_value js_process(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  job_t *j = pcm_job(env, argc, argv, OP_PROCESS, "process(handle, Int16Array, fullUtt)");
  if (!j) return NULL;
  bool full = false;
  if (argc >= 3) napi_get_value_bool(env, argv[2], &full);
  j->full_utt = full ? 1 : 0;
  return queue(env, j, "sphinx.process");
}

static napi_value js_prime(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  job_t *j = pcm_job(env, argc, argv, OP_PRIME, "prime(handle, Int16Array)");
  if (!j) return NULL;
  return queue(env, j, "sphinx.prime");
}

static napi_value js_end(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = get_decoder(env, argv[0], 1);
  if (!d) return NULL;
  job_t *j = new_job(env, OP_END, argv[0], d);
  int32_t nbest = 0;
  if (argc >= 2) napi_get_value_int32(env, argv[1], &nbest);
  j->nbest_max = nbest > 0 ? (nbest > 200 ? 200 : nbest) : 0;
  return queue(env, j, "sphinx.end");
}

static napi_value js_free(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = get_decoder(env, argv[0], 0);
  if (!d) return NULL;
  ps_free(d->ps);
  d->ps = NULL;
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  /* PocketSphinx logs a lot to stderr by default; the service has its own logs. */
  err_set_logfp(NULL);
  struct {
    const char *name;
    napi_callback fn;
  } fns[] = {{"create", js_create}, {"useSearch", js_use_search},
             {"lookup", js_lookup}, {"addWord", js_add_word}, {"start", js_start},
             {"process", js_process}, {"prime", js_prime}, {"end", js_end},     {"free", js_free}};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value f;
    CHECK(napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f));
    CHECK(napi_set_named_property(env, exports, fns[i].name, f));
  }
  return exports;
}

NAPI_MODULE_INIT() { return init(env, exports); }
