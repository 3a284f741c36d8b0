/**
 * Validation of checkpoint JSON (app state, viewer sidecar) against the generated schemas. Every
 * checkpoint write calls these before a byte is written, so an invalid state never reaches disk.
 */
import { Ajv, type ValidateFunction } from "ajv";
import appStateSchema from "../../../../schemas/checkpoint/app-state.schema.json" with { type: "json" };
import sidecarSchema from "../../../../schemas/checkpoint/viewer-sidecar.schema.json" with { type: "json" };
import type { AppState } from "./app-state.js";
import type { ViewerSidecar } from "./sidecar.js";

let compiled: { appState: ValidateFunction; sidecar: ValidateFunction } | undefined;

function validators() {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    compiled = { appState: ajv.compile(appStateSchema), sidecar: ajv.compile(sidecarSchema) };
  }
  return compiled;
}

function check(v: ValidateFunction, value: unknown, what: string): void {
  if (v(value)) return;
  const errors = (v.errors ?? [])
    .slice(0, 5)
    .map(
      (e) =>
        `${e.instancePath || "/"} ${e.message}${e.params && "additionalProperty" in e.params ? ` (${String(e.params.additionalProperty)})` : ""}`,
    )
    .join("; ");
  throw new Error(`invalid ${what}: ${errors}`);
}

/** Throw an error listing what is wrong when `state` does not match the app state schema. */
export function validateAppState(state: unknown): asserts state is AppState {
  check(validators().appState, state, "app state");
}

/** Throw an error listing what is wrong when `sidecar` does not match the viewer sidecar schema. */
export function validateSidecar(sidecar: unknown): asserts sidecar is ViewerSidecar {
  check(validators().sidecar, sidecar, "viewer sidecar");
}
