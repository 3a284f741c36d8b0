/**
 * Tell the read-size checks (`memory-budget.ts`) this machine's memory: the cgroup limit, else the
 * host's RAM, as the service configuration reads it. Imported for its effect by the Node readers.
 */
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";
import { memLimitMb } from "../session/config.js";
import { setHostMemoryBytes } from "./memory-budget.js";

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

setHostMemoryBytes(memLimitMb(readText, totalmem()) * 2 ** 20);
