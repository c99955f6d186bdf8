import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";

/** Puts text on the clipboard (the Clipboard API, else a hidden text area and `copy`). */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      /* not allowed here: fall back */
    }
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  const ok = document.execCommand?.("copy") ?? false;
  area.remove();
  if (!ok) throw new Error("the clipboard is not available");
}

/** A small "Copy" button that says "Copied" for a moment after it worked. */
export function CopyButton({ text, label, className = "" }: { text: string | (() => string); label?: string; className?: string }) {
  const { t } = useTranslation();
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = window.setTimeout(() => setState("idle"), 1500);
    return () => window.clearTimeout(timer);
  }, [state]);
  return (
    <button
      type="button"
      className={`copy-btn btn tiny ghost ${className}`}
      data-testid="copy-button"
      aria-label={label ?? t("copy.label")}
      title={label ?? t("copy.label")}
      onClick={() => copyText(typeof text === "function" ? text() : text).then(() => setState("copied"), () => setState("failed"))}
    >
      {state === "copied" ? t("copy.copied") : state === "failed" ? t("copy.failed") : t("copy.copy")}
    </button>
  );
}
