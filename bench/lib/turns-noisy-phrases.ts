// The NOISY set of the turn-taking benchmark: what callers in shops, streets and cafés say, in
// voices of their own (espeak-ng variants neither quiet set uses), and what the room says behind
// them. Written before anything was tuned for noise, and not to be changed after seeing results:
// the backgrounds and their levels are what the runs vary (`--noise`), the callers stay the same.
//
// Sized like the held-out set, so one miss moves a rate by less than its target: 34 pause cases
// (one cut-off = 0.029), 20 over-the-agent sounds (one false barge-in = 0.05), 20 interruptions.

export const NOISY_COMPLETE = [
  "Hi, do you still have the city bike in green?",
  "Can you hear me? I'm on the bus.",
  "I need a new inner tube for a road bike.",
  "What time do you open tomorrow morning?",
  "My brakes stopped working on the way home.",
  "Is the workshop open on bank holidays?",
  "I want to return a saddle I bought last week.",
  "How much is a basic service?",
  "Do you deliver to the north side of town?",
  "I'm outside the shop but the door is locked.",
  "Can I change the pickup time to four o'clock?",
  "Do you have kids' bikes with stabilisers?",
  "The chain keeps falling off when I change gear.",
  "I'd like to speak to the manager, please.",
  "Is my repair finished yet?",
  "Thanks, that's everything.",
];

/** [before the pause, after it, are the words before it a complete sentence?] */
export const NOISY_PAUSED: Array<[string, string, boolean]> = [
  ["I'm calling from", "a really noisy café.", false],
  ["The bike I picked up", "is making a grinding sound.", false],
  ["Could you check whether", "my helmet has arrived?", false],
  ["I left my bike with you", "on Tuesday evening.", true],
  ["My booking reference is", "three eight one five.", false],
  ["I'm not sure if", "the battery is charging.", false],
  ["We need two bikes", "for a weekend trip.", true],
  ["The front light", "only works now and then.", false],
  ["Is it too late", "to cancel the service?", true],
  ["I was told", "it would be ready by noon.", false],
  ["Could someone", "call me back after five?", false],
  ["I bought the lock online", "and the key doesn't fit.", true],
  ["Do you happen to know", "if the trailer fits my bike?", false],
  ["It's about", "the bike I ordered for my son.", false],
  ["The tyres are flat again", "even after the repair.", true],
  ["I'd prefer", "to pay in the shop.", false],
  ["My phone number is", "oh seven seven, four two one.", false],
  ["I can come in", "any time after lunch.", true],
  ["The saddle on my new bike", "keeps slipping down.", false],
  ["We moved house", "so the address has changed.", true],
  ["Is there any way", "to speed up the delivery?", false],
  ["I'm looking at the receipt", "and the price is wrong.", true],
  ["What I wanted to ask was", "whether you fix scooters.", false],
  ["The parcel arrived", "but the box was empty.", true],
  ["Can I swap", "the black frame for a silver one?", false],
  ["I think somebody", "took the wrong bike home.", false],
  ["My daughter wants", "a bike with a basket.", false],
  ["I rang earlier", "and nobody answered.", true],
  ["How long would it take", "to order the part?", false],
  ["The gears were fine", "until last weekend.", true],
  ["Could you tell me", "what the warranty covers?", false],
  ["I've got a voucher", "from your summer sale.", true],
  ["We would like", "to book a group ride.", false],
  ["So the pedal", "came off on the hill.", false],
];

/** The pause inside each paused sentence, ms: 200–800 in a spread of its own. */
export const NOISY_PAUSES_MS = [
  220, 480, 350, 690, 260, 570, 410, 780, 300, 640, 230, 520, 380, 720, 280, 600, 450, 750, 240, 540, 330,
  670, 430, 790, 210, 500, 370, 710, 290, 580, 460, 760, 320, 620,
];

export const NOISY_BACKCHANNELS = [
  "uh huh",
  "okay",
  "yes yes",
  "mm",
  "right",
  "oh I see",
  "yeah",
  "fine",
  "mm hmm",
  "sure thing",
  "okay okay",
  "yep",
  "I see",
  "good",
];

export const NOISY_COUGH_MS = [170, 190, 240, 250, 280, 310];

