import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { App } from "../App";
import { ApprovalDialog } from "../components/ApprovalDialog";
import { backend, chat, renderWithStore, sendEvent, writeApproval } from "./backend";
import { render } from "@testing-library/react";

describe("approval dialog", () => {
  it("renders the backend's actions in their order, with reason, reason code, risk and rule explanations", () => {
    const approval = writeApproval();
    // A different order than usual: the dialog must not reorder.
    const actions = approval.decision.actions ?? [];
    approval.decision.actions = [actions[3], actions[0], actions[2], actions[1]];
    render(<ApprovalDialog approvals={[approval]} onResolve={() => {}} />);
    const dialog = screen.getByTestId("approval-dialog");
    const ids = within(dialog)
      .getAllByRole("button")
      .map((b) => b.getAttribute("data-testid"))
      .filter((id) => id?.startsWith("approval-action-"));
    expect(ids).toEqual([
      "approval-action-reject",
      "approval-action-allow_once",
      "approval-action-allow_global",
      "approval-action-allow_session",
    ]);
    expect(screen.getByTestId("approval-reason")).toHaveTextContent("Writing files needs approval in the default mode.");
    expect(screen.getByTestId("approval-risk")).toHaveTextContent("Medium risk");
    expect(dialog).toHaveTextContent("tool_requires_approval");
    expect(dialog).toHaveTextContent("Adds the rule: Allow write_file for paths matching /work/space/**, in this chat.");
    expect(dialog).toHaveTextContent("Adds the rule: Allow write_file for paths matching /work/space/**, in every chat.");
    expect(dialog).toHaveTextContent("notes.txt");
  });

  it("offers a feedback field only when an action accepts feedback", () => {
    const withFeedback = writeApproval();
    const { unmount } = render(<ApprovalDialog approvals={[withFeedback]} onResolve={() => {}} />);
    expect(screen.getByTestId("approval-feedback")).toBeInTheDocument();
    expect(screen.getByText("Sent with: Reject")).toBeInTheDocument();
    unmount();
    const without = writeApproval();
    without.decision.actions = (without.decision.actions ?? []).map((a) => ({ ...a, acceptsFeedback: false }));
    render(<ApprovalDialog approvals={[without]} onResolve={() => {}} />);
    expect(screen.queryByTestId("approval-feedback")).not.toBeInTheDocument();
  });

  it("sends feedback only with an action that accepts it", async () => {
    const onResolve = vi.fn();
    render(<ApprovalDialog approvals={[writeApproval()]} onResolve={onResolve} />);
    await userEvent.type(screen.getByTestId("approval-feedback"), "use notes.md instead");
    await userEvent.click(screen.getByTestId("approval-action-allow_once"));
    expect(onResolve).toHaveBeenCalledWith([
      { request_id: "call-1", tool_call_id: "call-1", action_id: "allow_once", feedback: null },
    ]);
  });

  it("answers every approval of a run together", async () => {
    const onResolve = vi.fn();
    const second = writeApproval({ id: "call-2", toolCallId: "call-2", args: { file_path: "b.txt", content: "b" } });
    render(<ApprovalDialog approvals={[writeApproval(), second]} onResolve={onResolve} />);
    expect(screen.getByText("1 of 2")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("approval-action-allow_once"));
    expect(onResolve).not.toHaveBeenCalled();
    expect(screen.getByText("2 of 2")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("approval-action-reject"));
    expect(onResolve).toHaveBeenCalledWith([
      { request_id: "call-1", tool_call_id: "call-1", action_id: "allow_once", feedback: null },
      { request_id: "call-2", tool_call_id: "call-2", action_id: "reject", feedback: null },
    ]);
  });
});

