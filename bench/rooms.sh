#!/usr/bin/env bash
# Makes the recorded rooms the turn-taking notes name (`--noise DIR/conv.wav:10,hiss:24`), so
# their figures can be made again. No recording under a free licence can be fetched here, so
# these are voices and noises made with the synthesizers, sox and Node that `make setup` installs,
# then put in a room with sox's reverb, after the recipes in the notes (docs/dev, 2026-12-04 and
# 2026-12-05). None of them is in the noisy set. Notes before 2026-12-07 measured earlier takes of
# the same recipes, whose texts were not kept: their figures are not these rooms'.
#   bench/rooms.sh [DIR]   (default .data/rooms, which git ignores)
set -euo pipefail
# The project's Node, where make setup put it.
. "$(dirname "$0")/../scripts/env.sh"
out=${1:-.data/rooms}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The same rooms on every machine: bash's draws seeded (in this shell: a subshell draws anew) and
# sox's noise too (-R).
RANDOM=2026
export SOX_OPTS=-R

say_espeak() { espeak-ng -v "$1" -s "${3:-160}" -w "$tmp/e.wav" "$2" && sox "$tmp/e.wav" -r 16000 -c 1 "$4"; }
say_flite() { flite -voice "$1" -t "$2" -o "$tmp/f.wav" && sox "$tmp/f.wav" -r 16000 -c 1 "$3"; }
silence() { sox -n -r 16000 -c 1 "$2" trim 0 "$1"; }

# Two people at the next table, taking turns.
conv_lines=(
  "So did you end up going to the lake last weekend or did the rain keep you home?"
  "We went on Saturday. It cleared up by noon, and the water was still warm enough to swim."
  "Lucky. We stayed in and finally sorted out the garage. Three bags of old cables."
  "Three bags? What were you keeping all those for?"
  "No idea. Half of them were for phones we gave away years ago."
  "My brother is the same. He has a drawer full of chargers for things that do not exist."
  "Anyway, are you still thinking about the new job in the city?"
  "I am. The commute would be long, but the team seems really good, and they let you work from home twice a week."
  "That sounds worth it. When do you have to decide?"
  "By the end of the month. I want to talk it through with my sister first."
  "Good idea. She always sees the thing everyone else misses."
  "She does. Shall we get another coffee before we go?"
)
parts=()
for i in "${!conv_lines[@]}"; do
  voice=en-us+m3
  ((i % 2)) && voice=en-gb+f2
  say_espeak "$voice" "${conv_lines[$i]}" 165 "$tmp/c$i.wav"
  silence "0.$((3 + RANDOM % 6))" "$tmp/g$i.wav" # a gap of 0.3–0.8 s
  parts+=("$tmp/c$i.wav" "$tmp/g$i.wav")
done
sox "${parts[@]}" "$tmp/conv.wav"
sox "$tmp/conv.wav" -r 16000 "$out/conv.wav" gain -6 reverb 60 50 80 highpass 150 norm -3

# A shop's announcement (a chime, then a voice) every 16 s.
pa_lines=(
  "Good afternoon shoppers. Our bakery counter is now offering fresh bread at half price until closing."
  "Would the owner of a blue estate car parked by the trolley bay please return to their vehicle."
  "Customers are reminded that the store will close in thirty minutes. Please bring your purchases to the tills."
  "A colleague to checkout four please. A colleague to checkout four. Thank you."
)
sox -n -r 16000 -c 1 "$tmp/chime.wav" synth 0.45 sine 659 fade 0 0.45 0.4 : synth 0.7 sine 523 fade 0 0.7 0.6
parts=()
for i in "${!pa_lines[@]}"; do
  say_flite slt "${pa_lines[$i]}" "$tmp/p$i.wav"
  sox "$tmp/chime.wav" "$tmp/p$i.wav" "$tmp/pv$i.wav"
  # Each announcement starts 16 s after the last.
  sox "$tmp/pv$i.wav" "$tmp/pc$i.wav" pad 0 "$(awk "BEGIN { print 16 - $(soxi -D "$tmp/pv$i.wav") }")"
  parts+=("$tmp/pc$i.wav")
done
sox "${parts[@]}" "$tmp/pa.wav"
sox "$tmp/pa.wav" -r 16000 "$out/pa.wav" gain -6 reverb 90 50 100 highpass 300 norm -3

