// Noise suppression of one call's caller audio on WebRTC's audio processing module (Debian's
// libwebrtc-audio-processing, what PipeWire and PulseAudio use), as a Node-API addon:
//   create(rate, level) -> handle   an APM with its noise suppressor alone (8/16/32 kHz; level 0-3)
//   process(handle, Int16Array)     suppresses in place; the length is a whole number of 10 ms blocks
// One handle per call: the suppressor learns that call's noise. Nothing is allocated per block.
#include <node_api.h>
#include <string.h>

#include <webrtc/modules/audio_processing/include/audio_processing.h>
#include <webrtc/modules/interface/module_common_types.h>

namespace {

struct Suppressor {
  webrtc::AudioProcessing* apm;
  webrtc::AudioFrame frame;
  int rate;
};

void finalize(napi_env, void* data, void*) {
  Suppressor* s = static_cast<Suppressor*>(data);
  delete s->apm;
  delete s;
}

napi_value fail(napi_env env, const char* message) {
  napi_throw_error(env, nullptr, message);
  return nullptr;
}

napi_value create(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int32_t rate = 0;
  int32_t level = 2;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &rate) != napi_ok) return fail(env, "create(rate, level)");
  if (argc > 1) napi_get_value_int32(env, argv[1], &level);
  if (rate != 8000 && rate != 16000 && rate != 32000) return fail(env, "rate must be 8000, 16000 or 32000");
  if (level < 0 || level > 3) return fail(env, "level must be 0 to 3");
  Suppressor* s = new Suppressor();
  s->rate = rate;
  s->apm = webrtc::AudioProcessing::Create();
  if (!s->apm) {
    delete s;
    return fail(env, "webrtc AudioProcessing::Create failed");
  }
  s->apm->noise_suppression()->set_level(static_cast<webrtc::NoiseSuppression::Level>(level));
  s->apm->noise_suppression()->Enable(true);
  s->frame.sample_rate_hz_ = rate;
  s->frame.num_channels_ = 1;
  s->frame.samples_per_channel_ = static_cast<size_t>(rate / 100);
  napi_value handle;
  if (napi_create_external(env, s, finalize, nullptr, &handle) != napi_ok) {
    finalize(env, s, nullptr);
    return fail(env, "napi_create_external failed");
  }
  return handle;
}

napi_value process(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  void* data = nullptr;
  if (argc < 2 || napi_get_value_external(env, argv[0], &data) != napi_ok || !data)
    return fail(env, "process(handle, pcm)");
  Suppressor* s = static_cast<Suppressor*>(data);
  napi_typedarray_type type;
  size_t length = 0;
  void* raw = nullptr;
  if (napi_get_typedarray_info(env, argv[1], &type, &length, &raw, nullptr, nullptr) != napi_ok ||
      type != napi_int16_array)
    return fail(env, "pcm must be an Int16Array");
  const size_t block = static_cast<size_t>(s->rate / 100);
  if (length % block != 0) return fail(env, "pcm must hold whole 10 ms blocks");
  int16_t* pcm = static_cast<int16_t*>(raw);
  for (size_t at = 0; at < length; at += block) {
    memcpy(s->frame.data_, pcm + at, block * sizeof(int16_t));
    s->frame.samples_per_channel_ = block;
    if (s->apm->ProcessStream(&s->frame) != webrtc::AudioProcessing::kNoError)
      return fail(env, "webrtc ProcessStream failed");
    memcpy(pcm + at, s->frame.data_, block * sizeof(int16_t));
  }
  return nullptr;
}

napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"create", nullptr, create, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"process", nullptr, process, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
