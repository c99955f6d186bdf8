// Settings -> Channels: the messaging channels (Telegram, Discord, Slack, Matrix) with their
// connection, on/off and allowed users; adding one with its platform's credentials (tested
// first; stored in the OS keychain, or for this session only where no keychain works); and the
// pending requests of people not on an allow-list, with Approve and Dismiss. Every action goes
// through the typed channel commands.
import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { ApiError, api, errorMessage } from "../api";
import type { TFunction } from "i18next";
import type { ChannelPlatform, ChannelRequest, ChannelState, ChannelView } from "../types";

function stateLabel(t: TFunction, state: ChannelState): string {
  switch (state) {
    case "off":
      return t("channels.stateOff");
    case "no_token":
      return t("channels.stateNoToken");
    case "connecting":
      return t("channels.stateConnecting");
    case "connected":
      return t("channels.stateConnected");
    case "failed":
      return t("channels.stateFailed");
    case "unsupported":
      return t("channels.stateUnsupported");
  }
}

function parseUsers(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
}

function ChannelRow({ view, onChange }: { view: ChannelView; onChange: (v: ChannelView) => void }) {
  const { t } = useTranslation();
  const c = view.config;
  const [users, setUsers] = useState((c.allowed_users ?? []).join(", "));
  const [error, setError] = useState<string | null>(null);
  const run = async (f: () => Promise<ChannelView>) => {
    setError(null);
    try {
      onChange(await f());
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const s = view.status;
  return (
    <li className="channel" data-testid={`channel-${c.name}`}>
      <div className="channel-head">
        <strong>{c.name}</strong> <span className="muted">{c.platform}</span>{" "}
        <span className={`badge state-${s.state}`} data-testid={`channel-state-${c.name}`}>
          {stateLabel(t, s.state)}
        </span>
        {s.bot && <span className="muted"> {t("channels.asBot", { bot: s.bot })}</span>}
        {!view.hasToken && <span className="muted"> {t("channels.noToken")}</span>}
        <label className="inline">
          <input
            type="checkbox"
            checked={c.enabled !== false}
            data-testid={`channel-enabled-${c.name}`}
            onChange={(e) => void run(() => api.setChannelEnabled(c.name, e.target.checked))}
          />{" "}
          {t("channels.enabled")}
        </label>
      </div>
      {s.error && (
        <p className="error small" data-testid={`channel-error-${c.name}`}>
          {s.error}
        </p>
      )}
      <label>
        {t("channels.allowedUsers")}
        <input
          value={users}
          data-testid={`channel-users-${c.name}`}
          placeholder={t("channels.allowedUsersHint")}
          onChange={(e) => setUsers(e.target.value)}
        />
      </label>
      <button
        type="button"
        data-testid={`channel-save-users-${c.name}`}
        onClick={() => void run(() => api.setChannelAllowedUsers(c.name, parseUsers(users)))}
      >
        {t("channels.saveUsers")}
      </button>
      {error && <p className="error small">{error}</p>}
    </li>
  );
}

/** What a platform asks for when a channel is added (translated labels). */
interface PlatformFields {
  label: string;
  /** The token field's label and hint. */
  token: string;
  tokenHint: string;
  /** A second secret (Slack's app-level token), stored with the first as `first second`. */
  appToken?: { label: string; hint: string };
  /** The base URL field's label; `required` where the platform has no public default. */
  baseUrl: string;
  baseUrlRequired: boolean;
  usersHint: string;
}

const PLATFORM_ORDER: ChannelPlatform[] = ["telegram", "discord", "slack", "matrix"];

/** Each platform's fields, its keys named literally (the locale test checks every key used). */
function platformFields(t: TFunction, platform: ChannelPlatform): PlatformFields {
  switch (platform) {
    case "telegram":
      return {
        label: "Telegram",
        token: t("channels.token"),
        tokenHint: t("channels.telegramTokenHint"),
        baseUrl: t("channels.baseUrl"),
        baseUrlRequired: false,
        usersHint: t("channels.allowedUsersHint"),
      };
    case "discord":
      return {
        label: "Discord",
        token: t("channels.token"),
        tokenHint: t("channels.discordTokenHint"),
        baseUrl: t("channels.baseUrl"),
        baseUrlRequired: false,
        usersHint: t("channels.discordUsersHint"),
      };
    case "slack":
      return {
        label: "Slack",
        token: t("channels.slackBotToken"),
        tokenHint: t("channels.slackBotTokenHint"),
        appToken: { label: t("channels.slackAppToken"), hint: t("channels.slackAppTokenHint") },
        baseUrl: t("channels.baseUrl"),
        baseUrlRequired: false,
        usersHint: t("channels.slackUsersHint"),
      };
    case "matrix":
      return {
        label: "Matrix",
        token: t("channels.matrixToken"),
        tokenHint: t("channels.matrixTokenHint"),
        baseUrl: t("channels.homeserver"),
        baseUrlRequired: true,
        usersHint: t("channels.matrixUsersHint"),
      };
  }
}

/** A password field with its label and a hint of where the secret comes from. */
function SecretField(props: { label: string; hint: string; value: string; testId: string; onChange: (v: string) => void }) {
  return (
    <label>
      {props.label}
      <input
        type="password"
        autoComplete="off"
        value={props.value}
        data-testid={props.testId}
        onChange={(e) => props.onChange(e.target.value)}
      />
      <span className="muted small">{props.hint}</span>
    </label>
  );
}

function AddChannel({ onAdded }: { onAdded: () => void }) {
  const { t } = useTranslation();
  const [name, setName] = useState("telegram");
  const [platform, setPlatform] = useState<ChannelPlatform>("telegram");
  const [token, setToken] = useState("");
  const [appToken, setAppToken] = useState("");
  const [baseUrl, setBaseUrl] = useState("");
  const [users, setUsers] = useState("");
  const [checked, setChecked] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [keychainFailed, setKeychainFailed] = useState(false);
  const fields = platformFields(t, platform);
  const url = baseUrl.trim() === "" ? null : baseUrl.trim();
  // The one secret the keychain keeps: Slack's two tokens are stored together.
  const secret = fields.appToken ? `${token.trim()} ${appToken.trim()}` : token.trim();
  const complete =
    token.trim() !== "" && (!fields.appToken || appToken.trim() !== "") && (!fields.baseUrlRequired || url !== null);

  const choose = (next: ChannelPlatform) => {
    // A name still at the previous platform's default follows the platform.
    if (name.trim() === "" || name === platform) setName(next);
    setPlatform(next);
    setChecked(null);
    setError(null);
  };
  const test = async () => {
    setError(null);
    setChecked(null);
    try {
      const check = await api.testChannel(platform, url, secret);
      setChecked(check.username ? `${check.botName} (@${check.username})` : check.botName);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const add = async () => {
    setError(null);
    try {
      await api.addChannel({
        name: name.trim(),
        platform,
        enabled: true,
        allowed_users: parseUsers(users),
        profile: "headless",
        base_url: url,
      });
    } catch (e) {
      setError(errorMessage(e));
      return;
    }
    await store(false);
  };
  const store = async (sessionOnly: boolean) => {
    try {
      await api.setChannelToken(name.trim(), secret, sessionOnly);
      setToken("");
      setAppToken("");
      setKeychainFailed(false);
      onAdded();
    } catch (e) {
      setKeychainFailed(e instanceof ApiError && e.kind === "keychain");
      setError(errorMessage(e));
    }
  };
  return (
    <section className="channel-add" data-testid="channel-add">
      <h3>{t("channels.add")}</h3>
      <label>
        {t("channels.name")}
        <input value={name} data-testid="channel-add-name" onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        {t("channels.platform")}
        <select
          value={platform}
          data-testid="channel-add-platform"
          onChange={(e) => choose(e.target.value as ChannelPlatform)}
        >
          {PLATFORM_ORDER.map((p) => (
            <option key={p} value={p}>
              {platformFields(t, p).label}
            </option>
          ))}
        </select>
      </label>
      <SecretField label={fields.token} hint={fields.tokenHint} value={token} testId="channel-add-token" onChange={setToken} />
      {fields.appToken && (
        <SecretField
          label={fields.appToken.label}
          hint={fields.appToken.hint}
          value={appToken}
          testId="channel-add-app-token"
          onChange={setAppToken}
        />
      )}
      <label>
        {t("channels.allowedUsers")}
        <input
          value={users}
          data-testid="channel-add-users"
          placeholder={fields.usersHint}
          onChange={(e) => setUsers(e.target.value)}
        />
      </label>
      <label>
        {fields.baseUrl}
        <input
          value={baseUrl}
          data-testid="channel-add-base-url"
          placeholder={fields.baseUrlRequired ? "https://matrix.example.org" : undefined}
          onChange={(e) => setBaseUrl(e.target.value)}
        />
      </label>
      <div className="row">
        <button type="button" data-testid="channel-test" disabled={!complete} onClick={() => void test()}>
          {t("channels.test")}
        </button>
        <button
          type="button"
          data-testid="channel-add-submit"
          disabled={!complete || name.trim() === ""}
          onClick={() => void add()}
        >
          {t("channels.addButton")}
        </button>
      </div>
      {checked && (
        <p className="ok small" data-testid="channel-test-ok">
          {t("channels.testOk", { bot: checked })}
        </p>
      )}
      {error && (
        <p className="error small" data-testid="channel-add-error">
          {error}
        </p>
      )}
      {keychainFailed && (
        <button type="button" data-testid="channel-session-token" onClick={() => void store(true)}>
          {t("channels.keepForSession")}
        </button>
      )}
    </section>
  );
}

/** Settings -> Channels. */
export function ChannelsSettings() {
  const { t } = useTranslation();
  const [channels, setChannels] = useState<ChannelView[]>([]);
  const [requests, setRequests] = useState<ChannelRequest[]>([]);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      const [c, r] = await Promise.all([api.listChannels(), api.channelRequests()]);
      setChannels(c);
      setRequests(r);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);
  const answer = async (r: ChannelRequest, approve: boolean) => {
    try {
      if (approve) await api.approveChannelRequest(r.channel, r.userId);
      else await api.dismissChannelRequest(r.channel, r.userId);
      await reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const pending = requests.filter((r) => r.status === "pending");
  return (
    <section className="settings-section" data-testid="channels-settings">
      <h2>{t("channels.title")}</h2>
      <p className="muted small">{t("channels.intro")}</p>
      {error && <p className="error">{error}</p>}
      {channels.length === 0 ? (
        <p className="muted" data-testid="channels-empty">
          {t("channels.none")}
        </p>
      ) : (
        <ul className="channels">
          {channels.map((v) => (
            <ChannelRow
              key={v.config.name}
              view={v}
              onChange={(changed) => setChannels((all) => all.map((x) => (x.config.name === changed.config.name ? changed : x)))}
            />
          ))}
        </ul>
      )}
      <h3>{t("channels.requests")}</h3>
      {pending.length === 0 ? (
        <p className="muted" data-testid="channel-requests-empty">
          {t("channels.noRequests")}
        </p>
      ) : (
        <ul className="channel-requests">
          {pending.map((r) => (
            <li key={`${r.channel}/${r.userId}`} data-testid={`channel-request-${r.userId}`}>
              <strong>{r.name}</strong> <code>{r.userId}</code>{" "}
              <span className="muted">{t("channels.requestOn", { channel: r.channel, count: r.messages })}</span>{" "}
              <button type="button" data-testid={`channel-approve-${r.userId}`} onClick={() => void answer(r, true)}>
                {t("channels.approve")}
              </button>{" "}
              <button type="button" data-testid={`channel-dismiss-${r.userId}`} onClick={() => void answer(r, false)}>
                {t("channels.dismiss")}
              </button>
            </li>
          ))}
        </ul>
      )}
      <AddChannel onAdded={() => void reload()} />
    </section>
  );
}
