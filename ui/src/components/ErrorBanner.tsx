import { Component, type ErrorInfo, type ReactNode } from "react";
import { t } from "../i18n";
import { useTranslation } from "react-i18next";
import { useStore } from "../store";

/** Failed backend commands, readable, each dismissable. */
export function ErrorBanner() {
  const { state, dispatch } = useStore();
  const { t } = useTranslation();
  if (state.errors.length === 0) return null;
  return (
    <div className="error-banner" role="alert" data-testid="error-banner">
      {state.errors.map((e) => (
        <div key={e.id} className="error-line">
          <span className="error-icon" aria-hidden="true">
            !
          </span>
          <span className="error-text">{e.message}</span>
          <button
            type="button"
            className="icon-btn"
            aria-label={t("errors.dismiss")}
            onClick={() => dispatch({ type: "error/dismiss", id: e.id })}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/** Catches rendering errors so the window shows what broke instead of going blank. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  state = { error: null as Error | null };
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  componentDidCatch(error: Error, info: ErrorInfo) {
    console.error("render error", error, info.componentStack);
  }
  render() {
    if (this.state.error) {
      return (
        <div className="error-banner fatal" role="alert" data-testid="error-banner">
          <div className="error-line">
            <span className="error-icon" aria-hidden="true">
              !
            </span>
            <span className="error-text">{t("errors.renderFailed", { message: this.state.error.message })}</span>
            <button type="button" className="btn small" onClick={() => this.setState({ error: null })}>
              {t("errors.tryAgain")}
            </button>
          </div>
        </div>
      );
    }
    return this.props.children;
  }
}
