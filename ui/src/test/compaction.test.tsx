// Issue 13 item 4: a compacted chat shows where it was compacted (a divider, the messages above
// kept), live from the chat_compacted event and after a reload; a failed compaction is its own
// stop outcome.
import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import type { CompactionInfo, RunSummary } from "../types";
import { backend, chat, renderWithStore, sendEvent } from "./backend";

const at = "2026-01-01T00:00:00Z";
const info = (over: Partial<CompactionInfo> = {}): CompactionInfo => ({
  id: "k1",
  trigger: "auto",
  cutThroughSeq: 2,
  summaryThroughSeq: 2,
  toolOutputsCut: 1,
  messagesSummarized: 2,
  tokensBefore: 7400,
  tokensAfter: 2100,
  contextWindow: 8192,
  createdAt: at,
  ...over,
});
const stored = [
  { seq: 1, runId: "r1", createdAt: at, message: { role: "user", text: "remember the launch code" } },
  { seq: 2, runId: "r1", createdAt: at, message: { role: "assistant", text: "Noted.", toolCalls: [] } },
  { seq: 3, runId: "r2", createdAt: at, message: { role: "user", text: "what is it?" } },
  { seq: 4, runId: "r2", createdAt: at, message: { role: "assistant", text: "AMBER-7731.", toolCalls: [] } },
];

/** The transcript's texts and dividers, in order. */
function transcript(): string[] {
  return Array.from(document.querySelectorAll(".msg, [data-testid='compacted-divider']")).map((el) => {
    if (el.getAttribute("data-testid") === "compacted-divider") return "--compacted--";
    // The message's text without its buttons (Copy).
    const copy = el.cloneNode(true) as HTMLElement;
    copy.querySelectorAll("button").forEach((b) => b.remove());
    return (copy.textContent ?? "").trim();
  });
}

describe("a compacted chat", () => {
  it("shows a divider after the summarized messages, which stay in full, when reloaded", async () => {
    backend({ list_chats: () => [chat()], get_messages: () => stored, chat_compactions: () => [info()] });
    renderWithStore(<App />);
    const divider = await screen.findByTestId("compacted-divider");
    expect(divider).toHaveTextContent(
      "Conversation compactedThe model now gets a summary of the messages above (2 summarized, 1 tool outputs shortened; about 7400 → 2100 tokens). They stay here in full.",
    );
    expect(transcript()).toEqual(["remember the launch code", "Noted.", "--compacted--", "what is it?", "AMBER-7731."]);
  });

  it("shows the divider when the runtime compacts the chat during a turn", async () => {
    let messages: unknown[] = stored.slice(0, 2);
    backend({ list_chats: () => [chat()], get_messages: () => messages, send_message: () => new Promise<RunSummary>(() => {}) });
    renderWithStore(<App />);
    await screen.findByText("Noted.");
    await userEvent.type(await screen.findByTestId("composer-input"), "what is it?{Enter}");
    await sendEvent({ name: "run_started", value: { chatId: "c1", runId: "r2", model: "openai/gpt-test" } });
    await sendEvent({ name: "chat_compacted", value: { chatId: "c1", runId: "r2", compaction: info({ trigger: "overflow" }) } });
    const divider = await screen.findByTestId("compacted-divider");
    expect(divider).toHaveAttribute("data-trigger", "overflow");
    // The same event again (another window's stream) shows it once.
    await sendEvent({ name: "chat_compacted", value: { chatId: "c1", runId: "r2", compaction: info({ trigger: "overflow" }) } });
    expect(screen.getAllByTestId("compacted-divider")).toHaveLength(1);
    expect(transcript()).toEqual(["remember the launch code", "Noted.", "--compacted--", "what is it?"]);
    messages = stored;
  });

  it("a turn whose compaction failed is headed as such", async () => {
    backend({
      list_chats: () => [chat()],
      send_message: () => ({ runId: "r1", outcome: "compaction_failed", pending: [], text: "", error: "compaction failed: boom" }),
    });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "next{Enter}");
    await sendEvent({ name: "run_error", value: { chatId: "c1", runId: "r1", message: "compaction failed: the model could not summarize" } });
    await sendEvent({ name: "run_finished", value: { chatId: "c1", runId: "r1", outcome: "compaction_failed", pendingApprovals: [] } });
    await waitFor(() => expect(screen.getByTestId("error-banner")).toHaveAttribute("data-outcome", "compaction_failed"));
    expect(screen.getByTestId("error-banner")).toHaveTextContent(
      "Stopped: the chat could not be compacted to fit the model's context. compaction failed: the model could not summarize",
    );
  });
});