describe("approval dialog rule editing (issue 12 item 10)", () => {
  const allowGlobal = () => {
    const a = writeApproval();
    const rule = { tool: "run_command", behavior: "allow" as const, destination: "global" as const, description: null, matcher: { kind: "prefix" as const, words: ["npm", "run", "test", "*"] } };
    a.toolName = "run_command";
    a.args = { content: "npm run test -- --watch=false" };
    a.decision.actions = [
      { id: "allow_once", label: "Allow once", description: "once", rule: null, acceptsFeedback: false },
      { id: "allow_global", label: "Always allow", description: "always", rule, acceptsFeedback: false },
      { id: "reject", label: "Reject", description: "no", rule: null, acceptsFeedback: true },
    ];
    return a;
  };

  it("shows the proposed rule and saves exactly that rule when it is not edited", async () => {
    const onResolve = vi.fn();
    const a = allowGlobal();
    render(<ApprovalDialog approvals={[a]} onResolve={onResolve} />);
    expect(screen.getByTestId("approval-rule-allow_global")).toHaveTextContent("npm run test *");
    await userEvent.click(screen.getByTestId("approval-action-allow_global"));
    expect(onResolve).toHaveBeenCalledWith([
      { request_id: "call-1", tool_call_id: "call-1", action_id: "allow_global", feedback: null, rule: a.decision.actions?.[1].rule },
    ]);
  });

  it("lets the user edit the rule, warns about a middle wildcard, and saves the edited rule", async () => {
    const onResolve = vi.fn();
    render(<ApprovalDialog approvals={[allowGlobal()]} onResolve={onResolve} />);
    await userEvent.click(screen.getByTestId("approval-rule-edit-allow_global"));
    const input = screen.getByTestId("approval-rule-input-allow_global");
    expect(input).toHaveValue("npm run test *");
    await userEvent.clear(input);
    await userEvent.type(input, "npm * 'test'");
    expect(screen.getByTestId("approval-rule-warning-allow_global")).toHaveTextContent("npm --force anything test");
    await userEvent.clear(input);
    await userEvent.type(input, "npm run 'test' --watch=false");
    expect(screen.getByTestId("approval-rule-allow_global")).toHaveTextContent("npm run test --watch=false");
    await userEvent.click(screen.getByTestId("approval-action-allow_global"));
    expect(onResolve).toHaveBeenCalledWith([
      expect.objectContaining({
        action_id: "allow_global",
        rule: expect.objectContaining({ matcher: { kind: "prefix", words: ["npm", "run", "test", "--watch=false"] } }),
      }),
    ]);
  });

  it("refuses to send an edited rule that does not read back", async () => {
    const onResolve = vi.fn();
    render(<ApprovalDialog approvals={[allowGlobal()]} onResolve={onResolve} />);
    await userEvent.click(screen.getByTestId("approval-rule-edit-allow_global"));
    const input = screen.getByTestId("approval-rule-input-allow_global");
    await userEvent.clear(input);
    await userEvent.type(input, "npm 'unterminated");
    await userEvent.click(screen.getByTestId("approval-action-allow_global"));
    expect(onResolve).not.toHaveBeenCalled();
    expect(screen.getByTestId("approval-rule-allow_global")).toHaveTextContent("unterminated single quote");
  });

  it("sends an answer that adds a rule at once, so the backend can release the other calls it covers", async () => {
    const onResolve = vi.fn();
    const second = allowGlobal();
    second.id = "call-2";
    second.toolCallId = "call-2";
    render(<ApprovalDialog approvals={[allowGlobal(), second]} onResolve={onResolve} />);
    await userEvent.click(screen.getByTestId("approval-action-allow_global"));
    expect(onResolve).toHaveBeenCalledTimes(1);
    expect(onResolve.mock.calls[0][0].map((a: { request_id: string }) => a.request_id)).toEqual(["call-1"]);
  });

  it("an invalid edit is refused even with the editor closed: nothing is sent and the editor opens on the text to fix", async () => {
    const onResolve = vi.fn();
    render(<ApprovalDialog approvals={[allowGlobal()]} onResolve={onResolve} />);
    await userEvent.click(screen.getByTestId("approval-rule-edit-allow_global"));
    const input = screen.getByTestId("approval-rule-input-allow_global");
    await userEvent.clear(input);
    await userEvent.type(input, "npm ''");
    await userEvent.click(screen.getByTestId("approval-rule-edit-allow_global"));
    expect(screen.queryByTestId("approval-rule-input-allow_global")).not.toBeInTheDocument();
    expect(screen.getByTestId("approval-rule-allow_global")).toHaveTextContent("The edited rule is not valid");
    expect(screen.getByRole("alert")).toHaveTextContent("The rule text cannot be read: word 2 is empty.");
    await userEvent.click(screen.getByTestId("approval-action-allow_global"));
    expect(onResolve).not.toHaveBeenCalled();
    expect(screen.getByTestId("approval-rule-input-allow_global")).toHaveFocus();
    expect(screen.getByTestId("approval-rule-input-allow_global")).toHaveAttribute("aria-invalid", "true");
    // Other answers are not held back by the rule of another action.
    await userEvent.click(screen.getByTestId("approval-action-allow_once"));
    expect(onResolve).toHaveBeenCalledWith([{ request_id: "call-1", tool_call_id: "call-1", action_id: "allow_once", feedback: null }]);
  });

  it("Esc in the rule editor closes the editor and keeps the edit; a second Esc rejects", async () => {
    const onResolve = vi.fn();
    render(<ApprovalDialog approvals={[allowGlobal()]} onResolve={onResolve} />);
    await userEvent.click(screen.getByTestId("approval-rule-edit-allow_global"));
    const input = screen.getByTestId("approval-rule-input-allow_global");
    await userEvent.clear(input);
    await userEvent.type(input, "npm run test --watch=false{Escape}");
    expect(onResolve).not.toHaveBeenCalled();
    expect(screen.queryByTestId("approval-rule-input-allow_global")).not.toBeInTheDocument();
    expect(screen.getByTestId("approval-rule-edit-allow_global")).toHaveFocus();
    expect(screen.getByTestId("approval-rule-allow_global")).toHaveTextContent("npm run test --watch=false");
    await userEvent.keyboard("{Escape}");
    expect(onResolve).toHaveBeenCalledWith([expect.objectContaining({ action_id: "reject" })]);
  });

  it("warns about a middle wildcard in the rule as offered, before any edit", () => {
    const a = allowGlobal();
    const offered = a.decision.actions?.[1].rule;
    if (offered) offered.matcher = { kind: "prefix", words: ["git", "*", "main"] };
    render(<ApprovalDialog approvals={[a]} onResolve={() => {}} />);
    expect(screen.getByTestId("approval-rule-warning-allow_global")).toHaveTextContent(
      "The wildcard stands before the end, so this rule also covers commands such as git --force anything main.",
    );
  });
});

