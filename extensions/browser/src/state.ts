// What the service worker tells the popup, and what the popup asks of it.

/** The connection's state as the popup shows it. */
export interface PopupState {
  phase: "notPaired" | "connecting" | "waiting" | "connected" | "disconnected" | "appNotRunning" | "rejected" | "revoked";
  /** The pairing code, while waiting for approval (the app's dialog shows the same). */
  code?: string;
  /** The app's device name, once connected. */
  device?: string;
  /** Why the pairing was declined. */
  reason?: string;
  /** The last error. */
  error?: string;
  /** The shared tab commands go to (the active one of the shared tabs). */
  controlledTab: { id: number; title: string; url: string } | null;
  /** How many tabs are shared. */
  sharedCount: number;
}

/** A popup button. */
export type PopupRequest = { kind: "getState" } | { kind: "connect" } | { kind: "disconnect" } | { kind: "revoke" };

export function initialState(): PopupState {
  return { phase: "notPaired", controlledTab: null, sharedCount: 0 };
}
