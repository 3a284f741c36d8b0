/**
 * The modal dialog of the analysis panels, in the frame's style (client.md 1.6): at most 80% of the
 * viewport high with a scrolling body; it closes on Esc, or on a press that both starts and ends on
 * the backdrop.
 */
import { html, type TemplateResult } from "lit";

/** A modal in the frame's style: closes on Esc (the frame's handler), or on a press that starts and ends on the backdrop. */
export function modal(
  title: string,
  body: unknown,
  close: () => void,
  foot: unknown,
  wide = false,
): TemplateResult {
  let down: EventTarget | null = null;
  return html`<div class="backdrop"
    @pointerdown=${(e: Event) => {
      down = e.target;
    }}
    @click=${(e: Event) => {
      if (e.target === e.currentTarget && down === e.currentTarget) close();
    }}
    @keydown=${(e: KeyboardEvent) => {
      if (e.key === "Escape") close();
    }}>
    <div class="modal" role="dialog" aria-label=${title} style=${wide ? "width:min(980px,94vw)" : ""}>
      <h2>${title}</h2>
      <div class="body">${body}</div>
      <div class="foot">${foot}</div>
    </div>
  </div>`;
}