describe("approvals in the app", () => {
  const setup = () =>
    backend({
      list_chats: () => [chat()],
      pending_approvals: () => [writeApproval()],
      resume_approvals: () => ({ runId: "run-2", outcome: "completed", pending: [], text: "", error: null }),
    });

  it("comes back from pending_approvals on start and clicking an action resumes with the seed payload", async () => {
    const be = setup();
    renderWithStore(<App />);
    const dialog = await screen.findByTestId("approval-dialog");
    expect(be.callsOf("pending_approvals")).toContainEqual({ chatId: null });
    await waitFor(() => expect(be.callsOf("pending_approvals")).toContainEqual({ chatId: "c1" }));
    await userEvent.type(within(dialog).getByTestId("approval-feedback"), "wrong file");
    await userEvent.click(within(dialog).getByTestId("approval-action-reject"));
    await waitFor(() =>
      expect(be.callsOf("resume_approvals")).toEqual([
        {
          chatId: "c1",
          answers: [{ request_id: "call-1", tool_call_id: "call-1", action_id: "reject", feedback: "wrong file" }],
        },
      ]),
    );
    await waitFor(() => expect(screen.queryByTestId("approval-dialog")).not.toBeInTheDocument());
  });

  it("Ctrl+Shift+A approves once", async () => {
    const be = setup();
    renderWithStore(<App />);
    await screen.findByTestId("approval-dialog");
    await userEvent.keyboard("{Control>}{Shift>}A{/Shift}{/Control}");
    await waitFor(() =>
      expect(be.callsOf("resume_approvals")[0]).toEqual({
        chatId: "c1",
        answers: [{ request_id: "call-1", tool_call_id: "call-1", action_id: "allow_once", feedback: null }],
      }),
    );
  });

  it("Ctrl+Shift+R rejects", async () => {
    const be = setup();
    renderWithStore(<App />);
    await screen.findByTestId("approval-dialog");
    await userEvent.keyboard("{Control>}{Shift>}R{/Shift}{/Control}");
    await waitFor(() => expect(be.callsOf("resume_approvals")[0]?.answers).toEqual([
      { request_id: "call-1", tool_call_id: "call-1", action_id: "reject", feedback: null },
    ]));
  });

  it("an answered approval does not come back from a read that raced the answer", async () => {
    const be = backend({
      list_chats: () => [chat()],
      pending_approvals: () => [writeApproval()],
      resume_approvals: () => new Promise(() => {}),
    });
    renderWithStore(<App />);
    await userEvent.click(await screen.findByTestId("approval-action-allow_once"));
    await waitFor(() => expect(screen.queryByTestId("approval-dialog")).not.toBeInTheDocument());
    // The suspended run's end triggers a re-read that still sees the approval as pending.
    const reads = be.callsOf("pending_approvals").length;
    await sendEvent({ name: "run_finished", value: { chatId: "c1", runId: "run-1", outcome: "suspended", pendingApprovals: ["call-1"] } });
    await waitFor(() => expect(be.callsOf("pending_approvals").length).toBe(reads + 1));
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(screen.queryByTestId("approval-dialog")).not.toBeInTheDocument();
  });

  it("a failed answer shows the backend's message and the approval stays", async () => {
    backend({
      list_chats: () => [chat()],
      pending_approvals: () => [writeApproval()],
      resume_approvals: () => {
        throw { kind: "stale_approval", message: "approval 'call-1' was already answered" };
      },
    });
    renderWithStore(<App />);
    await userEvent.click(await screen.findByTestId("approval-action-allow_once"));
    expect(await screen.findByTestId("error-banner")).toHaveTextContent(
      "Could not answer the approval: approval 'call-1' was already answered",
    );
    expect(await screen.findByTestId("approval-dialog")).toBeInTheDocument();
  });

  it("a rule-adding answer is sent at once with the run's answers so far; a call it covers leaves when the backend settles it", async () => {
    const approvals = [
      writeApproval(),
      writeApproval({ id: "call-2", toolCallId: "call-2", args: { file_path: "b.txt", content: "b" } }),
      writeApproval({ id: "call-3", toolCallId: "call-3", args: { file_path: "c.txt", content: "c" } }),
    ];
    const be = backend({
      list_chats: () => [chat()],
      pending_approvals: () => approvals,
      resume_approvals: () => ({ runId: "run-1", outcome: "completed", pending: [], text: "", error: null }),
    });
    renderWithStore(<App />);
    await userEvent.click(await screen.findByTestId("approval-action-allow_once"));
    expect(be.callsOf("resume_approvals")).toEqual([]);
    await waitFor(() => expect(screen.getByTestId("approval-dialog")).toHaveAttribute("data-approval-id", "call-2"));
    await userEvent.click(screen.getByTestId("approval-action-allow_session"));
    await waitFor(() =>
      expect(be.callsOf("resume_approvals")).toEqual([
        {
          chatId: "c1",
          answers: [
            { request_id: "call-1", tool_call_id: "call-1", action_id: "allow_once", feedback: null },
            {
              request_id: "call-2",
              tool_call_id: "call-2",
              action_id: "allow_session",
              feedback: null,
              rule: { tool: "write_file", behavior: "allow", matcher: { kind: "path", glob: "/work/space/**" }, destination: "session", description: null },
            },
          ],
        },
      ]),
    );
    // The third call is not answered by the user: it waits for the backend's new decision.
    await waitFor(() => expect(screen.getByTestId("approval-dialog")).toHaveAttribute("data-approval-id", "call-3"));
    await sendEvent({ name: "tool_permission_resolution", value: { chatId: "c1", approvalId: "call-3", toolCallId: "call-3", actionId: "allow_session" } });
    await waitFor(() => expect(screen.queryByTestId("approval-dialog")).not.toBeInTheDocument());
    expect(be.callsOf("resume_approvals")).toHaveLength(1);
  });
});

describe("approval dialog for social_message", () => {
  it("names the channel and the recipient of a message and shows its text", () => {
    const approval = writeApproval({
      id: "call-9",
      toolCallId: "call-9",
      toolName: "social_message",
      args: { recipient: "telegram:42", message: "The build is green." },
    });
    render(<ApprovalDialog approvals={[approval]} onResolve={() => {}} />);
    expect(screen.getByTestId("approval-social-channel")).toHaveTextContent("telegram");
    expect(screen.getByTestId("approval-social-recipient")).toHaveTextContent("telegram:42");
    expect(screen.getByTestId("approval-social-message")).toHaveTextContent("The build is green.");
    expect(screen.getByTestId("approval-social")).toHaveTextContent("Send a message to telegram:42 on the channel telegram");
  });
});
