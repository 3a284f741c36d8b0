import { describe, expect, it } from "vitest";
import { dense, strings } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import { unsDict } from "../../../src/sdk/data/uns.js";

const table = makeTable({
  obs: dataFrame(["a", "b"], { n: dense(Float64Array.from([1, 2])) }),
  var: dataFrame(["g"], {}),
  obsm: { spatial: dense(Float64Array.from([0, 0, 1, 1]), [2, 2]) },
  uns: unsDict({ keep: 1 }),
});
const sd = makeSpatialData({ tables: { table } });

describe("applyChange", () => {
  it("sets and removes slots, shares the rest, and reports the diff and touched paths", () => {
    const pca = dense(Float32Array.from([1, 2, 3, 4]), [2, 2]);
    const { sdata, diff, touched } = applyChange(sd, {
      tables: {
        table: {
          obs: {
            leiden: {
              kind: "categorical",
              codes: Int32Array.from([0, 1]),
              categories: strings(["0", "1"]),
              ordered: false,
            },
            n: null,
          },
          obsm: { X_pca: pca },
          uns: { "neighbors/params/n_neighbors": 15 },
        },
      },
    });
    const t = sdata.tables.table!;
    expect(t.obs.columnOrder).toEqual(["leiden"]);
    expect(t.obsm.X_pca).toBe(pca);
    expect(t.obsm.spatial).toBe(table.obsm.spatial);
    expect(t.obs.index).toBe(table.obs.index);
    expect(diff).toEqual({ obs: ["leiden", "n"], obsm: ["X_pca"], uns: ["neighbors/params/n_neighbors"] });
    expect(touched).toContain("tables:table:obsm:X_pca");
    expect(sd.tables.table).toBe(table); // the input is untouched
  });

  it("rejects an inconsistent change and leaves the object as it was", () => {
    expect(() =>
      applyChange(sd, { tables: { table: { obsm: { bad: dense(Float64Array.from([1, 2, 3]), [3, 1]) } } } }),
    ).toThrow(/obsm\/bad has shape/);
    expect(() => applyChange(sd, { tables: { nope: { obs: {} } } })).toThrow(/no table "nope"/);
    expect(sd.tables.table!.obsm.bad).toBeUndefined();
  });
});
