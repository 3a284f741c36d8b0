/**
 * For every readable fixture: open it, convert it to a checkpoint, open the checkpoint, and check
 * that the inventory is the same and every value is equal.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inventory } from "../../../src/sdk/data/inventory.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { writeCheckpoint } from "../../../src/sdk/io/checkpoint/write.js";
import { openData } from "../../../src/sdk/io/open.js";
import { FileRangeReader } from "../../../src/sdk/io/store/file-range-reader.js";
import { ZipStore } from "../../../src/sdk/io/store/zip-store.js";
import { checkV3Hierarchy } from "../../../src/sdk/io/zarr/hierarchy-v3.js";
import { CONVERTIBLE_FIXTURES } from "../../fixture-cases.js";
import { fixture, reference } from "../../fixtures.js";
import { materialise } from "./values.js";

const CASES = CONVERTIBLE_FIXTURES;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tessera-roundtrip-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("convert then inspect gives the same inventory and values", () => {
  // Materialising every value of the larger fixtures (10k cells) takes tens of seconds on a busy machine.
  it.each(CASES)("%s", { timeout: 600_000 }, async (rel, format) => {
    const input = fixture(rel);
    const first = await openData(input);
    expect(first.format).toBe(format);
    const out = join(dir, `${rel.replace(/[^a-z0-9]+/gi, "_")}.sdata.zarr.zip`);
    await writeCheckpoint(first.sdata, out);
    // The zarr v3 rules zarr-python (so spatialdata and anndata) enforces, read from the zip itself.
    const zip = await ZipStore.open(new FileRangeReader(out));
    expect(await checkV3Hierarchy(zip)).toEqual([]);
    const second = await openData(out);
    expect(second.format).toBe("checkpoint");
    expect(inventory(second.sdata)).toEqual(inventory(first.sdata));
    expect(await materialise(second.sdata)).toEqual(await materialise(first.sdata));
  });

  it("the synth_10k reference table (10 000 × 2 000 sparse)", async () => {
    const first = await openData(reference("synth_10k/input.h5ad"));
    const out = join(dir, "synth.sdata.zarr.zip");
    await writeCheckpoint(first.sdata, out);
    const second = await openData(out);
    expect(inventory(second.sdata)).toEqual(inventory(first.sdata));
    const a = first.sdata.tables.table!;
    const b = second.sdata.tables.table!;
    const [xa, xb] = [await loadMatrix(a.X!), await loadMatrix(b.X!)];
    expect({ kind: xb.kind, dtype: xb.dtype, shape: xb.shape }).toEqual({
      kind: xa.kind,
      dtype: xa.dtype,
      shape: xa.shape,
    });
    // Byte comparison of the arrays: `toEqual` walks 2 M values one by one (a minute on a loaded machine).
    const bytes = (v: ArrayBufferView) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    const parts = (m: typeof xa) => (m.kind === "dense" ? [m.data] : [m.data, m.indices, m.indptr]);
    const [pa, pb] = [parts(xa), parts(xb)];
    for (let i = 0; i < pa.length; i++) {
      expect(pb[i]!.constructor).toBe(pa[i]!.constructor);
      expect(bytes(pb[i]!).equals(bytes(pa[i]!))).toBe(true);
    }
  });
});
