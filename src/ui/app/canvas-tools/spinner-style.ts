/** The small busy spinner the canvas-tool panels and dialogs show beside a running action (`.spinner`). */
import { css } from "lit";

/** Styles of `.spinner`: a ring with one transparent side, turning. */
export const spinnerStyles = css`
  .spinner {
    display: inline-block;
    width: 12px;
    height: 12px;
    border: 2px solid currentColor;
    border-right-color: transparent;
    border-radius: 50%;
    animation: spin 0.8s linear infinite;
    vertical-align: -2px;
  }
  @keyframes spin {
    to {
      transform: rotate(360deg);
    }
  }
`;
