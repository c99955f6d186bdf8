// `speak` in the app (issue 20 item 4): the tool card of a finished call shows a player for the
// stored clip (read from the shell's `suzent-audio:` scheme and played from a blob: URL), a clip that arrives live plays by
// itself only with autoplay on, history never autoplays, and Settings → Speech saves the backend,
// voice and autoplay.
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { App } from "../App";
import { SettingsView, speechModelValid } from "../components/SettingsView";
import { SpeechPlayer, speechClipOf, speechClipUrl } from "../components/SpeechPlayer";
import { ToolCard } from "../components/ToolCard";
import type { ToolItem } from "../model";
import type { SpeechClip } from "../types";
import { backend, chat, renderWithStore, sendEvent, settings } from "./backend";

const clip: SpeechClip = {
  chatId: "c1",
  file: "0193aa.wav",
  path: "/home/u/.local/share/suzent/speech/c1/0193aa.wav",
  mimeType: "audio/wav",
  durationMs: 2400,
  bytes: 105884,
  sampleRate: 22050,
  voice: "en-us",
  backend: "espeak-ng",
  characters: 42,
};

function speakItem(over: Partial<ToolItem> = {}): ToolItem {
  return {
    kind: "tool",
    key: "t1",
    id: "t1",
    name: "speak",
    args: { text: "Hello" },
    status: "ok",
    output: JSON.stringify(clip),
    durationMs: 300,
    decision: null,
    resolution: null,
    mode: null,
    ...over,
  } as ToolItem;
}

// The shell's audio scheme, as the player reads it: each clip URL answers a WAV (or an error).
let served: Record<string, Response | Error>;
let fetched: string[];
let blobs: { url: string; type: string; size: number }[];
let revoked: string[];
beforeEach(() => {
  served = { "suzent-audio://localhost/c1/0193aa.wav": new Response(new Uint8Array([82, 73, 70, 70, 1, 2])) };
  fetched = [];
  blobs = [];
  revoked = [];
  vi.stubGlobal("fetch", async (url: string) => {
    fetched.push(url);
    const answer = served[url];
    if (answer instanceof Error) throw answer;
    return answer ?? new Response("chat c1 has no speech clip", { status: 404 });
  });
  URL.createObjectURL = (b: Blob) => {
    const url = `blob:clip-${blobs.length + 1}`;
    blobs.push({ url, type: b.type, size: b.size });
    return url;
  };
  URL.revokeObjectURL = (url: string) => void revoked.push(url);
});
afterEach(() => vi.unstubAllGlobals());

