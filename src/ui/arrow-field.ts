/** Decoding the Arrow field payloads into `FieldData`: the shared module `src/sdk/display/field-data.ts`. */
export { fieldFromIpc, fieldFromTable } from "../sdk/display/field-data.js";
