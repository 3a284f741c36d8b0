/** `tessera convert`: any readable input → checkpoint. */
import { writeCheckpoint } from "../../sdk/io/checkpoint/write.js";
import { openData } from "../../sdk/io/open.js";

/** Read `input` and write it as a checkpoint at `output`. */
export async function convertCommand(input: string, output: string): Promise<void> {
  if (!output.endsWith(".zarr.zip")) throw new Error(`${output}: the output must be a .sdata.zarr.zip file`);
  const { sdata, warnings, appState } = await openData(input);
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  const result = await writeCheckpoint(sdata, output, { appState });
  process.stdout.write(
    `wrote ${result.path} (${(result.bytes / 1e6).toFixed(1)} MB, sha256 ${result.sha256.slice(0, 12)})\n`,
  );
}
