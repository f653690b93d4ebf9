// The turn-taking benchmark's figures from the judged calls: rates over the valid cases of each
// category (a case is invalid when its call did not set the scene, e.g. the agent had already
// stopped talking), medians of the timings, and the counts behind every figure.
import { percentile, round } from "./measure.ts";
import type { Outcome } from "./turns-judge.ts";

export const TARGETS = {
  eou_delay_ms_p50: 350,
  premature_cutoff_rate: 0.03,
  talk_over_rate: 0.1,
  barge_in_ms_p50: 300,
  false_barge_in_rate: 0.05,
  missed_barge_in_rate: 0.05,
} as const;

const rate = (hits: number, of: number) => (of > 0 ? round(hits / of, 3) : null);
const p = (values: number[], q: number) => (values.length ? Math.round(percentile(values, q)) : null);
const nums = (values: Array<number | undefined>) => values.filter((v): v is number => v !== undefined);

const caseAndCall = (o: Outcome) => (o.callSid ? `${o.id} ${o.callSid}` : o.id);

/** Pauses of the agent while the caller was silent, over every call judged (turns-judge.ts roomPauses). */
function roomFigures(outcomes: readonly Outcome[]) {
  const pauses = outcomes.flatMap((o) => o.roomPauses);
  const stalls = nums(pauses.map((ms) => ms ?? undefined));
  return {
    perCall: outcomes.length ? round(pauses.length / outcomes.length, 3) : null,
    // The silence each cost the caller.
    stallP50: p(stalls, 50),
    detail: {
      pauses: pauses.length,
      calls: outcomes.filter((o) => o.roomPauses.length > 0).length,
      // Not heard again before the caller next spoke: the room stopped the agent.
      stopped: pauses.filter((ms) => ms === null).length,
      stall_ms_p90: p(stalls, 90),
      stall_ms_max: p(stalls, 100),
    },
  };
}

/** The questions (complete utterances) asked, and those answered: by a reply, the apology, or asked again. */
function answersOf(outcomes: readonly Outcome[]) {
  // Every complete utterance whose call ran counts, valid or not: in noise, an agent still talking
  // when the caller starts is the background's doing, and the caller was not answered.
  const asked = outcomes.filter((o) => o.category === "complete" && o.error === undefined);
  // Answered: a user turn and a reply heard after it, or the apology heard after it (a turn the
  // service failed: never silence), or the caller asked to say it again (no words made out in
  // their voice): never silence.
  const answered = asked.filter(
    (o) =>
      o.apology === true ||
      o.askedAgain === true ||
      (o.userTexts.length > 0 && o.eouDelayMs !== undefined && o.callerVoiceToVoiceMs !== undefined),
  );
  return {
    asked,
    answered,
    apologized: asked.filter((o) => o.apology === true),
    askedAgain: asked.filter((o) => o.askedAgain === true),
  };
}

