// Start-up: a new user never sees "No chat selected" (issue 19), not even for a frame while the
// settings, the chat list or the first chat are still on their way.
import { act, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import { backend, chat, renderWithStore, settings } from "./backend";

/** A promise the test resolves (or rejects) when it chooses. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Records whether "No chat selected" was ever in the document, from now on. */
function watchForNoChat() {
  let seen = false;
  const check = () => {
    if (document.body.textContent?.includes("No chat selected")) seen = true;
  };
  const observer = new MutationObserver(check);
  observer.observe(document.body, { childList: true, subtree: true, characterData: true });
  return {
    seen: () => {
      check();
      observer.disconnect();
      return seen;
    },
  };
}

describe("start-up", () => {
  it("waits in a quiet shell until the settings are read, then shows the first-run screen", async () => {
    const slow = deferred<unknown>();
    backend({ get_settings: () => slow.promise });
    const watch = watchForNoChat();
    renderWithStore(<App />);
    expect(await screen.findByTestId("starting")).toHaveAttribute("aria-busy", "true");
    expect(screen.queryByTestId("first-run")).not.toBeInTheDocument();
    expect(screen.queryByTestId("nav-chat")).not.toBeInTheDocument();
    await act(async () => slow.resolve(settings({ defaultModel: "" })));
    expect(await screen.findByTestId("first-run")).toBeInTheDocument();
    expect(screen.queryByTestId("starting")).not.toBeInTheDocument();
    expect(watch.seen()).toBe(false);
  });

  it("opens a new user's first chat without showing No chat selected while it is being made", async () => {
    const made = deferred<unknown>();
    const be = backend({ create_chat: () => made.promise });
    const watch = watchForNoChat();
    renderWithStore(<App />);
    expect(await screen.findByTestId("chat-opening")).toHaveAttribute("aria-busy", "true");
    await waitFor(() => expect(be.callsOf("create_chat")).toHaveLength(1));
    expect(screen.queryByTestId("chat-opening")).toBeInTheDocument();
    await act(async () => made.resolve(chat({ id: "first", title: "New chat" })));
    await waitFor(() => expect(screen.getByTestId("composer-input")).toHaveFocus());
    expect(watch.seen()).toBe(false);
  });

  it("reopens an existing chat at start without showing No chat selected", async () => {
    const listed = deferred<unknown>();
    backend({ list_chats: () => listed.promise });
    const watch = watchForNoChat();
    renderWithStore(<App />);
    expect(await screen.findByTestId("chat-opening")).toBeInTheDocument();
    await act(async () => listed.resolve([chat({ id: "c1", title: "Old chat" })]));
    expect(await screen.findByTestId("composer-input")).toBeInTheDocument();
    expect(watch.seen()).toBe(false);
  });

  it("shows No chat selected with its button when making the first chat failed, with the error", async () => {
    backend({
      create_chat: () => {
        throw { kind: "storage", message: "disk full" };
      },
    });
    renderWithStore(<App />);
    expect(await screen.findByTestId("error-banner")).toHaveTextContent("disk full");
    expect(await screen.findByText("No chat selected")).toBeInTheDocument();
    expect(screen.queryByTestId("chat-opening")).not.toBeInTheDocument();
  });

  it("shows the pages and the error when the settings cannot be read, instead of waiting forever", async () => {
    backend({
      get_settings: () => {
        throw { kind: "config", message: "config.toml: expected a table" };
      },
    });
    renderWithStore(<App />);
    expect(await screen.findByTestId("error-banner")).toHaveTextContent("config.toml: expected a table");
    expect(screen.queryByTestId("starting")).not.toBeInTheDocument();
    expect(screen.getByTestId("nav-settings")).toBeInTheDocument();
  });
});
