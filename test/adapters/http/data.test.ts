import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import { tableFromIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Categorical, SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { writeCheckpointNamed } from "../../../src/sdk/io/checkpoint/write.js";
import type { Session } from "../../../src/sdk/session/session.js";
import { richDemo } from "../../sdk/data/rich-demo.js";
import { arrowOf, startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let rich: Session;
let id: string;
const data = (fp: string, sid = id) => t.api(`/api/sessions/${sid}/data/${encodeURIComponent(fp)}`);

beforeAll(async () => {
  t = await startTestServer();
  const { path } = await writeCheckpointNamed(richDemo(), t.dataDir, "rich", { name: "rich" });
  rich = await t.server.service.createSession({ source: { kind: "load", path } });
  await rich.ready;
  expect(rich.status).toBe("ready");
  id = rich.id;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const table = () => rich.data.tables.table!;

/** Column j of the session's X (or a layer), computed independently of the route. */
async function geneColumn(slot: "X" | "counts", gene: string): Promise<Float32Array> {
  const tb = table();
  const m = (await loadMatrix(slot === "X" ? tb.X! : tb.layers.counts!)) as SparseMatrix;
  const j = tb.var.index.values.indexOf(gene);
  const n = m.shape[0];
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++)
    for (let k = m.indptr[i]!; k < m.indptr[i + 1]!; k++) if (m.indices[k] === j) out[i] = Number(m.data[k]);
  return out;
}

describe("GET /data/{fieldPath}", () => {
  it("obs numeric: one RecordBatch, `value` float64 equal to the column", async () => {
    const r = await data("obs:total_counts");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/vnd.apache.arrow.stream");
    const a = await arrowOf(r);
    expect(a.batches.length).toBe(1);
    expect(a.schema.fields.map((f) => [f.name, String(f.type)])).toEqual([["value", "Float64"]]);
    expect(a.schema.metadata.get("field")).toBe("obs:total_counts");
    const col = table().obs.columns.total_counts!;
    expect(Array.from(a.getChild("value")!.toArray() as Float64Array)).toEqual(
      Array.from(col.kind === "dense" ? (col.data as Float32Array) : []),
    );
  });

  it("obs categorical: `code` int32 and the categories as JSON metadata", async () => {
    const a = await arrowOf(await data("obs:cell_type"));
    const col = table().obs.columns.cell_type as Categorical;
    expect(String(a.schema.fields[0]!.type)).toBe("Int32");
    expect(Array.from(a.getChild("code")!.toArray() as Int32Array)).toEqual(Array.from(col.codes));
    expect(JSON.parse(a.schema.metadata.get("categories")!)).toEqual(
      col.categories.kind === "string" ? col.categories.values : [],
    );
    expect(a.schema.metadata.get("kind")).toBe("categorical");
  });

  it("obs string: codes into the sorted distinct strings, -1 for missing", async () => {
    const a = await arrowOf(await data("obs:label"));
    const cats = JSON.parse(a.schema.metadata.get("categories")!) as string[];
    expect([...cats].sort()).toEqual(cats);
    const codes = a.getChild("code")!.toArray() as Int32Array;
    const col = table().obs.columns.label!;
    const values = col.kind === "string" ? col.values : [];
    expect(codes[3]).toBe(-1);
    expect(Array.from(codes, (c) => (c < 0 ? null : cats[c]))).toEqual(values);
    expect(a.schema.metadata.get("kind")).toBe("string");
  });

  it("obs boolean: codes 0/1 into [false, true]; nullable ints: float64 with NaN for missing", async () => {
    const b = await arrowOf(await data("obs:flag"));
    expect(JSON.parse(b.schema.metadata.get("categories")!)).toEqual([false, true]);
    const codes = b.getChild("code")!.toArray() as Int32Array;
    expect(Array.from(codes.slice(0, 4))).toEqual([1, 0, 0, 1]);
    const n = await arrowOf(await data("obs:nint"));
    const v = n.getChild("value")!.toArray() as Float64Array;
    expect(Number.isNaN(v[0])).toBe(true);
    expect(v[1]).toBe(2);
    expect(Number.isNaN(v[7])).toBe(true);
    expect(v[8]).toBe(16);
  });

  it("obsm: d0..d{n-1} float32 for a matrix; a data-frame entry names its columns", async () => {
    const a = await arrowOf(await data("obsm:spatial"));
    expect(a.schema.fields.map((f) => [f.name, String(f.type)])).toEqual([
      ["d0", "Float32"],
      ["d1", "Float32"],
    ]);
    const sp = (await loadMatrix(table().obsm.spatial as never)) as { data: Float64Array };
    const d0 = a.getChild("d0")!.toArray() as Float32Array;
    const d1 = a.getChild("d1")!.toArray() as Float32Array;
    expect(d0.length).toBe(300);
    for (let i = 0; i < 300; i++) {
      expect(d0[i]).toBe(Math.fround(sp.data[2 * i]!));
      expect(d1[i]).toBe(Math.fround(sp.data[2 * i + 1]!));
    }
    const df = await arrowOf(await data("obsm:X_df"));
    expect(JSON.parse(df.schema.metadata.get("columns")!)).toEqual(["ax", "ay"]);
    expect((df.getChild("d0")!.toArray() as Float32Array)[5]).toBe(Math.fround(sp.data[10]! + 1));
  });

  it("X:<gene>: `value` float32 from the checkpoint's mirror, equal to X's column", async () => {
    const genes = table().var.index.values as string[];
    for (const gene of [genes[0]!, genes[7]!, genes[39]!]) {
      const a = await arrowOf(await data(`X:${gene}`));
      expect(String(a.schema.fields[0]!.type)).toBe("Float32");
      expect(Array.from(a.getChild("value")!.toArray() as Float32Array)).toEqual(
        Array.from(await geneColumn("X", gene)),
      );
    }
    // The mirror is what answered (X was never densified or even needed).
    expect(await rich.geneValues("table", genes[7]!)).not.toBeNull();
    // Recently served genes are kept: the same vector comes back without reading the mirror again.
    expect(await rich.geneValues("table", genes[7]!)).toBe(await rich.geneValues("table", genes[7]!));
    expect(await rich.geneValues("table", genes[8]!)).not.toBe(await rich.geneValues("table", genes[7]!));
  });

  it("layers:<layer>:<gene> reads the layer's column", async () => {
    const gene = (table().var.index.values as string[])[3]!;
    const a = await arrowOf(await data(`layers:counts:${gene}`));
    expect(Array.from(a.getChild("value")!.toArray() as Float32Array)).toEqual(
      Array.from(await geneColumn("counts", gene)),
    );
  });

  it("var:<col> is typed by dtype", async () => {
    const s = await arrowOf(await data("var:score"));
    expect(String(s.schema.fields[0]!.type)).toBe("Float32");
    expect((s.getChild("value")!.toArray() as Float32Array)[6]).toBe(1.5);
    const b = await arrowOf(await data("var:hv"));
    expect(String(b.schema.fields[0]!.type)).toBe("Bool");
    expect(b.getChild("value")!.get(1)).toBe(true);
    expect(b.getChild("value")!.get(2)).toBe(false);
    const ids = await arrowOf(await data("var:gene_ids"));
    expect(ids.numRows).toBe(40);
    expect(String(ids.schema.fields[0]!.type)).toBe("Int32");
  });

  it("obsp:<key>: row/col/data triplets with shape metadata, never densified", async () => {
    const a = await arrowOf(await data("obsp:connectivities"));
    expect(a.schema.fields.map((f) => [f.name, String(f.type)])).toEqual([
      ["row", "Int32"],
      ["col", "Int32"],
      ["data", "Float64"],
    ]);
    expect(a.schema.metadata.get("shape")).toBe("[300,300]");
    expect(a.numRows).toBe(600);
    const m = (await loadMatrix(table().obsp.connectivities!)) as SparseMatrix;
    const row = a.getChild("row")!.toArray() as Int32Array;
    const col = a.getChild("col")!.toArray() as Int32Array;
    const val = a.getChild("data")!.toArray() as Float64Array;
    for (let k = 0; k < 600; k++) {
      expect(row[k]).toBe(Math.floor(k / 2));
      expect(col[k]).toBe(m.indices[k]);
      expect(val[k]).toBe(Number(m.data[k]));
    }
  });

  it("tables:<name>:<slot>:<key> names the table explicitly", async () => {
    const a = await arrowOf(await data("tables:table:obs:cell_type"));
    const b = await arrowOf(await data("obs:cell_type"));
    expect(Array.from(a.getChild("code")!.toArray() as Int32Array)).toEqual(
      Array.from(b.getChild("code")!.toArray() as Int32Array),
    );
    expect(a.schema.metadata.get("field")).toBe("tables:table:obs:cell_type");
  });

  it("unknown table, column, key, gene or layer → 404 naming what is missing", async () => {
    for (const [fp, says] of [
      ["obs:nope", 'no obs column "nope"'],
      ["var:nope", 'no var column "nope"'],
      ["obsm:nope", 'no obsm entry "nope"'],
      ["obsp:nope", 'no obsp entry "nope"'],
      ["X:NOPE", 'no gene "NOPE"'],
      ["layers:nope:CD3E", "no layer"],
      ["layers:counts:NOPE", 'no gene "NOPE"'],
      ["tables:nope:obs:x", 'no table "nope"'],
    ] as const) {
      const r = await data(fp);
      expect(r.status, fp).toBe(404);
      expect(((await r.json()) as { detail: string }).detail, fp).toContain(says);
    }
    const r = await t.api("/api/sessions/nope/data/obs:x");
    expect(r.status).toBe(404);
  });

  it("malformed or non-field paths → 400", async () => {
    for (const fp of [
      "bogus:x",
      "obs",
      "obs:",
      "images:morphology",
      "uns:demo",
      "tables:",
      "layers:counts",
      "shapes:nuclei",
    ]) {
      const r = await data(fp);
      expect(r.status, fp).toBe(400);
      expect(((await r.json()) as { detail: string }).detail.length, fp).toBeGreaterThan(5);
    }
  });

  it("gzips the Arrow stream when allowed and always sends Vary: Accept-Encoding", async () => {
    const get = (ae: string | null) =>
      new Promise<{ enc?: string; vary?: string; body: Buffer }>((resolve, reject) => {
        const req = request(
          `${t.url}/api/sessions/${id}/data/obsm:spatial`,
          { headers: ae === null ? {} : { "accept-encoding": ae } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () =>
              resolve({
                enc: res.headers["content-encoding"],
                vary: res.headers.vary as string | undefined,
                body: Buffer.concat(chunks),
              }),
            );
          },
        );
        req.on("error", reject);
        req.end();
      });
    const gz = await get("gzip");
    expect(gz.enc).toBe("gzip");
    expect(gz.vary?.toLowerCase()).toContain("accept-encoding");
    const decoded = tableFromIPC(gunzipSync(gz.body));
    expect(decoded.numRows).toBe(300);
    const plain = await get(null);
    expect(plain.enc).toBeUndefined();
    expect(plain.vary?.toLowerCase()).toContain("accept-encoding");
    expect(tableFromIPC(plain.body).numRows).toBe(300);
  });

  it("the demo session serves its fields too (harness checkpoint)", async () => {
    const demo = await t.openDemo();
    const a = await arrowOf(await data("obs:cell_area", demo));
    expect(a.numRows).toBe(300);
  });
});
