// Issue 19: durations and states kept after a restart. A chat read back from the store shows
// each card's duration and who allowed it, and the failed turn, from `chat_notes`.
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import type { ChatNotes, RunSummary } from "../types";
import { backend, chat, renderWithStore, sendEvent } from "./backend";

const at = "2026-01-01T00:00:00Z";
const stored = [
  { seq: 1, runId: "r1", createdAt: at, message: { role: "user", text: "write the notes" } },
  {
    seq: 2,
    runId: "r1",
    createdAt: at,
    message: { role: "assistant", text: "", toolCalls: [{ id: "w1", name: "write_file", arguments: '{"file_path":"notes.txt","content":"x"}' }] },
  },
  { seq: 3, runId: "r1", createdAt: at, message: { role: "tool", toolCallId: "w1", toolName: "write_file", content: "wrote notes.txt", isError: false } },
  { seq: 4, runId: "r1", createdAt: at, message: { role: "assistant", text: "Done." } },
  { seq: 5, runId: "r2", createdAt: at, message: { role: "user", text: "and again" } },
  { seq: 6, runId: "r3", createdAt: at, message: { role: "user", text: "third" } },
];
const notes: ChatNotes = {
  tools: [
    {
      toolCallId: "w1",
      decision: {
        behavior: "ask",
        source: "mode",
        reason: "Writing files needs approval in the default mode.",
        reasonCode: "write_requires_approval",
        risk: "medium",
        actions: [],
      },
      mode: "default",
      resolution: { actionId: "allow_session", rule: null },
      durationMs: 2500,
    },
  ],
  failures: [{ runId: "r2", message: "the provider refused: quota exceeded", outcome: "failed", afterSeq: 5 }],
  usage: [{ runId: "r1", model: "gpt-4.1", inputTokens: 1234, outputTokens: 56, costUsd: 0.003916, steps: 2 }],
};

describe("a chat read back after a restart", () => {
  it("shows each card's duration and who allowed it, and the failed turn in its place", async () => {
    backend({ list_chats: () => [chat()], get_messages: () => stored, chat_notes: () => notes });
    renderWithStore(<App />);
    const card = await screen.findByTestId("tool-card");
    await waitFor(() => expect(within(card).getByTestId("tool-decision")).toHaveTextContent("Allowed by you for this chat"));
    expect(card).toHaveTextContent("2.5 s");
    // The run's tokens and price under its last answer.
    expect(screen.getByTestId("turn-usage")).toHaveTextContent("1,234 in · 56 out · $0.0039");
    const banner = await screen.findByTestId("error-banner");
    expect(banner).toHaveTextContent("the provider refused: quota exceeded");
    // Right after the message it followed (the second user message), before the third.
    const order = [...document.querySelectorAll("[data-testid=message-user] .bubble, [data-testid=message-assistant] .markdown, [data-testid=error-banner]")].map(
      (e) => (e.getAttribute("data-testid") === "error-banner" ? "error" : e.textContent?.trim()),
    );
    expect(order).toEqual(["write the notes", "Done.", "and again", "error", "third"]);
  });

  it("puts a failure that was retried before the retried answer", async () => {
    const retried = [
      { seq: 1, runId: "r1", createdAt: at, message: { role: "user", text: "question" } },
      { seq: 2, runId: "r2", createdAt: at, message: { role: "assistant", text: "Retried answer." } },
    ];
    backend({
      list_chats: () => [chat()],
      get_messages: () => retried,
      chat_notes: (): ChatNotes => ({ tools: [], failures: [{ runId: "r1", message: "HTTP 400", outcome: "failed", afterSeq: 1 }], usage: [] }),
    });
    renderWithStore(<App />);
    await screen.findByTestId("error-banner");
    const order = [...document.querySelectorAll("[data-testid=message-user] .bubble, [data-testid=message-assistant] .markdown, [data-testid=error-banner]")].map(
      (e) => (e.getAttribute("data-testid") === "error-banner" ? "error" : e.textContent?.trim()),
    );
    expect(order).toEqual(["question", "error", "Retried answer."]);
  });

  it("still shows the transcript when the notes cannot be read", async () => {
    backend({
      list_chats: () => [chat()],
      get_messages: () => stored,
      chat_notes: () => {
        throw { kind: "store", message: "database is locked" };
      },
    });
    renderWithStore(<App />);
    expect(await screen.findByText("Done.")).toBeInTheDocument();
    expect(await screen.findByText(/database is locked/)).toBeInTheDocument();
  });

  it("adds up a live turn's steps and shows the total once the turn is over", async () => {
    let finish: (s: RunSummary) => void = () => {};
    let transcript: unknown[] = [];
    backend({
      list_chats: () => [chat()],
      get_messages: () => transcript,
      send_message: () => new Promise<RunSummary>((resolve) => (finish = resolve)),
    });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "count{Enter}");
    await sendEvent({ name: "run_started", value: { chatId: "c1", runId: "r9", model: "openai/gpt-4.1" } });
    await sendEvent({ name: "text_delta", value: { chatId: "c1", runId: "r9", delta: "Counted." } });
    for (const [input, cost] of [
      [12, 0.0001],
      [20, null],
    ] as const) {
      await sendEvent({ name: "model_usage", value: { chatId: "c1", runId: "r9", model: "m", inputTokens: input, outputTokens: 7, costUsd: cost } });
    }
    expect(screen.queryByTestId("turn-usage")).not.toBeInTheDocument();
    transcript = [
      { seq: 1, runId: "r9", createdAt: at, message: { role: "user", text: "count" } },
      { seq: 2, runId: "r9", createdAt: at, message: { role: "assistant", text: "Counted." } },
    ];
    await sendEvent({ name: "run_finished", value: { chatId: "c1", runId: "r9", outcome: "completed", pendingApprovals: [] } });
    finish({ runId: "r9", outcome: "completed", pending: [], text: "Counted.", error: null });
    // A step without a price leaves the cost out rather than showing a partial sum.
    expect(await screen.findByTestId("turn-usage")).toHaveTextContent(/^32 in · 14 out$/);
  });
});
