/**
 * Tell the read-size checks (`memory-budget.ts`) this machine's memory: the cgroup limit, else the
 * host's RAM, as the service configuration reads it. Imported for its effect by the Node readers.
 */
import { machineMemMb } from "../resources/cgroup.js";
import { setHostMemoryBytes } from "./memory-budget.js";

setHostMemoryBytes(machineMemMb() * 2 ** 20);
