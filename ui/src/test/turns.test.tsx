// Issue 13: a failed turn leaves a usable chat (cards closed, text kept, Retry), and a turn
// stopped short names its outcome.
import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import type { RunSummary } from "../types";
import { backend, chat, renderWithStore, sendEvent } from "./backend";

const failed: RunSummary = { runId: "r1", outcome: "failed", pending: [], text: "", error: "boom" };

describe("a failed turn", () => {
  it("a message the runtime refused goes back into the composer", async () => {
    backend({
      list_chats: () => [chat()],
      send_message: () => {
        throw { kind: "provider", message: "no API key for openai" };
      },
    });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "keep this text{Enter}");
    expect(await screen.findByTestId("error-banner")).toHaveTextContent("no API key for openai");
    await waitFor(() => expect(screen.getByTestId("composer-input")).toHaveValue("keep this text"));
  });

  it("closes the cards still running when the run ends and offers Retry", async () => {
    let finish: (s: RunSummary) => void = () => {};
    let stored: unknown[] = [];
    const at = "2026-01-01T00:00:00Z";
    const be = backend({
      list_chats: () => [chat()],
      get_messages: () => stored,
      send_message: () => new Promise<RunSummary>((resolve) => (finish = resolve)),
      retry_turn: () => ({ ...failed, outcome: "completed", error: null }),
    });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "write two files{Enter}");
    for (const id of ["w1", "w2"]) {
      await sendEvent({
        name: "tool_call_start",
        value: { chatId: "c1", runId: "r1", toolCallId: id, toolName: "write_file", args: { file_path: `${id}.txt` } },
      });
    }
    await sendEvent({ name: "run_error", value: { chatId: "c1", runId: "r1", message: "openai connection failed: reset" } });
    // As the runtime stored it: both calls answered as failed, with the reason.
    stored = [
      { seq: 1, runId: "r1", createdAt: at, message: { role: "user", text: "write two files" } },
      {
        seq: 2,
        runId: "r1",
        createdAt: at,
        message: {
          role: "assistant",
          text: "",
          toolCalls: ["w1", "w2"].map((id) => ({ id, name: "write_file", arguments: `{"file_path":"${id}.txt"}` })),
        },
      },
      ...["w1", "w2"].map((id, i) => ({
        seq: 3 + i,
        runId: "r1",
        createdAt: at,
        message: { role: "tool", toolCallId: id, toolName: "write_file", content: "The write_file call did not run: the turn failed first", isError: true },
      })),
    ];
    await sendEvent({ name: "run_finished", value: { chatId: "c1", runId: "r1", outcome: "failed", pendingApprovals: [] } });
    finish(failed);
    await waitFor(() => expect(be.callsOf("get_messages").length).toBeGreaterThan(1));
    expect(screen.getAllByTestId("tool-card").map((c) => c.getAttribute("data-status"))).toEqual(["error", "error"]);
    await userEvent.click(await screen.findByTestId("turn-retry"));
    expect(be.callsOf("retry_turn")).toEqual([{ chatId: "c1" }]);
  });

  it("a turn stopped by the loop guard is headed as such", async () => {
    backend({ list_chats: () => [chat()], send_message: () => ({ ...failed, outcome: "loop_detected" }) });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "append{Enter}");
    await sendEvent({ name: "run_error", value: { chatId: "c1", runId: "r1", message: "loop detected: run_command was called 4 times" } });
    await sendEvent({ name: "run_finished", value: { chatId: "c1", runId: "r1", outcome: "loop_detected", pendingApprovals: [] } });
    const banner = screen.getByTestId("error-banner");
    expect(banner).toHaveAttribute("data-outcome", "loop_detected");
    expect(banner).toHaveTextContent("Stopped: loop detected. loop detected: run_command was called 4 times");
  });
});

describe("a provider that fails", () => {
  it("shows the runtime's wait before it asks again, until the step goes on", async () => {
    backend({ list_chats: () => [chat()], send_message: () => new Promise(() => {}) });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "hello{Enter}");
    await sendEvent({ name: "run_started", value: { chatId: "c1", runId: "r1", model: "openai/gpt-test" } });
    await sendEvent({
      name: "provider_retry",
      value: { chatId: "c1", runId: "r1", attempt: 1, maxAttempts: 3, waitMs: 2000, message: "openai returned HTTP 429: rate limit" },
    });
    expect(screen.getByTestId("provider-retry")).toHaveTextContent(
      "The model provider failed; asking again in 2 s (retry 1 of 3): openai returned HTTP 429: rate limit",
    );
    await sendEvent({ name: "text_delta", value: { chatId: "c1", runId: "r1", delta: "hi" } });
    expect(screen.queryByTestId("provider-retry")).not.toBeInTheDocument();
  });
});
