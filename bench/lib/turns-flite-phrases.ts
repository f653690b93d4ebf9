// The HELD-OUT set of the turn-taking benchmark: what callers say in the second set of voices
// (Debian's flite, a different synthesizer from the project set's espeak-ng). Written before
// any turn-taking setting was tuned, and not to be changed after seeing results: nothing here
// may be used to choose a setting, or it stops measuring how the defaults generalize.
//
// Sizes are chosen so that one miss moves a rate by less than its target: 36 pause cases (one
// cut-off = 0.028 against a target of 0.03), 20 over-the-agent sounds (one false barge-in = 0.05)
// and 20 interruptions (one missed = 0.05).

export const FLITE_COMPLETE = [
  "How late are you open tonight?",
  "Do you sell bike locks?",
  "I'd like to cancel my order.",
  "Can you check if my refund went through?",
  "What's the price of a new chain?",
  "Is there parking near the store?",
  "My name is Sarah Collins.",
  "I think my wheel is bent.",
  "Could somebody call me back tomorrow?",
  "Do you have mountain bikes in stock?",
  "That's all, thanks.",
  "How long does a repair usually take?",
  "I lost my receipt.",
  "Can I pay by card over the phone?",
  "The pedal fell off yesterday.",
  "Are you hiring at the moment?",
  "Please send me the invoice by email.",
  "Which brands do you carry?",
  "I'm returning a helmet that doesn't fit.",
  "Goodbye.",
];

/** [before the pause, after it, are the words before it a complete sentence?] */
export const FLITE_PAUSED: Array<[string, string, boolean]> = [
  ["I'd like to order", "a new set of tyres.", false],
  ["The bike I bought", "makes a clicking noise.", false],
  ["Can I bring it in", "on Thursday afternoon?", true],
  ["My postcode is", "nine four one one zero.", false],
  ["I paid for express shipping", "but it took two weeks.", true],
  ["Do you know whether", "the shop is open on holidays?", false],
  ["We have three kids", "and need a family bike.", true],
  ["Um, I'm not sure", "which size I need.", true],
  ["The problem is", "the gears keep slipping.", false],
  ["I called yesterday", "about a broken spoke.", true],
  ["Could I get", "a quote for a full service?", false],
  ["It's for my daughter's", "tenth birthday.", false],
  ["I live on the other side of town", "so delivery would help.", true],
  ["How much would it cost to", "replace the front wheel?", false],
  ["Last month I", "bought a pump from you.", false],
  ["Is it possible", "to rent a bike for a week?", true],
  ["My account number is", "seven seven two nine.", false],
  ["I want a refund", "because the frame is cracked.", true],
  ["We were hoping", "to pick it up today.", false],
  ["The light on the handlebar", "stopped working.", false],
  ["I'm looking for", "a bike that folds.", false],
  ["Your website says", "you close at six.", false],
  ["I tried to pay online", "and the page crashed.", true],
  ["Would you be able to", "fix it by Friday?", false],
  ["Well, basically", "the brake cable snapped.", false],
  ["My husband ordered", "two helmets last week.", false],
  ["There's a scratch on the frame", "that wasn't there before.", true],
  ["What I really need is", "someone to look at the chain.", false],
  ["I'd also like", "a bell and a basket.", false],
  ["Actually, it's about", "the warranty.", false],
  ["I'm free on Monday", "or Tuesday morning.", true],
  ["The email said", "my order was dispatched.", false],
  ["Could you send", "a replacement part?", false],
  ["So if I bring the receipt", "can I exchange it?", false],
  ["I think the tyre", "has a slow puncture.", false],
  ["We spoke on the phone", "a few days ago.", true],
];

/** The pause inside each paused sentence, ms: 200–800, a different spread from the project set's. */
export const FLITE_PAUSES_MS = [
  240, 310, 380, 450, 520, 590, 660, 730, 800, 270, 350, 420, 490, 560, 630, 700, 770, 210, 330, 400, 470,
  540, 610, 680, 750, 230, 290, 360, 430, 500, 570, 640, 710, 780, 260, 460,
];

export const FLITE_BACKCHANNELS = [
  "mm hmm",
  "yes",
  "yep",
  "okay then",
  "uh huh",
  "alright",
  "got it",
  "I see",
  "oh okay",
  "yeah yeah",
  "sure",
  "right right",
  "uh huh",
  "cool",
];

export const FLITE_COUGH_MS = [160, 200, 230, 260, 290, 320];

export const FLITE_INTERRUPTIONS = [
  "Stop, that's wrong.",
  "Wait, I didn't say that.",
  "No, I meant the blue one.",
  "Hold on a second please.",
  "Sorry to interrupt, but I'm in a hurry.",
  "Excuse me, can I ask something?",
  "Actually, I changed my mind.",
  "No, not that order, the other one.",
  "Hang on, let me find my receipt.",
  "Just a moment, please.",
  "Okay stop, I understand.",
  "Wait, how much did you say?",
  "Sorry, I can't hear you very well.",
  "Let me stop you there.",
  "Hold on, someone's at the door.",
  "No wait, go back.",
  "Can you slow down a little?",
  "I already know that.",
  "Sorry, what was the address again?",
  "Please just transfer me to a person.",
];

/** flite's English voices (kal16 is kal at 16 kHz; awb_time speaks only the time of day). */
export const FLITE_VOICES = ["kal", "awb", "rms", "slt"];
/** flite's duration_stretch per case: > 1 speaks slower. */
export const FLITE_STRETCH = [1.0, 1.1, 0.9, 1.15, 0.95, 1.05, 1.2, 0.85];
