// A voice connection's UDP socket as the addon native/discord/voice-socket.c reads it, off libuv:
// its file descriptor and libuv's reading of it (recvStart/recvStop, what node:dgram itself calls),
// reached through the socket's handle. Node's dgram has no pause() and no descriptor in its API, so
// the handle is found by its symbol's description; when it is not there, or the addon is not built,
// `voiceSocketIo` says so (undefined) and node:dgram reads as before.
import type { Socket } from "node:dgram";
import { optionalAddon } from "./optional-addon.ts";

interface Addon {
  drain(fd: number, slab: Uint8Array, slotBytes: number, lengths: Int32Array): number;
}

const addon = optionalAddon<Addon>("discord-voice-socket.node");

interface UdpHandle {
  readonly fd: number;
  recvStart(): number;
  recvStop(): number;
}

export interface VoiceSocketIo {
  /**
   * The socket's descriptor now: negative once node:dgram has closed it (at once, before its
   * 'close' event; the number it had may already be another socket's), so read it at every use.
   */
  fd(): number;
  /** libuv stops reading the socket (it drops it from its epoll set when it next fires). */
  pauseLibuv(): void;
  /** libuv reads as packets come again. */
  resumeLibuv(): void;
  /** See voice-socket.c: datagrams queued now, into slots of `slab`; throws on a socket error. */
  drain(slab: Uint8Array, slotBytes: number, lengths: Int32Array): number;
}

function handleOf(socket: Socket): UdpHandle | undefined {
  const symbol = Object.getOwnPropertySymbols(socket).find((s) => s.description === "state symbol");
  const state = symbol ? (socket as unknown as Record<symbol, { handle?: unknown }>)[symbol] : undefined;
  const handle = state?.handle as Partial<UdpHandle> | undefined;
  return typeof handle?.recvStart === "function" &&
    typeof handle.recvStop === "function" &&
    typeof handle.fd === "number" &&
    handle.fd >= 0
    ? (handle as UdpHandle)
    : undefined;
}

/** Direct reads of `socket`, or undefined when this process cannot have them. */
export function voiceSocketIo(socket: Socket): VoiceSocketIo | undefined {
  const handle = handleOf(socket);
  if (!handle || !addon) return undefined;
  return {
    fd: () => handle.fd,
    pauseLibuv: () => {
      try {
        handle.recvStop();
      } catch {
        // A closed socket.
      }
    },
    resumeLibuv: () => {
      try {
        handle.recvStart();
      } catch {
        // A closed socket: nothing to read.
      }
    },
    drain: (slab, slotBytes, lengths) => {
      const fd = handle.fd;
      if (fd < 0) throw new Error("the voice socket is closed");
      return addon.drain(fd, slab, slotBytes, lengths);
    },
  };
}
