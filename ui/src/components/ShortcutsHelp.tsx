import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";

/** Ctrl on Linux and Windows, ⌘ on macOS. */
export const MOD = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform) ? "⌘" : "Ctrl";

/** The keyboard shortcuts, as the help sheet lists them. */
export function shortcutList(t: (k: string) => string): { keys: string; what: string }[] {
  return [
    { keys: `${MOD}+N`, what: t("shortcuts.newChat") },
    { keys: `${MOD}+K`, what: t("shortcuts.search") },
    { keys: `${MOD}+L`, what: t("shortcuts.focusComposer") },
    { keys: "Esc", what: t("shortcuts.stop") },
    { keys: "Enter", what: t("shortcuts.send") },
    { keys: "Shift+Enter", what: t("shortcuts.newLine") },
    { keys: `${MOD}+Shift+A`, what: t("shortcuts.approve") },
    { keys: `${MOD}+Shift+R`, what: t("shortcuts.reject") },
    { keys: `${MOD}+B`, what: t("shortcuts.sidebar") },
    { keys: `${MOD}+/`, what: t("shortcuts.help") },
  ];
}

/** The help sheet (Ctrl+/): every shortcut. Esc or the button closes it. */
export function ShortcutsHelp({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => close.current?.focus(), []);
  return (
    <div className="modal-backdrop" onClick={onClose}>
      <div
        className="modal"
        role="dialog"
        aria-modal="true"
        aria-labelledby="shortcuts-h"
        data-testid="shortcuts-help"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          if (e.key === "Escape" || e.key === "Tab") {
            e.preventDefault();
            if (e.key === "Escape") onClose();
          }
        }}
      >
        <h2 id="shortcuts-h">{t("shortcuts.title")}</h2>
        <dl className="shortcuts">
          {shortcutList(t).map((s) => (
            <div key={s.keys} style={{ display: "contents" }}>
              <dt>
                <kbd>{s.keys}</kbd>
              </dt>
              <dd>{s.what}</dd>
            </div>
          ))}
        </dl>
        <div className="form-actions">
          <button ref={close} type="button" className="btn" data-testid="shortcuts-close" onClick={onClose}>
            {t("shortcuts.close")}
          </button>
        </div>
      </div>
    </div>
  );
}