export const NOISY_INTERRUPTIONS = [
  "Sorry, stop, I can't hear you.",
  "Wait, that's the wrong shop.",
  "Hold on, I need a pen.",
  "No, I wanted the other branch.",
  "Excuse me, can you say that again?",
  "Stop, I only need the price.",
  "Hang on, the bus is here.",
  "Actually, forget the delivery.",
  "Wait, which street did you say?",
  "Sorry, I'm in a hurry.",
  "Hold on, let me move somewhere quieter.",
  "No, my order was last month.",
  "Just a second, please.",
  "Wait, go back to the price.",
  "Stop, please put me through to someone.",
  "Sorry, what was the opening time?",
  "No no, that's not right.",
  "One moment, someone's talking to me.",
  "Excuse me, I have a quick question.",
  "Hang on, can you repeat the number?",
];

/** The callers: espeak-ng voices and variants that neither quiet set uses. */
export const NOISY_VOICES = [
  "en-gb-x-gbcwmd",
  "en-us+m1",
  "en-gb+f5",
  "en-029+f1",
  "en-us+Andy",
  "en-gb-x-rp+f1",
  "en-us+m6",
  "en-gb-scotland+linda",
  "en-us-nyc+m7",
  "en-gb+david",
];
/** espeak-ng words per minute, a spread of its own. */
export const NOISY_SPEEDS = [158, 172, 148, 185, 162, 143, 178, 152, 168, 193];

/**
 * What the room's talkers read (never the callers' words): ordinary paragraphs, long enough for a
 * call, one per background voice.
 */
export const ROOM_TEXTS = [
  "The council met on Thursday to discuss the new parking rules for the town centre. Several " +
    "shop owners said the changes would keep customers away, while residents asked for more " +
    "space for buses and bicycles. A final decision is expected after the summer, once the " +
    "traffic survey has been published and everyone has had a chance to comment on it. In the " +
    "meantime the car park behind the library will stay open until eight in the evening.",
  "To make the soup, chop two onions and fry them gently in a little butter until they are soft. " +
    "Add the carrots, the stock and a pinch of salt, then let everything simmer for twenty minutes. " +
    "When the vegetables are tender, blend the soup until it is smooth and stir in a spoonful of " +
    "cream. It keeps well in the fridge for three days and tastes even better the next morning, " +
    "served with fresh bread and a handful of chopped herbs on top.",
  "My grandmother grew up in a small village by the sea, where her father repaired fishing boats. " +
    "Every winter the storms would pull the boats from their moorings, and the whole family would " +
    "spend the spring mending nets and painting hulls. She told us that the smell of tar and salt " +
    "stayed in her hair for weeks, and that she never learned to swim, because the water was far " +
    "too cold for anyone but the gulls.",
  "Our quarterly results were better than expected, mainly thanks to strong sales in the second " +
    "month. The team in the north opened two new accounts, and customer complaints fell by almost " +
    "a third compared with last year. Next quarter we will focus on training, on the new booking " +
    "system, and on reducing the time it takes to answer an email. Please send your ideas to the " +
    "office before the end of the month so that we can plan the workshop.",
  "The museum's new exhibition follows the history of the railway from the first steam engines " +
    "to the electric trains of today. Visitors can climb into an old carriage, listen to the " +
    "stories of the engineers who built the bridges, and try to drive a signal box. Tickets are " +
    "free for children under twelve, and the café on the ground floor serves lunch until three.",
  "If you are planning a walk in the hills this weekend, remember that the weather can change " +
    "very quickly. Take a warm jacket, plenty of water and a map, even if you know the path well. " +
    "Tell someone where you are going and when you expect to be back. The view from the top is " +
    "worth the climb, but the last part is steep and can be slippery after rain.",
];

/** The room's voices: flite's, and espeak-ng variants no caller of this set has. */
export const ROOM_VOICES: ReadonlyArray<{ synth: "flite" | "espeak"; voice: string }> = [
  { synth: "flite", voice: "slt" },
  { synth: "flite", voice: "awb" },
  { synth: "flite", voice: "rms" },
  { synth: "espeak", voice: "en-us+steph" },
  { synth: "flite", voice: "kal" },
  { synth: "espeak", voice: "en-gb+m4" },
];
