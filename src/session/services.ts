// The small service interfaces the session depends on. Production adapters wrap the API
// client (src/session/svc-adapters.ts); turn-taking tests script them on virtual time.
import type { ChatMessage, ChatTool } from "../api/types/index.ts";
import type { AgentAudio, OutputFormat } from "./transport.ts";
import type { TurnCompletionModel } from "./turn-completion.ts";

/** One utterance sent while the caller is still speaking it. */
export interface RecognizerStream {
  /** More of the utterance (mono 16-bit PCM at the stream's rate); the array may be reused after. */
  write(pcm: Int16Array): void;
  /** The utterance is over: its transcript. Rejects on failure. */
  end(): Promise<string>;
  /** Drops it (the caller went on, or it was a cough). */
  abort(): void;
}

/** What the session knows of an utterance that may help recognize it. */
export interface RecognitionHints {
  /** It began over the agent: most often an acknowledgement (backchannel.ts acknowledgementHotwords). */
  overAgent?: boolean;
}

export interface Recognizer {
  /** Transcribes one utterance of mono 16-bit PCM. Rejects on failure. */
  recognize(
    pcm: Int16Array,
    sampleRate: number,
    signal: AbortSignal,
    hints?: RecognitionHints,
  ): Promise<string>;
  /**
   * Starts an utterance whose audio is written as it is spoken, so recognition runs alongside
   * the caller and the transcript is ready soon after the end of speech.
   */
  open(sampleRate: number, signal: AbortSignal, hints?: RecognitionHints): RecognizerStream;
}

export interface ToolCallRequest {
  id: string;
  name: string;
  /** JSON text as the model produced it. */
  arguments: string;
}

export type ChatEvent = { type: "text"; text: string } | { type: "tool-call"; call: ToolCallRequest };

export interface ChatModel {
  /** Streams one assistant reply. Text arrives token by token; tool calls once complete. */
  stream(
    messages: readonly ChatMessage[],
    tools: readonly ChatTool[],
    signal: AbortSignal,
  ): AsyncIterable<ChatEvent>;
}

export type TtsEvent =
  | { type: "sentence-start"; text: string }
  | { type: "audio"; audio: AgentAudio; durationMs: number }
  | { type: "sentence-end"; text: string }
  | { type: "flushed" };

/** One realtime synthesis session (E5, default mode), audio in the format it was opened with. */
export interface TtsStream {
  sendText(text: string): void;
  /** End of the turn's text: synthesize what is buffered now. */
  flush(): void;
  /** Drops the session at once (barge-in); no more events after this. */
  close(): void;
  /** True once the session is closed, by us or by the server (e.g. its 60 s idle close). */
  readonly closed: boolean;
  readonly events: AsyncIterable<TtsEvent>;
}

export interface SpeechSynthesizer {
  /**
   * Connects and creates a session ready for text (done ahead of need to hide the set-up), its
   * audio in the transport's own output format.
   */
  open(format: OutputFormat): Promise<TtsStream>;
}

export interface SessionServices {
  asr: Recognizer;
  chat: ChatModel;
  tts: SpeechSynthesizer;
  /** How likely words end the caller's turn; default: the trigram model of `turn.endOfTurnLm`. */
  turnCompletion?: TurnCompletionModel;
}

/** The models and voice one call's services use (the agent's, resolved). */
export interface ServiceModels {
  chatModel: string;
  ttsModel: string;
  asrModel: string;
  voice: string;
  language: string;
  hotwords: string[];
}
