// Issue 19 item 4: files dropped, pasted or picked go into the chat's workspace and ride with
// the next message; the transcript shows them after a reload.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import type { Attachment, RunSummary } from "../types";
import { backend, chat, renderWithStore } from "./backend";

const done: RunSummary = { runId: "r1", outcome: "completed", pending: [], text: "ok", error: null };

const stored = (name: string, bytes: number, mime = "text/plain"): Attachment => ({
  path: `.attachments/c1/${name}`,
  name,
  mime,
  bytes,
});

function drop(files: File[]) {
  fireEvent.dragOver(window, { dataTransfer: { types: ["Files"], files } });
  fireEvent.drop(window, { dataTransfer: { types: ["Files"], files } });
}

describe("attachments", () => {
  it("a dropped file is copied into the chat and sent with the message, then shown on it", async () => {
    const be = backend({
      list_chats: () => [chat()],
      add_attachment: (args) => stored(String(args.name), 11),
      send_message: () => done,
    });
    renderWithStore(<App />);
    const input = await screen.findByTestId("composer-input");
    await act(async () => drop([new File(["hello world"], "notes.txt", { type: "text/plain" })]));
    const chip = await screen.findByTestId("composer-attachment");
    await waitFor(() => expect(chip).toHaveAttribute("data-state", "ready"));
    expect(chip).toHaveTextContent("notes.txt");
    expect(chip).toHaveTextContent("11 B");
    // The bytes cross as base64.
    expect(be.callsOf("add_attachment")).toEqual([{ chatId: "c1", name: "notes.txt", data: btoa("hello world") }]);
    await userEvent.type(input, "Summarize it{Enter}");
    expect(be.callsOf("send_message")).toEqual([{ chatId: "c1", text: "Summarize it", attachments: [stored("notes.txt", 11)] }]);
    expect(screen.queryByTestId("composer-attachment")).not.toBeInTheDocument();
    const sent = screen.getByTestId("message-user");
    expect(within(sent).getByTestId("message-attachment")).toHaveTextContent("notes.txt11 B");
  });

  it("a pasted screenshot is attached and a message of only files can be sent", async () => {
    const be = backend({
      list_chats: () => [chat()],
      add_attachment: (args) => stored(String(args.name), 4, "image/png"),
      send_message: () => done,
    });
    renderWithStore(<App />);
    const input = await screen.findByTestId("composer-input");
    expect(screen.getByTestId("composer-send")).toBeDisabled();
    const png = new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], "image.png", { type: "image/png" });
    await act(async () => {
      fireEvent.paste(input, { clipboardData: { files: [png], types: ["Files"], getData: () => "" } });
    });
    await waitFor(() => expect(screen.getByTestId("composer-attachment")).toHaveAttribute("data-state", "ready"));
    const [call] = be.callsOf("add_attachment") as { name: string; data: string }[];
    expect(call.name).toMatch(/^pasted-.*\.png$/);
    expect(call.data).toBe("iVBORw==");
    await userEvent.click(screen.getByTestId("composer-send"));
    expect(be.callsOf("send_message")).toHaveLength(1);
    expect((be.callsOf("send_message")[0] as { text: string }).text).toBe("");
  });

  it("a file the app refuses shows why, is not sent, and can be removed", async () => {
    const be = backend({
      list_chats: () => [chat()],
      add_attachment: () => {
        throw { kind: "invalid_input", message: "'big.iso' is 30.0 MB, more than the 26.2 MB an attachment may be" };
      },
      send_message: () => done,
    });
    renderWithStore(<App />);
    const input = await screen.findByTestId("composer-input");
    await act(async () => drop([new File(["x"], "big.iso")]));
    const chip = await screen.findByTestId("composer-attachment");
    await waitFor(() => expect(chip).toHaveAttribute("data-state", "error"));
    expect(chip).toHaveAttribute("title", expect.stringContaining("more than the 26.2 MB"));
    expect(screen.getByTestId("composer-send")).toBeDisabled();
    await userEvent.click(screen.getByRole("button", { name: "Remove big.iso" }));
    expect(screen.queryByTestId("composer-attachment")).not.toBeInTheDocument();
    await act(async () => drop([new File(["x"], "big.iso")]));
    await waitFor(() => expect(screen.getByTestId("composer-attachment")).toHaveAttribute("data-state", "error"));
    // Sending goes on without the refused file.
    await userEvent.type(input, "hi{Enter}");
    expect(be.callsOf("send_message")).toEqual([{ chatId: "c1", text: "hi", attachments: [] }]);
  });

  it("a stored message shows its attachments after a reload", async () => {
    backend({
      list_chats: () => [chat()],
      get_messages: () => [
        {
          seq: 1,
          runId: "r1",
          message: { role: "user", text: "What is in here?", attachments: [stored("report.pdf", 120_000, "application/pdf")] },
          createdAt: "2026-01-01T00:00:00Z",
        },
      ],
    });
    renderWithStore(<App />);
    const chip = await screen.findByTestId("message-attachment");
    expect(chip).toHaveTextContent("report.pdf120.0 kB");
    expect(chip).toHaveAttribute("title", ".attachments/c1/report.pdf");
  });
});