# A television across the room, and a voice far off.
news="Good evening. Heavy rain is expected across the west tonight, with winds picking up after midnight. \
In the city, work on the new bridge has been delayed again, this time by a shortage of steel. \
The council says the road will reopen in the spring. In sport, the home side won on penalties \
after a goalless draw, and the manager said he was proud of the young players. \
Tomorrow will be cooler, with sunny spells in the afternoon and a chance of showers in the north."
say_flite kal "$news" "$tmp/tv.wav"
sox "$tmp/tv.wav" "$out/tv.wav" gain -6 reverb 70 50 100 100 20 0 highpass 200 norm -3
say_espeak en-us+f3 "$news" 170 "$tmp/far.wav"
sox "$tmp/far.wav" "$out/far.wav" gain -6 reverb 80 50 100 norm -3

# A car: rumble, an engine's harmonics drifting around 90 Hz, an indicator ticking 20 s in every 40.
sox -n -r 16000 -c 1 "$tmp/rumble.wav" synth 80 brownnoise vol 0.6
sox -n -r 16000 -c 1 "$tmp/engine.wav" synth 80 sine 85-95 sine 170-190 sine 255-285 remix - vol 0.15 tremolo 0.2 30
sox -n -r 16000 -c 1 "$tmp/tick.wav" synth 0.015 sine 1800 vol 0.3 pad 0 0.785
sox "$tmp/tick.wav" "$tmp/ticks.wav" repeat 24
sox "$tmp/ticks.wav" "$tmp/ticking.wav" pad 0 20.8 repeat 1
sox -m "$tmp/rumble.wav" "$tmp/engine.wav" "$tmp/ticking.wav" "$out/car.wav" norm -3

# A kitchen: running water on and off, and dishes.
parts=()
for i in $(seq 1 8); do
  sox -n -r 16000 -c 1 "$tmp/w$i.wav" synth "$((3 + RANDOM % 5))" pinknoise highpass 800 tremolo 7 20 vol 0.5
  silence "$((2 + RANDOM % 4))" "$tmp/ws$i.wav"
  parts+=("$tmp/w$i.wav" "$tmp/ws$i.wav")
done
sox "${parts[@]}" "$tmp/water.wav"
parts=()
for i in $(seq 0 99); do
  f=$((1500 + RANDOM % 3000))
  sox -n -r 16000 -c 1 "$tmp/d$i.wav" synth 0.25 sine "$f" fade 0 0.25 0.24 vol 0.4 pad 0 "0.$((2 + RANDOM % 8))"
  parts+=("$tmp/d$i.wav")
done
sox "${parts[@]}" "$tmp/dishes.wav"
sox -m "$tmp/water.wav" "$tmp/dishes.wav" "$tmp/kitchen.wav"
sox "$tmp/kitchen.wav" "$out/kitchen.wav" gain -6 reverb 40 norm -3

# Typing: 10 ms clicks 0.08–0.3 s apart, in bursts of 2–6 s.
parts=()
for b in $(seq 1 12); do
  end=$((2000 + RANDOM % 4000)) at=0
  while ((at < end)); do
    space=$((80 + RANDOM % 220))
    sox -n -r 16000 -c 1 "$tmp/k${#parts[@]}.wav" synth 0.01 whitenoise fade 0 0.01 0.008 vol 0.5 pad 0 "0.$(printf '%03d' "$space")"
    parts+=("$tmp/k${#parts[@]}.wav")
    at=$((at + space + 10))
  done
  silence "$((1 + RANDOM % 3))" "$tmp/k${#parts[@]}.wav"
  parts+=("$tmp/k${#parts[@]}.wav")
done
sox "${parts[@]}" "$out/keys.wav" gain -6 highpass 500 norm -3

# A siren far off: a wail sweeping 650–1350 Hz and back every 4 s.
sox -n -r 16000 -c 1 "$tmp/up.wav" synth 2 sine 650:1350
sox -n -r 16000 -c 1 "$tmp/down.wav" synth 2 sine 1350:650
sox "$tmp/up.wav" "$tmp/down.wav" "$tmp/wail.wav"
sox "$tmp/wail.wav" "$out/siren.wav" repeat 15 gain -10 overdrive 10 gain -8 lowpass 2500 reverb 50 norm -3

# A vacuum cleaner: a hiss above 300 Hz and its motor's 118 Hz harmonics.
sox -n -r 16000 -c 1 "$tmp/vn.wav" synth 60 pinknoise highpass 300
sox -n -r 16000 -c 1 "$tmp/vh.wav" synth 60 sawtooth 118 gain -12 lowpass 1500
sox -m "$tmp/vn.wav" "$tmp/vh.wav" "$out/vacuum.wav" norm -3

# A bus's engine going by again and again: made in Node (bench/lib/bus-room.ts), as sox's sweeps
# of the same recipe were never taken for speech.
node "$(dirname "$0")/lib/bus-room.ts" "$out/bus.wav" 60

echo "rooms in $out: $(cd "$out" && ls ./*.wav | tr '\n' ' ')"
