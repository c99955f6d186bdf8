import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ChannelsSettings } from "../components/ChannelsSettings";
import type { ChannelRequest, ChannelView } from "../types";
import { backend, renderWithStore } from "./backend";

const telegram = (over: Partial<ChannelView> = {}): ChannelView => ({
  config: {
    name: "telegram",
    platform: "telegram",
    enabled: true,
    allowed_users: ["42"],
    profile: "headless",
    base_url: null,
  },
  hasToken: true,
  status: { state: "connected", bot: "Suzent Bot", error: null },
  ...over,
});

const eve = (over: Partial<ChannelRequest> = {}): ChannelRequest => ({
  channel: "telegram",
  userId: "7",
  name: "Eve",
  conversation: "7",
  status: "pending",
  messages: 2,
  firstSeen: "2026-01-01T00:00:00Z",
  lastSeen: "2026-01-01T00:01:00Z",
  ...over,
});

describe("Settings -> Channels", () => {
  it("shows a channel's status and allowed users, switches it off and saves the allow-list", async () => {
    let view = telegram();
    const b = backend({
      list_channels: () => [view],
      set_channel_enabled: (a) => {
        view = telegram({
          config: { ...view.config, enabled: a.enabled as boolean },
          status: { state: "off", bot: null, error: null },
        });
        return view;
      },
      set_channel_allowed_users: (a) => {
        view = telegram({ config: { ...view.config, allowed_users: a.users as string[] } });
        return view;
      },
    });
    renderWithStore(<ChannelsSettings />);
    expect(await screen.findByTestId("channel-state-telegram")).toHaveTextContent("Connected");
    expect(screen.getByTestId("channel-telegram")).toHaveTextContent("as Suzent Bot");
    expect(screen.getByTestId("channel-users-telegram")).toHaveValue("42");
    await userEvent.click(screen.getByTestId("channel-enabled-telegram"));
    expect(b.callsOf("set_channel_enabled")).toEqual([{ name: "telegram", enabled: false }]);
    await waitFor(() => expect(screen.getByTestId("channel-state-telegram")).toHaveTextContent("Off"));
    const users = screen.getByTestId("channel-users-telegram");
    await userEvent.clear(users);
    await userEvent.type(users, "42, 7");
    await userEvent.click(screen.getByTestId("channel-save-users-telegram"));
    expect(b.callsOf("set_channel_allowed_users")).toEqual([{ name: "telegram", users: ["42", "7"] }]);
  });

  it("approves a pending request and lists it no more", async () => {
    let requests = [eve()];
    const b = backend({
      list_channels: () => [telegram()],
      channel_requests: () => requests,
      approve_channel_request: () => {
        requests = [eve({ status: "approved" })];
        return requests[0];
      },
    });
    renderWithStore(<ChannelsSettings />);
    expect(await screen.findByTestId("channel-request-7")).toHaveTextContent("Eve");
    expect(screen.getByTestId("channel-request-7")).toHaveTextContent("on telegram, 2 messages");
    await userEvent.click(screen.getByTestId("channel-approve-7"));
    expect(b.callsOf("approve_channel_request")).toEqual([{ name: "telegram", userId: "7" }]);
    expect(await screen.findByTestId("channel-requests-empty")).toBeInTheDocument();
  });

  it("tests a token, adds the channel, and offers the session when the keychain cannot store it", async () => {
    let sessionAsked = false;
    const b = backend({
      test_channel: () => ({ botId: "999", botName: "Suzent Bot", username: "suzent_bot" }),
      add_channel: (a) => telegram({ config: a.channel as ChannelView["config"], hasToken: false }),
      set_channel_token: (a) => {
        if (!a.sessionOnly) throw { kind: "keychain", message: "OS keychain: no Secret Service", field: "token" };
        sessionAsked = true;
        return telegram();
      },
    });
    renderWithStore(<ChannelsSettings />);
    await userEvent.type(await screen.findByTestId("channel-add-token"), "123:abc");
    await userEvent.type(screen.getByTestId("channel-add-users"), "42");
    await userEvent.click(screen.getByTestId("channel-test"));
    expect(await screen.findByTestId("channel-test-ok")).toHaveTextContent("Connected as Suzent Bot (@suzent_bot)");
    expect(b.callsOf("test_channel")).toEqual([{ platform: "telegram", baseUrl: null, token: "123:abc" }]);
    await userEvent.click(screen.getByTestId("channel-add-submit"));
    expect(b.callsOf("add_channel")).toEqual([
      {
        channel: {
          name: "telegram",
          platform: "telegram",
          enabled: true,
          allowed_users: ["42"],
          profile: "headless",
          base_url: null,
        },
      },
    ]);
    expect(await screen.findByTestId("channel-add-error")).toHaveTextContent("no Secret Service");
    await userEvent.click(screen.getByTestId("channel-session-token"));
    await waitFor(() => expect(sessionAsked).toBe(true));
    expect(b.callsOf("set_channel_token")).toEqual([
      { name: "telegram", token: "123:abc", sessionOnly: false },
      { name: "telegram", token: "123:abc", sessionOnly: true },
    ]);
  });

  it("adds a Slack channel with its bot and app-level tokens stored together as one secret", async () => {
    const b = backend({
      test_channel: () => ({ botId: "U0BOT", botName: "suzent (Suzent Test)", username: "suzent" }),
      add_channel: (a) => telegram({ config: a.channel as ChannelView["config"], hasToken: false }),
      set_channel_token: () => telegram(),
    });
    renderWithStore(<ChannelsSettings />);
    await userEvent.selectOptions(await screen.findByTestId("channel-add-platform"), "slack");
    expect(screen.getByTestId("channel-add-name")).toHaveValue("slack");
    expect(screen.getByTestId("channel-add")).toHaveTextContent("App-level token");
    await userEvent.type(screen.getByTestId("channel-add-token"), "xoxb-1-abc");
    // Both tokens are needed before anything can be tested.
    expect(screen.getByTestId("channel-test")).toBeDisabled();
    await userEvent.type(screen.getByTestId("channel-add-app-token"), "xapp-1-def");
    await userEvent.type(screen.getByTestId("channel-add-users"), "U0ADA42");
    await userEvent.click(screen.getByTestId("channel-test"));
    expect(await screen.findByTestId("channel-test-ok")).toHaveTextContent("Connected as suzent (Suzent Test) (@suzent)");
    expect(b.callsOf("test_channel")).toEqual([{ platform: "slack", baseUrl: null, token: "xoxb-1-abc xapp-1-def" }]);
    await userEvent.click(screen.getByTestId("channel-add-submit"));
    await waitFor(() =>
      expect(b.callsOf("set_channel_token")).toEqual([
        { name: "slack", token: "xoxb-1-abc xapp-1-def", sessionOnly: false },
      ]),
    );
    expect(b.callsOf("add_channel")).toEqual([
      {
        channel: {
          name: "slack",
          platform: "slack",
          enabled: true,
          allowed_users: ["U0ADA42"],
          profile: "headless",
          base_url: null,
        },
      },
    ]);
  });

  it("asks a Matrix channel for its homeserver before it can be tested", async () => {
    const b = backend({
      test_channel: () => ({ botId: "@suzent:example.org", botName: "@suzent:example.org", username: "suzent" }),
    });
    renderWithStore(<ChannelsSettings />);
    await userEvent.selectOptions(await screen.findByTestId("channel-add-platform"), "matrix");
    expect(screen.getByTestId("channel-add")).toHaveTextContent("Homeserver URL");
    expect(screen.getByTestId("channel-add-users")).toHaveAttribute("placeholder", expect.stringContaining("@name:server"));
    expect(screen.queryByTestId("channel-add-app-token")).not.toBeInTheDocument();
    await userEvent.type(screen.getByTestId("channel-add-token"), "syt_abc");
    expect(screen.getByTestId("channel-test")).toBeDisabled();
    await userEvent.type(screen.getByTestId("channel-add-base-url"), "https://matrix.example.org");
    await userEvent.click(screen.getByTestId("channel-test"));
    expect(await screen.findByTestId("channel-test-ok")).toBeInTheDocument();
    expect(b.callsOf("test_channel")).toEqual([
      { platform: "matrix", baseUrl: "https://matrix.example.org", token: "syt_abc" },
    ]);
  });

  it("offers every platform, and a Discord channel takes one bot token", async () => {
    const b = backend({
      test_channel: () => ({ botId: "990", botName: "Suzent Test Bot", username: "suzent test bot" }),
    });
    renderWithStore(<ChannelsSettings />);
    const select = await screen.findByTestId("channel-add-platform");
    expect([...select.querySelectorAll("option")].map((o) => o.textContent)).toEqual([
      "Telegram",
      "Discord",
      "Slack",
      "Matrix",
    ]);
    await userEvent.selectOptions(select, "discord");
    expect(screen.getByTestId("channel-add-name")).toHaveValue("discord");
    expect(screen.getByTestId("channel-add")).toHaveTextContent("Message Content intent");
    await userEvent.type(screen.getByTestId("channel-add-token"), "MTk4.Cl2FMQ.x");
    await userEvent.click(screen.getByTestId("channel-test"));
    expect(await screen.findByTestId("channel-test-ok")).toBeInTheDocument();
    expect(b.callsOf("test_channel")).toEqual([{ platform: "discord", baseUrl: null, token: "MTk4.Cl2FMQ.x" }]);
  });
});
