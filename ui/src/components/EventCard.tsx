import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import type { InboxSource } from "../model";
import { Markdown } from "./Markdown";

/** Who a message came from, in words. */
function sourceTitle(s: InboxSource, t: TFunction): string {
  switch (s.kind) {
    case "command_finished":
      return t("event.commandFinished");
    case "subagent_report":
      return t("event.subagentReport", { sender: s.sender });
    case "agent_message":
      return t("event.agentMessage", { sender: s.sender });
    case "canvas_action":
      return t("event.canvasAction");
    default:
      return t("event.other", { sender: s.sender, kind: s.kind });
  }
}

/**
 * A message that reached the chat through the inbox (a finished background command, a
 * sub-agent's report, another agent, a canvas button): shown as an event with its source, never
 * as something the user said.
 */
export function EventCard({ source }: { source: InboxSource }) {
  const { t } = useTranslation();
  const canvas = source.kind === "canvas_action";
  const body = canvas && source.text.startsWith("[canvas] ") ? source.text.slice("[canvas] ".length) : source.text;
  return (
    <div
      className={`msg event event-${source.kind}`}
      data-testid={canvas ? "message-canvas-action" : "message-event"}
      data-kind={source.kind}
      data-sender={source.sender}
      role="note"
    >
      <div className="event-card">
        <div className="event-head">
          <span className="event-icon" aria-hidden="true">
            {canvas ? "▣" : source.kind === "command_finished" ? "⚙" : "✉"}
          </span>
          <strong>{sourceTitle(source, t)}</strong>
          {source.kind === "command_finished" && <code className="muted small">{source.sender.replace(/^command:/, "")}</code>}
        </div>
        {canvas ? (
          <code>{body}</code>
        ) : source.kind === "command_finished" ? (
          <pre className="event-output">{body}</pre>
        ) : (
          <Markdown text={body} />
        )}
      </div>
    </div>
  );
}
