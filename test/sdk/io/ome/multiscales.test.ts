/**
 * The NGFF metadata parser against the official JSON Schemas, examples and valid/invalid suites
 * (`ngff-spec-json/{0.4,0.5}`), and against the attrs of every staged fixture version.
 *
 * Policy: every schema-valid document parses. Schema-invalid documents either throw (when reading
 * them would give wrong pixels or geometry) or are tolerated (when the fault does not change what we
 * read); the table below fixes which, so a change in behaviour is deliberate.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parseNgffAttrs, resolveAxes } from "../../../../src/sdk/io/ome/multiscales.js";
import { fixture } from "../../../fixtures.js";

const SPEC = fixture("ngff-spec-json");

/** Strip `//` comments (the spec examples carry them) outside strings. */
function parseJsonc(text: string): unknown {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === "\\") out += text[++i] ?? "";
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else out += ch;
  }
  return JSON.parse(out);
}

/** An ajv with every schema of a version loaded, and a lookup of compiled schemas by file name. */
function ajvFor(version: string): { ajv: Ajv2020; byFile: (file: string) => ReturnType<Ajv2020["compile"]> } {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const dir = join(SPEC, version, "schemas");
  const ids = new Map<string, string>();
  for (const f of readdirSync(dir)) {
    const schema = JSON.parse(readFileSync(join(dir, f), "utf8")) as { $id: string };
    // Some 0.4 schemas carry a `latest` $id; register them under their file too.
    ids.set(f, schema.$id);
    ajv.addSchema(schema);
  }
  return {
    ajv,
    byFile: (file) => {
      const v = ajv.getSchema(ids.get(file.replace(/^schemas\//, ""))!);
      if (!v) throw new Error(`no schema ${file}`);
      return v;
    },
  };
}

interface Suite {
  schema: { id: string };
  tests: { formerly?: string; description?: string; data: Record<string, unknown>; valid: boolean }[];
}

function suite(version: string, name: string): Suite {
  return JSON.parse(readFileSync(join(SPEC, version, "tests", `${name}.json`), "utf8")) as Suite;
}

/** What the parser does with each schema-invalid image document (by the suite's `formerly` name). */
const INVALID_POLICY: Record<string, "reject" | "tolerate"> = {
  "invalid/duplicate_axes.json": "reject",
  "invalid/missing_space_axes.json": "reject",
  "invalid/invalid_transformation_type.json": "reject", // a translation without "translation"
  "invalid/missing_scale.json": "tolerate", // a lone translation is still well defined
  "invalid/too_many_axes.json": "reject",
  "invalid/invalid_channels_color.json": "tolerate", // omero is display metadata
  "invalid/missing_axes_name.json": "reject",
  "invalid/invalid_axes_count.json": "reject",
  "invalid/one_space_axes.json": "reject",
  "invalid/invalid_path.json": "reject",
  "invalid/invalid_multiscales_transformations.json": "reject",
  "invalid/missing_transformations.json": "tolerate", // as in NGFF ≤ 0.3: scales from shape ratios
  "invalid/no_datasets.json": "reject",
  "invalid/missing_datasets.json": "reject",
  "invalid/missing_axes.json": "tolerate", // as in NGFF ≤ 0.2: axes from the array rank
  "invalid/invalid_version.json": "tolerate",
  "invalid/invalid_axis_type.json": "tolerate",
  "invalid/duplicate_scale.json": "tolerate", // scales compose
  "invalid/no_axes.json": "reject",
  "invalid/too_many_space_axes.json": "reject",
  "invalid/no_multiscales.json": "reject",
  "invalid/invalid_channels_window.json": "tolerate",
  "invalid/empty_transformations.json": "tolerate",
  "invalid/missing_path.json": "reject",
};

for (const version of ["0.4", "0.5"]) {
  describe(`NGFF ${version} JSON-Schema suites`, () => {
    const { byFile } = ajvFor(version);

    for (const name of ["image_suite", "strict_image_suite"]) {
      const s = suite(version, name);
      const validate = byFile(s.schema.id);
      for (const t of s.tests) {
        const label = t.formerly ?? t.description ?? "?";
        it(`${name}: ${label} (${t.valid ? "valid" : "invalid"})`, () => {
          expect(validate(t.data)).toBe(t.valid);
          if (t.valid) {
            const meta = parseNgffAttrs(t.data, label);
            expect(meta.datasets.length).toBeGreaterThan(0);
            return;
          }
          const policy = INVALID_POLICY[label];
          expect(policy, `no policy for ${label}`).toBeDefined();
          if (policy === "reject") expect(() => parseNgffAttrs(t.data, label)).toThrow(label);
          else expect(parseNgffAttrs(t.data, label).datasets.length).toBeGreaterThan(0);
        });
      }
    }

    it("label suites: the image-label block is kept whatever its colours", () => {
      for (const name of ["label_suite", "strict_label_suite"]) {
        for (const t of suite(version, name).tests) {
          const block = version === "0.5" ? (t.data.ome as Record<string, unknown>) : t.data;
          const ms = [{ axes: ["y", "x"], datasets: [{ path: "0" }] }];
          const attrs =
            version === "0.5" ? { ome: { ...block, multiscales: ms } } : { ...block, multiscales: ms };
          expect(parseNgffAttrs(attrs, "label").imageLabel).toEqual(block["image-label"]);
        }
      }
    });

    it("spec examples validate and parse", () => {
      const exDir = join(SPEC, version, "examples");
      let n = 0;
      for (const group of readdirSync(exDir)) {
        const cfg = JSON.parse(readFileSync(join(exDir, group, ".config.json"), "utf8")) as {
          schema: string;
        };
        const validate = byFile(cfg.schema);
        for (const f of readdirSync(join(exDir, group)).filter(
          (x) => x.endsWith(".json") && !x.startsWith("."),
        )) {
          const doc = parseJsonc(readFileSync(join(exDir, group, f), "utf8")) as Record<string, unknown>;
          const attrs = (version === "0.5" ? doc.attributes : doc) as Record<string, unknown>;
          expect(validate(attrs), `${group}/${f}`).toBe(true);
          if (group === "multiscales_strict") {
            const meta = parseNgffAttrs(attrs, f);
            expect(meta.version).toBe(version);
            expect(meta.axes?.map((a) => a.name)).toEqual(
              f === "multiscales_example.json" ? ["t", "c", "z", "y", "x"] : meta.axes?.map((a) => a.name),
            );
            n++;
          }
        }
      }
      expect(n).toBe(2);
    });
  });
}

describe("multiscales of every staged version", () => {
  const attrsOf = (rel: string): Record<string, unknown> => {
    const p = fixture(rel);
    const j = JSON.parse(readFileSync(p, "utf8")) as Record<string, unknown>;
    return p.endsWith("zarr.json") ? (j.attributes as Record<string, unknown>) : j;
  };

  it("0.1 (bioformats2raw): no axes → t,c,z,y,x from rank 5; no level transforms", () => {
    const meta = parseNgffAttrs(
      attrsOf("viv-fixtures/loaders-tests/bioformats-zarr/data.zarr/0/.zattrs"),
      "bf",
    );
    expect(meta.version).toBe("0.1");
    expect(meta.axes).toBeUndefined();
    expect(meta.datasets.map((d) => [d.path, d.transforms.length])).toEqual([
      ["0", 0],
      ["1", 0],
    ]);
    expect(resolveAxes(meta, 5, "bf").map((a) => a.name)).toEqual(["t", "c", "z", "y", "x"]);
    expect(resolveAxes(meta, 3, "bf").map((a) => a.name)).toEqual(["z", "y", "x"]);
    expect(() => resolveAxes(meta, 6, "bf")).toThrow(/6-d/);
  });

  it("0.3: axes as strings", () => {
    const meta = parseNgffAttrs(
      { multiscales: [{ version: "0.3", axes: ["c", "y", "x"], datasets: [{ path: "0" }, { path: "1" }] }] },
      "v03",
    );
    expect(meta.axes).toEqual([{ name: "c" }, { name: "y" }, { name: "x" }]);
    expect(() => resolveAxes(meta, 4, "v03")).toThrow(/3 axes.*4 dimensions/);
  });

  it("0.4 exemplar: omero labels, non-integer scales, no spatialdata edges", () => {
    const attrs = attrsOf("vitessce-exemplar-001-crop/exemplar-001.crop.image.ome.zarr/.zattrs");
    const meta = parseNgffAttrs(attrs, "ex");
    expect(meta.version).toBe("0.4");
    expect(meta.omeKey).toBe(false);
    expect(meta.channels).toEqual(["DNA", "FDX1", "CD1D", "CD357"]);
    expect(meta.datasets[3]!.transforms).toEqual([
      { type: "scale", scale: [1, 8.064516129032258, 8.064516129032258] },
    ]);
    expect(meta.edges).toEqual({});
    expect(ajvFor("0.4").byFile("image.schema")(attrs)).toBe(true);
  });

  it("0.4 spatialdata: edges keyed by output system, int channel labels stringified, image-label", () => {
    const img = parseNgffAttrs(
      attrsOf("vitessce-sdata-blobs-0.3/blobs.sdata.zarr/images/blobs_image/.zattrs"),
      "img",
    );
    expect(img.spatialdataVersion).toBe("0.1");
    expect(Object.keys(img.edges)).toEqual(["global"]);
    expect(img.edges.global!.input?.name).toBe("cyx");
    expect(img.channels).toEqual(["0", "1", "2"]);
    const lab = parseNgffAttrs(
      attrsOf("vitessce-sdata-blobs-0.3/blobs.sdata.zarr/labels/blobs_labels/.zattrs"),
      "lab",
    );
    expect(lab.imageLabel).toEqual({ version: "0.4" });
    const dev = parseNgffAttrs(
      attrsOf("viv-fixtures/loaders-tests/ome-zarr/blobs_image_v04.ome.zarr/.zattrs"),
      "dev",
    );
    expect(dev.version).toBe("0.4-dev-spatialdata");
    expect(dev.spatialdataVersion).toBe("0.2");
  });

  it("0.5-dev-spatialdata (zarr v3): metadata under ome", () => {
    const img = parseNgffAttrs(
      attrsOf("vitessce-sdata-blobs-0.7/blobs.sdata.zarr/images/blobs_multiscale_image/zarr.json"),
      "img",
    );
    expect(img.omeKey).toBe(true);
    expect(img.version).toBe("0.5-dev-spatialdata");
    expect(img.datasets.map((d) => d.path)).toEqual(["s0", "s1", "s2"]);
    expect(img.channels).toEqual(["0", "1", "2"]);
    expect(img.spatialdataVersion).toBe("0.3");
    const lab = parseNgffAttrs(
      attrsOf("vitessce-sdata-blobs-0.7/blobs.sdata.zarr/labels/blobs_labels/zarr.json"),
      "lab",
    );
    expect(lab.imageLabel).toEqual({ version: "0.5" });
    const viv = parseNgffAttrs(
      attrsOf("viv-fixtures/loaders-tests/ome-zarr/blobs_image_v05.ome.zarr/zarr.json"),
      "viv",
    );
    expect(viv.version).toBe("0.5-dev-spatialdata");
  });

  it("legacy spatialdata 0.0.12: channels_metadata, nested sequences", () => {
    const meta = parseNgffAttrs(
      attrsOf("sdata-storage-format-v0.0.12/transformation_sequence.zarr/images/blobs_image/.zattrs"),
      "seq",
    );
    expect(meta.channels).toEqual(["0", "1", "2"]);
    const t = meta.edges.global!;
    expect(t.type).toBe("sequence");
    expect(t.type === "sequence" && t.transformations.map((s) => s.type)).toEqual(["translation", "scale"]);
  });
});