export function summarize(outcomes: readonly Outcome[]) {
  const valid = outcomes.filter((o) => o.valid);
  const of = (cat: Outcome["category"]) => valid.filter((o) => o.category === cat);

  const complete = of("complete");
  const { asked, answered, apologized, askedAgain } = answersOf(outcomes);
  // What the caller waited, from the recording: end of speech → the answer or the apology heard.
  const heardAfter = nums(answered.filter((o) => o.valid).map((o) => o.heardAfterMs));
  const eou = nums(complete.map((o) => o.eouDelayMs));
  const eouCaller = nums(complete.map((o) => o.callerEouDelayMs));

  const pauses = of("pause");
  const premature = pauses.filter((o) => o.premature);
  const afterComplete = pauses.filter((o) => o.firstPartComplete);
  const afterUnfinished = pauses.filter((o) => !o.firstPartComplete);

  const overAgent = [...of("backchannel"), ...of("cough")];
  const falseBarge = overAgent.filter((o) => o.falseBargeIn);
  const interrupts = of("interrupt");
  const missed = interrupts.filter((o) => o.missed);
  const clearMs = nums(interrupts.map((o) => o.clearMs));

  // Calls the caller made no sound over the greeting in: was it stopped before they spoke?
  const quietOverGreeting = outcomes.filter((o) => o.greetingStopped !== undefined);
  const greetingStopped = quietOverGreeting.filter((o) => o.greetingStopped);

  // Heard twice within one reply (turns-repeats.ts), over every call that was judged.
  const repeated = outcomes.filter((o) => (o.repeats?.ms ?? 0) > 0);

  // The silence after a backchannel the agent went on after (turns-judge.ts resumedAfterMs).
  const backchannelSilences = nums(of("backchannel").map((o) => o.resumedAfterMs));

  const room = roomFigures(outcomes);
  // Talk-over: any agent audio heard from the pause's start to the end of the caller's sentence.
  const talkOver = pauses.filter((o) => o.prematureAudible);
  const figures = {
    answered_rate: rate(answered.length, asked.length),
    apology_rate: rate(apologized.length, asked.length),
    asked_again_rate: rate(askedAgain.length, asked.length),
    caller_v2v_ms_p50: p(heardAfter, 50),
    caller_v2v_ms_p90: p(heardAfter, 90),
    eou_delay_ms_p50: p(eou, 50),
    premature_cutoff_rate: rate(premature.length, pauses.length),
    talk_over_rate: rate(talkOver.length, pauses.length),
    talk_over_ms_max: pauses.length ? Math.max(0, ...pauses.map((o) => o.talkOverMs ?? 0)) : null,
    barge_in_ms_p50: p(clearMs, 50),
    false_barge_in_rate: rate(falseBarge.length, overAgent.length),
    missed_barge_in_rate: rate(missed.length, interrupts.length),
    greeting_stopped_rate: rate(greetingStopped.length, quietOverGreeting.length),
    room_pauses_per_call: room.perCall,
    room_stall_ms_p50: room.stallP50,
    repeated_words: outcomes.reduce((n, o) => n + (o.repeats?.words ?? 0), 0),
    repeated_audio_ms: outcomes.reduce((n, o) => n + (o.repeats?.ms ?? 0), 0),
  };
  const meets = Object.fromEntries(
    Object.entries(TARGETS).map(([k, limit]) => {
      const v = figures[k as keyof typeof figures];
      return [k, v === null ? null : v <= limit];
    }),
  );
  const countBy = (list: readonly Outcome[]) =>
    Object.fromEntries(
      ["complete", "pause", "backchannel", "cough", "interrupt"].map((c) => [
        c,
        list.filter((o) => o.category === c).length,
      ]),
    );

  return {
    ...figures,
    targets: TARGETS,
    meets_targets: meets,
    n: countBy(valid),
    n_total: countBy(outcomes),
    repeats: repeated.map((o) => ({
      id: o.id,
      words: o.repeats!.words,
      ms: o.repeats!.ms,
      ...(o.repeats!.heard.length > 0 ? { heard: o.repeats!.heard } : {}),
    })),
    // Calls whose recording the repeats judge matched to what their speech sessions delivered.
    repeats_judged_calls: outcomes.filter((o) => (o.repeats?.found ?? 0) > 0).length,
    greeting_stopped: greetingStopped.map((o) => o.id),
    // Which cases, and their calls (the --trace log's callId): where to read what happened.
    false_barge_in: falseBarge.map(caseAndCall),
    missed_barge_in: missed.map(caseAndCall),
    invalid: outcomes
      .filter((o) => !o.valid)
      .map((o) => ({ id: o.id, why: o.invalidWhy, ...(o.error ? { error: o.error } : {}) })),
    eou: {
      with_metrics: eou.length,
      eou_delay_ms_p90: p(eou, 90),
      eou_delay_ms_max: eou.length ? Math.max(...eou) : null,
      // The bridge's delay corrected to the true end of speech (its VAD end vs. the timeline).
      caller_eou_delay_ms_p50: p(eouCaller, 50),
      asr_ms_p50: p(nums(complete.map((o) => o.asrMs)), 50),
      caller_voice_to_voice_ms_p50: p(nums(complete.map((o) => o.callerVoiceToVoiceMs)), 50),
      no_turn: complete.filter((o) => o.userTexts.length === 0).length,
      split_in_two: complete.filter((o) => o.userTexts.length > 1).length,
      waited_long: eou.filter((v) => v >= 1000).length,
    },
    pause: {
      premature: premature.length,
      premature_audible: premature.filter((o) => o.prematureAudible).length,
      premature_after_complete_words: `${afterComplete.filter((o) => o.premature).length}/${afterComplete.length}`,
      premature_after_unfinished_words: `${afterUnfinished.filter((o) => o.premature).length}/${afterUnfinished.length}`,
      premature_pause_ms: premature.map((o) => o.pauseMs),
      // The agent went on talking over the rest of the caller's sentence without a barge-in:
      // its first audio came after the caller had resumed, so the bridge never saw speech over it.
      talked_over_without_barge_in: premature.filter(
        (o) => (o.talkedOverMs ?? 0) >= 500 && o.bargeIns.interrupted + o.bargeIns.resumed === 0,
      ).length,
      talked_over_ms: premature.map((o) => o.talkedOverMs),
      talk_over_after_complete_words: `${afterComplete.filter((o) => o.prematureAudible).length}/${afterComplete.length}`,
      talk_over_ms: talkOver.map((o) => o.talkOverMs),
    },
    backchannel: {
      false_barge_ins: of("backchannel").filter((o) => o.falseBargeIn).length,
      paused_then_resumed: of("backchannel").filter((o) => o.paused && !o.falseBargeIn).length,
      ignored: of("backchannel").filter((o) => !o.paused).length,
      // Length of each backchannel that interrupted the agent, and of each that did not.
      interrupted_ms: of("backchannel")
        .filter((o) => o.falseBargeIn)
        .map((o) => o.soundMs),
      resumed_ms: of("backchannel")
        .filter((o) => !o.falseBargeIn)
        .map((o) => o.soundMs),
      // The silence after a backchannel the agent paused for and went on after: its end → the agent heard again.
      resumed_after_ms_p50: p(backchannelSilences, 50),
      resumed_after_ms_max: p(backchannelSilences, 100),
    },
    cough: {
      false_barge_ins: of("cough").filter((o) => o.falseBargeIn).length,
      paused_then_resumed: of("cough").filter((o) => o.paused && !o.falseBargeIn).length,
      ignored: of("cough").filter((o) => !o.paused).length,
      resumed_after_ms_p50: p(nums(of("cough").map((o) => o.resumedAfterMs)), 50),
    },
    room: room.detail,
    interrupt: {
      missed: missed.length,
      // Agent audio heard over an interruption after it first paused the agent (resumed at a comma).
      talked_over_after_clear: interrupts.filter((o) => (o.talkOverAfterClearMs ?? 0) > 0).length,
      talk_over_after_clear_ms: nums(interrupts.map((o) => o.talkOverAfterClearMs)).filter((ms) => ms > 0),
      barge_in_ms_p90: p(clearMs, 90),
      bridge_barge_in_ms_p50: p(nums(interrupts.map((o) => o.bridgeBargeInMs)), 50),
    },
  };
}
