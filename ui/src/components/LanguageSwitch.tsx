import { useState } from "react";
import { useTranslation } from "react-i18next";
import { LANGUAGES, languageChoice, resolveChoice, setLanguageChoice, type Language, type LanguageChoice } from "../i18n";

/** Each language's own name, so it can be found whatever language the UI is in now. */
const NATIVE_NAME: Record<Language, string> = { en: "English", "zh-CN": "简体中文" };

/** Settings → Language: follow the system language, or pick one; applied at once. */
export function LanguageSwitch() {
  const { t } = useTranslation();
  const [choice, setChoice] = useState<LanguageChoice>(languageChoice);
  const change = (next: LanguageChoice) => {
    setChoice(next);
    void setLanguageChoice(next);
  };
  return (
    <section className="card" aria-labelledby="lang-h">
      <h2 id="lang-h">{t("settings.language")}</h2>
      <div className="field narrow">
        <label htmlFor="settings-language">{t("settings.languageLabel")}</label>
        <select
          id="settings-language"
          data-testid="settings-language"
          value={choice}
          onChange={(e) => change(e.target.value as LanguageChoice)}
        >
          <option value="system">{t("settings.languageSystem", { language: NATIVE_NAME[resolveChoice("system")] })}</option>
          {LANGUAGES.map((l) => (
            <option key={l} value={l} lang={l}>
              {NATIVE_NAME[l]}
            </option>
          ))}
        </select>
        <small className="muted">{t("settings.languageHelp")}</small>
      </div>
    </section>
  );
}
