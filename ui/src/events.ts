// Every runtime event kind and what the UI does with it. A kind that needs a user response
// ("asks") must have a prompt renderer in `PROMPTS`; src/test/events.test.tsx reads the event
// names from the generated bindings (the Rust `AgentEvent` enum) and fails when a kind is missing
// here, or when an asking kind has no renderer that shows a dialog.
import type { RuntimeEvent } from "./types";

export type EventName = RuntimeEvent["name"];

/** `asks`: the runtime waits for the user; `shows`: it only updates what the window shows. */
export type EventHandling = "asks" | "shows";

/** How each event kind is handled (the compiler also insists every kind is listed). */
export const EVENT_HANDLING = {
  run_started: "shows",
  text_delta: "shows",
  tool_call_start: "shows",
  tool_call_end: "shows",
  tool_permission_decision: "shows",
  tool_approval_request: "asks",
  tool_permission_resolution: "shows",
  run_finished: "shows",
  run_error: "shows",
  provider_retry: "shows",
  chat_compacted: "shows",
  model_usage: "shows",
  tool_activated: "shows",
  background_task_update: "shows",
  plan_updated: "shows",
  surface_updated: "shows",
  surface_deleted: "shows",
  scheduled_run_updated: "shows",
  goal_updated: "shows",
} as const satisfies Record<EventName, EventHandling>;

/** The event kinds that wait for the user. */
export type AskingEvent = { [K in EventName]: (typeof EVENT_HANDLING)[K] extends "asks" ? K : never }[EventName];

/**
 * Where each asking kind is answered: the component that renders its prompt. The approval
 * dialog is shown by the chat view from the store's pending approvals (pending_approvals at
 * start, then tool_approval_request events), so it also survives a window reopen and shows each
 * request once (deduplicated by id).
 */
export const PROMPTS: Record<AskingEvent, string> = {
  tool_approval_request: "ApprovalDialog",
};
