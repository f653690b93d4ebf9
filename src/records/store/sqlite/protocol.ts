// Messages between the SQLite store (main thread) and its worker thread, which owns the database:
// node:sqlite's DatabaseSync blocks, so no query runs on the event loop that carries calls.

import type { CallEvent } from "../../call-record.ts";
import type { CallQuery, ReportState } from "../call-store.ts";

export interface SqliteWorkerData {
  path: string;
  instance: string;
}

export interface EventWrite {
  callId: string;
  event: CallEvent;
}

export type ToWorker =
  | { id: number; op: "write"; writes: EventWrite[] }
  | { id: number; op: "get"; callId: string }
  | { id: number; op: "list"; query: CallQuery }
  | { id: number; op: "recording"; callId: string; path: string }
  | { id: number; op: "report"; reportId: string; state: ReportState; status?: number; callId?: string }
  | { id: number; op: "import"; events: CallEvent[] }
  | { id: number; op: "meta"; key: string; value?: string }
  | { id: number; op: "close" };

export type FromWorker =
  | { id: number; ok: true; result?: unknown }
  | { id: number; ok: false; error: string }
  | { id: 0; ready: true; migrations: string[]; lost: string[] };
