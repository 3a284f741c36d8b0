import { copyFile, mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TypedArray } from "../../../../src/sdk/data/arrays.js";
import { readOmeTiff } from "../../../../src/sdk/io/tiff/read.js";
import { fixture } from "../../../fixtures.js";
import { stats, values } from "../ome/helpers.js";
import { type TestPage, writeTestTiff } from "./tiff-writer.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "ome-tiff-"));
  dirs.push(d);
  return d;
}
const sum = (a: TypedArray) => stats(a).sum;

describe("multi-channel.ome.tif (Bio-Formats 5.2.2, int8, one IFD per channel)", () => {
  for (const [label, rel, chunk] of [
    [
      "avivator copy: big-endian, uncompressed, one row per strip",
      "viv-fixtures/avivator-data/multi-channel.ome.tif",
      [1, 1, 439],
    ],
    [
      "loaders-tests copy: little-endian, deflate strips",
      "viv-fixtures/loaders-tests/multi-channel.ome.tif",
      [1, 149, 439],
    ],
  ] as const) {
    it(label, async () => {
      const el = await readOmeTiff(fixture(rel));
      expect(el.kind).toBe("image");
      expect(el.name).toBe("multi-channel");
      expect(el.axes).toEqual(["c", "y", "x"]);
      expect(el.channels).toEqual(["0", "1", "2"]);
      expect(el.dtype).toBe("int8");
      expect(el.levels).toHaveLength(1);
      expect(el.levels[0]!.shape).toEqual([3, 167, 439]);
      expect(el.levels[0]!.chunks).toEqual(chunk);
      expect(el.transformations.global!.type).toBe("identity");
      const full = await el.levels[0]!.source.read();
      expect(full.data.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(stats(full.data)).toMatchObject({ first: 0, last: 96, sum: 10445323, max: 96 });
      const win = await el.levels[0]!.source.read([2, [3, 6], [100, 104]]);
      expect(win.shape).toEqual([3, 4]);
      expect(values(win.data)).toEqual([2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3]);
      for (let y = 0; y < 3; y++)
        for (let x = 0; x < 4; x++)
          expect(win.data[y * 4 + x]).toBe(full.data[2 * 167 * 439 + (3 + y) * 439 + 100 + x]);
    });
  }
});

describe("multi-file OME-TIFF (companion metadata, 5-plane Z stack)", () => {
  const zSums = [94605, 16575, 93330, 17136, 92820];

  it("opens through the companion .ome file", async () => {
    const el = await readOmeTiff(fixture("viv-fixtures/avivator-data/multifile.companion.ome"));
    expect(el.name).toBe("multifile");
    expect(el.axes).toEqual(["c", "z", "y", "x"]);
    expect(el.dtype).toBe("uint8");
    expect(el.levels[0]!.shape).toEqual([1, 5, 24, 18]);
    const full = await el.levels[0]!.source.read();
    for (let z = 0; z < 5; z++)
      expect(sum(full.data.subarray(z * 24 * 18, (z + 1) * 24 * 18) as TypedArray)).toBe(zSums[z]);
    const plane = await el.levels[0]!.source.read([0, 2, [3, 5], [4, 8]]);
    expect(values(plane.data)).toEqual([255, 255, 0, 255, 255, 255, 0, 255]);
  });

  it("opens through a member file whose OME-XML is BinaryOnly", async () => {
    const el = await readOmeTiff(fixture("viv-fixtures/avivator-data/multifile-Z4.ome.tiff"), {
      name: "stack",
    });
    expect(el.name).toBe("stack");
    expect(el.levels[0]!.shape).toEqual([1, 5, 24, 18]);
    const z = await el.levels[0]!.source.read([0, 3]);
    expect(sum(z.data)).toBe(zSums[3]);
  });
});

describe("Xenium toy morphology (Bio-Formats 6.12, u16 237²)", () => {
  for (const [file, first, last, total, region] of [
    ["morphology_focus.ome.tif", 32, 67, 3525232, [169, 55, 36, 35, 58, 38, 33, 36]],
    ["morphology_mip.ome.tif", 167, 178, 7088024, [165, 113, 175, 4, 43, 86, 162, 7]],
  ] as const) {
    it(file, async () => {
      const el = await readOmeTiff(fixture(`sfe-toy/xenium/${file}`));
      expect(el.axes).toEqual(["c", "y", "x"]);
      expect(el.dtype).toBe("uint16");
      expect(el.levels.map((l) => l.shape)).toEqual([[1, 237, 237]]);
      const st = stats((await el.levels[0]!.source.read()).data);
      expect([st.first, st.last, st.sum]).toEqual([first, last, total]);
      expect(values((await el.levels[0]!.source.read([0, [100, 102], [50, 54]])).data)).toEqual(region);
    });
  }
});

/** Pixel value of the synthetic pyramid at channel c, level l, position (y, x). */
const synth = (c: number, l: number, y: number, x: number) => (c * 10000 + l * 1000 + y * 37 + x) % 65536;

function synthPage(c: number, l: number, w: number, h: number, extra: Partial<TestPage> = {}): TestPage {
  const data = new Uint16Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data[y * w + x] = synth(c, l, y, x);
  return { width: w, height: h, data, ...extra };
}

function omeXml(sizeX: number, sizeY: number, names: string[]): string {
  const channels = names
    .map((n, i) => `<Channel ID="Channel:0:${i}" Name="${n}" SamplesPerPixel="1"/>`)
    .join("");
  const tiffData = names
    .map((_, i) => `<TiffData FirstC="${i}" FirstT="0" FirstZ="0" IFD="${i}" PlaneCount="1"/>`)
    .join("");
  return `<?xml version="1.0" encoding="UTF-8"?><!-- test --><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0" Name="pyr"><Pixels DimensionOrder="XYCZT" ID="Pixels:0" SizeC="${names.length}" SizeT="1" SizeX="${sizeX}" SizeY="${sizeY}" SizeZ="1" Type="uint16" PhysicalSizeX="0.5" PhysicalSizeY="0.25">${channels}${tiffData}</Pixels></Image></OME>`;
}

/** A 2-channel 3-level pyramid (SubIFDs), level 0 tiled 16×16, coarser levels stripped. */
async function writePyramid(dir: string, compression?: number): Promise<string> {
  const pages = [0, 1].map((c) =>
    synthPage(c, 0, 70, 50, {
      tile: 16,
      ...(c === 0 ? { description: omeXml(70, 50, ["DAPI", "CD3 &amp; CD4"]) } : {}),
      subIfds: [synthPage(c, 1, 35, 25), synthPage(c, 2, 17, 12, compression ? { compression } : {})],
    }),
  );
  const p = join(dir, "pyramid.ome.tif");
  await writeFile(p, writeTestTiff(pages));
  return p;
}

describe("SubIFD pyramids (built by the test writer)", () => {
  it("reads every level lazily, tiles and strips", async () => {
    const p = await writePyramid(await tempDir());
    const el = await readOmeTiff(p);
    expect(el.name).toBe("pyramid");
    expect(el.channels).toEqual(["DAPI", "CD3 & CD4"]);
    expect(el.dtype).toBe("uint16");
    expect(el.levels.map((l) => [l.shape, l.chunks])).toEqual([
      [
        [2, 50, 70],
        [1, 16, 16],
      ],
      [
        [2, 25, 35],
        [1, 25, 35],
      ],
      [
        [2, 12, 17],
        [1, 12, 17],
      ],
    ]);
    expect(el.levels[1]!.levelTransform).toEqual([{ type: "scale", scale: [1, 2, 2] }]);
    for (let l = 0; l < 3; l++) {
      const lv = el.levels[l]!;
      const full = await lv.source.read();
      const [, h, w] = lv.shape as [number, number, number];
      for (const [c, y, x] of [
        [0, 0, 0],
        [1, h - 1, w - 1],
        [1, Math.floor(h / 2), 3],
      ] as const) {
        expect(full.data[c * h * w + y * w + x]).toBe(synth(c, l, y, x));
      }
    }
    // A window crossing tile borders of level 0, one channel.
    const win = await el.levels[0]!.source.read([1, [14, 18], [30, 35]]);
    expect(win.shape).toEqual([4, 5]);
    for (let y = 0; y < 4; y++)
      for (let x = 0; x < 5; x++) expect(win.data[y * 5 + x]).toBe(synth(1, 0, 14 + y, 30 + x));
  });

  it("maps to global with the physical pixel size on request", async () => {
    const p = await writePyramid(await tempDir());
    const el = await readOmeTiff(p, { physicalScale: true });
    expect(el.transformations.global).toMatchObject({ type: "scale", scale: [1, 0.25, 0.5] });
  });

  it("rejects JPEG-2000 at open", async () => {
    const dir = await tempDir();
    const p = join(dir, "j2k.ome.tif");
    await writeFile(
      p,
      writeTestTiff([synthPage(0, 0, 8, 8, { description: omeXml(8, 8, ["a"]), compression: 33003 })]),
    );
    await expect(readOmeTiff(p)).rejects.toThrow("JPEG-2000 compressed OME-TIFF is not supported");
    // Also when only a pyramid level is JPEG-2000 (34712, OpenJPEG).
    const q = await writePyramid(dir, 34712);
    await expect(readOmeTiff(q)).rejects.toThrow(
      /JPEG-2000 compressed OME-TIFF is not supported \(TIFF compression 34712\)/,
    );
  });
});

describe("corrupt input", () => {
  it("a truncated copy fails naming the file", async () => {
    const dir = await tempDir();
    for (const keep of [100, 120000]) {
      const p = join(dir, `cut-${keep}.ome.tif`);
      await copyFile(fixture("viv-fixtures/avivator-data/multi-channel.ome.tif"), p);
      await truncate(p, keep);
      await expect(readOmeTiff(p)).rejects.toThrow(p);
    }
    // A cut through the IFD chain of a written pyramid.
    const q = await writePyramid(dir);
    const cut = join(dir, "cut-pyramid.ome.tif");
    await copyFile(q, cut);
    await truncate(cut, 200);
    await expect(readOmeTiff(cut)).rejects.toThrow(/cut-pyramid\.ome\.tif/);
  });

  it("a TIFF without OME-XML, a missing file and a bad series are errors", async () => {
    const dir = await tempDir();
    const p = join(dir, "plain.tif");
    await writeFile(p, writeTestTiff([synthPage(0, 0, 4, 4)]));
    await expect(readOmeTiff(p)).rejects.toThrow(/no OME-XML/);
    await expect(readOmeTiff(join(dir, "nope.ome.tif"))).rejects.toThrow(/nope\.ome\.tif: cannot open/);
    await expect(
      readOmeTiff(fixture("sfe-toy/xenium/morphology_mip.ome.tif"), { series: 3 }),
    ).rejects.toThrow(/series 3 does not exist/);
    const garbage = join(dir, "garbage.ome.tif");
    await writeFile(garbage, new Uint8Array(64).fill(7));
    await expect(readOmeTiff(garbage)).rejects.toThrow(/garbage\.ome\.tif: not a readable TIFF/);
  });
});