describe("speech clips (issue 20 item 4)", () => {
  it("reads a clip only from a finished speak call", () => {
    expect(speechClipOf(speakItem())).toEqual(clip);
    expect(speechClipOf(speakItem({ status: "error", output: "unknown voice 'x'" }))).toBeNull();
    expect(speechClipOf(speakItem({ name: "read_file" }))).toBeNull();
    expect(speechClipOf(speakItem({ output: "not json" }))).toBeNull();
  });

  it("points the player at the app's audio scheme in both URL forms", () => {
    expect(speechClipUrl(clip, false)).toBe("suzent-audio://localhost/c1/0193aa.wav");
    expect(speechClipUrl(clip, true)).toBe("http://suzent-audio.localhost/c1/0193aa.wav");
    expect(speechClipUrl({ chatId: "a/b", file: "x y.wav" }, false)).toBe("suzent-audio://localhost/a%2Fb/x%20y.wav");
  });

  it("shows a player with the voice, length and file, without autoplay by default", async () => {
    const { unmount } = render(<SpeechPlayer clip={clip} />);
    const audio = screen.getByTestId("speech-audio") as HTMLAudioElement;
    expect(audio.tagName).toBe("AUDIO");
    expect(audio).toHaveAttribute("controls");
    // WebKitGTK cannot play a custom scheme: the clip is read from it and played as a blob.
    await waitFor(() => expect(audio.getAttribute("src")).toBe("blob:clip-1"));
    expect(fetched).toEqual(["suzent-audio://localhost/c1/0193aa.wav"]);
    expect(blobs).toEqual([{ url: "blob:clip-1", type: "audio/wav", size: 6 }]);
    expect(audio.autoplay).toBe(false);
    expect(screen.getByTestId("speech-player")).toHaveTextContent("en-us · 2.4 s · espeak-ng");
    expect(screen.getByTestId("speech-player")).toHaveTextContent(clip.path);
    expect(screen.queryByTestId("speech-error")).not.toBeInTheDocument();
    unmount();
    expect(revoked).toEqual(["blob:clip-1"]);
  });

  it("says why a clip cannot be loaded instead of showing a dead player", async () => {
    render(<SpeechPlayer clip={{ ...clip, file: "gone.wav" }} />);
    expect(await screen.findByTestId("speech-error")).toHaveTextContent("Cannot load the spoken audio: chat c1 has no speech clip");
    expect(screen.getByTestId("speech-audio")).not.toHaveAttribute("src");
    expect(blobs).toEqual([]);
  });

  it("puts the player on the tool card and never autoplays a clip from history", () => {
    render(<ToolCard item={speakItem()} chatId="c1" autoplaySpeech />);
    const card = screen.getByTestId("tool-card");
    const audio = within(card).getByTestId("speech-audio") as HTMLAudioElement;
    expect(audio.autoplay).toBe(false);
  });

  it("shows no player for a failed speak call", () => {
    render(<ToolCard item={speakItem({ status: "error", output: "espeak-ng is not installed" })} chatId="c1" />);
    expect(screen.queryByTestId("speech-player")).not.toBeInTheDocument();
    expect(screen.getByTestId("tool-card")).toHaveTextContent("espeak-ng is not installed");
  });

  it("autoplays a clip that arrives live when autoplay is on", async () => {
    backend({
      list_chats: () => [chat()],
      get_settings: () => settings({ speech: { model: "system", autoplay: true } }),
      send_message: () => new Promise(() => {}),
    });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "say hi{Enter}");
    await sendEvent({ name: "tool_call_start", value: { chatId: "c1", runId: "r1", toolCallId: "s1", toolName: "speak", args: { text: "hi" } } });
    expect(screen.queryByTestId("speech-player")).not.toBeInTheDocument();
    await sendEvent({
      name: "tool_call_end",
      value: { chatId: "c1", runId: "r1", toolCallId: "s1", toolName: "speak", ok: true, output: JSON.stringify(clip), durationMs: 300 },
    });
    const audio = (await screen.findByTestId("speech-audio")) as HTMLAudioElement;
    expect(audio.autoplay).toBe(true);
  });

  it("does not autoplay a live clip when autoplay is off", async () => {
    backend({ list_chats: () => [chat()], send_message: () => new Promise(() => {}) });
    renderWithStore(<App />);
    await userEvent.type(await screen.findByTestId("composer-input"), "say hi{Enter}");
    await sendEvent({ name: "tool_call_start", value: { chatId: "c1", runId: "r1", toolCallId: "s1", toolName: "speak", args: { text: "hi" } } });
    await sendEvent({
      name: "tool_call_end",
      value: { chatId: "c1", runId: "r1", toolCallId: "s1", toolName: "speak", ok: true, output: JSON.stringify(clip), durationMs: 300 },
    });
    expect(((await screen.findByTestId("speech-audio")) as HTMLAudioElement).autoplay).toBe(false);
  });

  it("saves the speech backend, voice and autoplay from Settings", async () => {
    const be = backend({ save_settings: (a) => settings({ speech: (a.patch as { speech: SpeechClip }).speech as never }) });
    renderWithStore(<SettingsView />);
    const form = await screen.findByTestId("speech-settings");
    const model = within(form).getByTestId("speech-model");
    await userEvent.clear(model);
    await userEvent.type(model, "gpt-4o-mini-tts");
    await userEvent.click(within(form).getByTestId("speech-save"));
    expect(within(form).getByRole("alert")).toHaveTextContent("Speech model: use system");
    expect(be.callsOf("save_settings")).toEqual([]);
    await userEvent.clear(model);
    await userEvent.type(model, "openai/gpt-4o-mini-tts");
    await userEvent.type(within(form).getByTestId("speech-voice"), "coral");
    await userEvent.click(within(form).getByTestId("speech-autoplay"));
    await userEvent.click(within(form).getByTestId("speech-save"));
    expect(be.callsOf("save_settings")).toEqual([{ patch: { speech: { model: "openai/gpt-4o-mini-tts", voice: "coral", autoplay: true } } }]);
    expect(await within(form).findByRole("status")).toHaveTextContent("Speech settings saved.");
  });

  it("knows which speech models config.toml takes", () => {
    expect(["system", "openai/tts-1", "openai-compatible/x", "gemini/gemini-2.5-flash-preview-tts"].map(speechModelValid)).toEqual([true, true, true, true]);
    expect(["", "tts-1", "anthropic/claude", "openai/"].map(speechModelValid)).toEqual([false, false, false, false]);
  });
});
