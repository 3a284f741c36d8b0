/**
 * The `ARROW:schema` key a written parquet file carries: pyarrow (and so dask and spatialdata's points reader)
 * takes column types from it, and without it a categorical column marked `categorical` in the pandas metadata
 * reads back as plain strings, which dask refuses ("Not all columns are categoricals").
 */
import { type Dictionary, tableFromIPC } from "apache-arrow";
import { parquetMetadata } from "hyparquet";
import { describe, expect, it } from "vitest";
import { dense, strings } from "../../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../../src/sdk/data/dataframe.js";
import { writeFrameParquet } from "../../../../src/sdk/io/parquet/write.js";

function arrowSchemaOf(bytes: Uint8Array) {
  const meta = parquetMetadata(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
  );
  const kv = meta.key_value_metadata ?? [];
  const b64 = kv.find((e) => e.key === "ARROW:schema")?.value;
  expect(b64, "ARROW:schema key").toBeTypeOf("string");
  return {
    schema: tableFromIPC(Buffer.from(b64!, "base64")).schema,
    pandas: kv.find((e) => e.key === "pandas"),
  };
}

describe("writeFrameParquet's Arrow schema", () => {
  it("types each column as pyarrow would read it, categoricals as dictionaries with unique ids", () => {
    const manyCats = Array.from({ length: 200 }, (_, i) => `g${i}`);
    const frame = dataFrame(["0", "1", "2"], {
      x: dense(new Float32Array([1, 2, 3])),
      gene: {
        kind: "categorical",
        codes: new Int32Array([0, 1, 0]),
        categories: strings(["a", "b"]),
        ordered: false,
      },
      big: {
        kind: "categorical",
        codes: new Int32Array([5, 150, 0]),
        categories: strings(manyCats),
        ordered: true,
      },
      label: strings(["p", null, "r"]),
      count: dense(new Uint16Array([7, 8, 9])),
    });
    const { schema, pandas } = arrowSchemaOf(
      writeFrameParquet(frame, { index: { column: "__null_dask_index__" } }),
    );
    const types = Object.fromEntries(schema.fields.map((f) => [f.name, f.type]));
    expect(schema.fields.map((f) => f.name)).toEqual([
      "x",
      "gene",
      "big",
      "label",
      "count",
      "__null_dask_index__",
    ]);
    // Deserialised types are generic classes (Float with a precision…): compare their names.
    const names = Object.fromEntries(Object.entries(types).map(([k, t]) => [k, String(t)]));
    expect(names).toEqual({
      x: "Float32",
      gene: "Dictionary<Int8, Utf8>",
      big: "Dictionary<Int16, Utf8>",
      label: "Utf8",
      count: "Uint16",
      __null_dask_index__: "Int64",
    });
    expect((types.big as Dictionary).isOrdered).toBe(true);
    expect((types.gene as Dictionary).isOrdered).toBe(false);
    expect((types.gene as Dictionary).id).not.toBe((types.big as Dictionary).id);
    // The schema carries the same pandas metadata as the file, as pyarrow writes it.
    expect(schema.metadata.get("pandas")).toBe(pandas?.value);
  });
});
