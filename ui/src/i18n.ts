// The UI's languages (i18next). Strings live in `locales/<language>/<area>.json`; a file
// `locales/en/chat.json` holding `{"send": "Send"}` gives the key `chat.send`. Every language has
// the same files and keys (src/test/locales.test.ts fails otherwise).
//
// Components: `const { t } = useTranslation();` then `t("chat.send")`. Code outside components
// (format helpers) imports `t` from here. Keys are always string literals, so the locale test can
// check that each one exists; pick between keys with a `switch`, never by building a key.
import i18next from "i18next";
import { initReactI18next } from "react-i18next";

/** The languages the UI is translated into, as BCP 47 tags (the `locales/` folder names). */
export const LANGUAGES = ["en", "zh-CN"] as const;
export type Language = (typeof LANGUAGES)[number];

/** What Settings offers: follow the system, or one language. */
export type LanguageChoice = "system" | Language;

const CHOICE_KEY = "suzent.language";

type Tree = { [key: string]: string | Tree };

// Every `locales/<lang>/<area>.json`, bundled at build time.
const files = import.meta.glob<Tree>("./locales/*/*.json", { eager: true, import: "default" });

/** The translation trees per language: `{ en: { chat: {...}, settings: {...} }, ... }`. */
export function localeResources(): Record<string, Record<string, Tree>> {
  const out: Record<string, Record<string, Tree>> = {};
  for (const [path, tree] of Object.entries(files)) {
    const m = /\.\/locales\/([^/]+)\/([^/]+)\.json$/.exec(path);
    if (!m) continue;
    const [, lang, area] = m;
    (out[lang] ??= {})[area] = tree;
  }
  return out;
}

/** The supported language closest to a list of BCP 47 tags (the system's preference order). */
export function matchLanguage(preferred: readonly string[]): Language {
  for (const tag of preferred) {
    const lower = tag.toLowerCase();
    // Every Chinese tag gets Simplified Chinese, the only Chinese translation so far.
    if (lower === "zh" || lower.startsWith("zh-") || lower.startsWith("zh_")) return "zh-CN";
    if (lower === "en" || lower.startsWith("en-") || lower.startsWith("en_")) return "en";
  }
  return "en";
}

/** The system's languages as the webview reports them (the OS locale in Tauri). */
function systemLanguages(): readonly string[] {
  if (typeof navigator === "undefined") return [];
  return navigator.languages?.length ? navigator.languages : navigator.language ? [navigator.language] : [];
}

/** The stored choice ("system" when nothing, or something unknown, is stored). */
export function languageChoice(): LanguageChoice {
  try {
    const v = window.localStorage.getItem(CHOICE_KEY);
    return v && (LANGUAGES as readonly string[]).includes(v) ? (v as Language) : "system";
  } catch {
    return "system";
  }
}

/** The language a choice stands for now. */
export function resolveChoice(choice: LanguageChoice): Language {
  return choice === "system" ? matchLanguage(systemLanguages()) : choice;
}

function applyDocumentLanguage(lang: Language) {
  if (typeof document !== "undefined") document.documentElement.lang = lang;
}

/** Stores the choice and switches the UI to it at once. */
export async function setLanguageChoice(choice: LanguageChoice): Promise<void> {
  try {
    if (choice === "system") window.localStorage.removeItem(CHOICE_KEY);
    else window.localStorage.setItem(CHOICE_KEY, choice);
  } catch {
    /* storage unavailable: the choice lasts until the window closes */
  }
  const lang = resolveChoice(choice);
  await i18next.changeLanguage(lang);
  applyDocumentLanguage(lang);
}

const initialLanguage = resolveChoice(languageChoice());

const resources = Object.fromEntries(
  Object.entries(localeResources()).map(([lang, tree]) => [lang, { translation: tree }]),
);

void i18next.use(initReactI18next).init({
  resources,
  lng: initialLanguage,
  fallbackLng: "en",
  supportedLngs: [...LANGUAGES],
  // React escapes what it renders; escaping here too would show `&amp;`.
  interpolation: { escapeValue: false },
  returnNull: false,
  initAsync: false,
});
applyDocumentLanguage(initialLanguage);

/** The translation function for code outside components (it follows the current language). */
export const t = i18next.t.bind(i18next);

export default i18next;
