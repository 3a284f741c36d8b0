import { describe, expect, it } from "vitest";
import { dense, strings } from "../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { fieldToCsv, readField } from "../../../src/sdk/data/field.js";
import { inventory } from "../../../src/sdk/data/inventory.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";

const table = makeTable({
  obs: dataFrame(["c1", "c2", "c3"], {
    leiden: {
      kind: "categorical",
      codes: Int32Array.from([1, 0, -1]),
      categories: strings(["a", "b,c"]),
      ordered: false,
    },
    n: dense(Float64Array.from([1.5, 2, 3])),
  }),
  var: dataFrame(["g1", "g2"], {}),
  X: {
    kind: "csr",
    dtype: "float32",
    shape: [3, 2],
    data: Float32Array.from([1, 2, 3]),
    indices: Int32Array.from([0, 1, 1]),
    indptr: Int32Array.from([0, 1, 2, 3]),
  },
  obsm: { spatial: dense(Float64Array.from([0, 1, 2, 3, 4, 5]), [3, 2]) },
});
const sd = makeSpatialData({ tables: { table } });

describe("readField", () => {
  it("reads a categorical column with labels and quotes CSV", async () => {
    expect(fieldToCsv(await readField(sd, "obs:leiden"))).toBe('_index,leiden\nc1,"b,c"\nc2,a\nc3,\n');
  });
  it("reads one gene from sparse X", async () => {
    expect(fieldToCsv(await readField(sd, "X:g2"))).toBe("_index,g2\nc1,0\nc2,2\nc3,3\n");
  });
  it("reads obsm as components and names the table explicitly", async () => {
    expect(fieldToCsv(await readField(sd, "tables:table:obsm:spatial"))).toBe(
      "_index,spatial_0,spatial_1\nc1,0,1\nc2,2,3\nc3,4,5\n",
    );
  });
  it("errors clearly on unknown fields", async () => {
    await expect(readField(sd, "obs:nope")).rejects.toThrow(/no column "nope" \(have: leiden, n\)/);
    await expect(readField(sd, "X:nope")).rejects.toThrow(/no gene "nope"/);
    await expect(readField(sd, "tables:other:obs")).rejects.toThrow(/no tables element named "other"/);
  });
  it("inventory lists the table", () => {
    const inv = inventory(sd);
    expect(inv.tables[0]).toMatchObject({
      name: "table",
      n_obs: 3,
      n_vars: 2,
      obs: [
        { name: "leiden", kind: "categorical" },
        { name: "n", kind: "numeric" },
      ],
      obsm: [{ name: "spatial", n_components: 2 }],
    });
  });
});
