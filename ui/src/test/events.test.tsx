// The UI event contract (R2-D07): every event kind of the generated bindings is handled, and
// every kind that needs a user response has a renderer that shows a dialog.
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import bindings from "../bindings.ts?raw";
import { App } from "../App";
import { ApprovalDialog } from "../components/ApprovalDialog";
import { EVENT_HANDLING, PROMPTS, type AskingEvent } from "../events";
import type { PendingApproval, RuntimeEvent } from "../types";
import { backend, chat, renderWithStore, sendEvent, writeApproval } from "./backend";

/** The event names of the `AgentEvent` union in the generated bindings. */
function boundEventNames(): string[] {
  const start = bindings.indexOf("export type AgentEvent =");
  const end = bindings.indexOf("\nexport type", start + 1);
  const union = bindings.slice(start, end === -1 ? undefined : end);
  return [...union.matchAll(/\{ name: "([a-z_]+)"; value:/g)].map((m) => m[1]).sort();
}

/** A sample event of each asking kind, and how to render its prompt from it. */
const SAMPLES: Record<AskingEvent, { event: RuntimeEvent; render: (e: RuntimeEvent) => void }> = {
  tool_approval_request: {
    event: {
      name: "tool_approval_request",
      value: {
        chatId: "c1",
        runId: "run-1",
        approvalId: "call-1",
        toolCallId: "call-1",
        toolName: "write_file",
        args: { file_path: "notes.txt", content: "hello" },
        decision: writeApproval().decision,
      },
    },
    render: (e) => {
      if (e.name !== "tool_approval_request") throw new Error("wrong sample");
      const p: PendingApproval = { ...e.value, id: e.value.approvalId, createdAt: "2026-01-01T00:00:00Z" };
      render(<ApprovalDialog approvals={[p]} onResolve={() => {}} />);
    },
  },
};

describe("event contract", () => {
  it("every event kind of the bindings is handled by the UI", () => {
    const names = boundEventNames();
    expect(names.length).toBeGreaterThan(10);
    expect(Object.keys(EVENT_HANDLING).sort()).toEqual(names);
  });

  it("every kind that needs a user response has a renderer that shows a dialog", () => {
    const asking = Object.entries(EVENT_HANDLING)
      .filter(([, h]) => h === "asks")
      .map(([n]) => n)
      .sort();
    expect(Object.keys(PROMPTS).sort()).toEqual(asking);
    expect(Object.keys(SAMPLES).sort()).toEqual(asking);
    for (const kind of asking as AskingEvent[]) {
      const sample = SAMPLES[kind];
      sample.render(sample.event);
      expect(screen.getByRole("dialog")).toHaveAttribute("aria-modal", "true");
    }
  });

  it("an approval pending at start and announced again appears once, and one click answers it", async () => {
    const be = backend({
      list_chats: () => [chat()],
      pending_approvals: () => [writeApproval()],
      resume_approvals: () => ({ runId: "run-2", outcome: "completed", pending: [], text: "", error: null }),
    });
    renderWithStore(<App />);
    await screen.findByTestId("approval-dialog");
    // The window reopened while the request was pending: the stored request and the event both arrive.
    await sendEvent(SAMPLES.tool_approval_request.event);
    expect(screen.getAllByTestId("approval-dialog")).toHaveLength(1);
    expect(screen.getByText("write_file", { selector: "code" })).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("approval-action-allow_once"));
    await waitFor(() => expect(screen.queryByTestId("approval-dialog")).not.toBeInTheDocument());
    expect(be.callsOf("resume_approvals")).toHaveLength(1);
  });
});
