/**
 * MERSCOPE's micron → mosaic-pixel transform: `images/micron_to_mosaic_pixel_transform.csv` (a 3 × 3
 * affine, space- or comma-separated) when present, else derived from `images/manifest.json`: the
 * mosaic's pixels span `bbox_microns`, so pixel = (micron − bbox_min) · size / extent (on instrument
 * output this equals 1 / `microns_per_pixel`; on a resampled mosaic it still lands cells on it).
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DataError } from "../../data-error.js";

/** The manifest fields the reader uses. */
export interface MosaicManifest {
  readonly microns_per_pixel: number;
  readonly mosaic_width_pixels: number;
  readonly mosaic_height_pixels: number;
  readonly bbox_microns: readonly [number, number, number, number];
  readonly mosaic_files: readonly { stain: string; z: number; file_name: string }[];
}

/** Read and check `images/manifest.json`. */
export async function readManifest(file: string): Promise<MosaicManifest> {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new DataError(`${file}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  const bbox = json.bbox_microns;
  if (!Array.isArray(bbox) || bbox.length !== 4 || bbox.some((v) => typeof v !== "number"))
    throw new DataError(`${file}: "bbox_microns" must be four numbers`);
  for (const k of ["mosaic_width_pixels", "mosaic_height_pixels"])
    if (typeof json[k] !== "number" || !((json[k] as number) > 0))
      throw new DataError(`${file}: "${k}" must be a positive number`);
  if (!Array.isArray(json.mosaic_files)) throw new DataError(`${file}: "mosaic_files" must be a list`);
  for (const [i, f] of (json.mosaic_files as unknown[]).entries()) {
    const o = f as Record<string, unknown>;
    if (
      typeof o?.stain !== "string" ||
      typeof o.z !== "number" ||
      typeof o.file_name !== "string" ||
      /[\\/]/.test(o.file_name)
    )
      throw new DataError(`${file}: mosaic_files[${i}] needs stain, z and a plain file_name`);
  }
  return json as unknown as MosaicManifest;
}

/** The micron → pixel affine `[[a, b, tx], [c, d, ty]]` and where it came from. */
export async function micronToPixel(
  imagesDir: string,
  manifest: MosaicManifest | null,
  transformationFile?: string | null,
): Promise<{ m: number[][]; from: string }> {
  const file = transformationFile ?? join(imagesDir, "micron_to_mosaic_pixel_transform.csv");
  if (existsSync(file)) {
    const rows = (await readFile(file, "utf8"))
      .trim()
      .split(/\r?\n/)
      .map((l) =>
        l
          .trim()
          .split(/[\s,]+/)
          .map(Number),
      );
    if (rows.length < 2 || rows.slice(0, 2).some((r) => r.length !== 3 || r.some((v) => !Number.isFinite(v))))
      throw new DataError(`${file}: expected a 3 × 3 matrix of numbers`);
    return { m: [rows[0]!, rows[1]!], from: file };
  }
  if (!manifest)
    throw new DataError(`${imagesDir}: neither micron_to_mosaic_pixel_transform.csv nor manifest.json`);
  const [x0, y0, x1, y1] = manifest.bbox_microns;
  const sx = manifest.mosaic_width_pixels / (x1 - x0);
  const sy = manifest.mosaic_height_pixels / (y1 - y0);
  return {
    m: [
      [sx, 0, -x0 * sx],
      [0, sy, -y0 * sy],
    ],
    from: `${imagesDir}/manifest.json (bbox_microns and mosaic size)`,
  };
}

/** Inverse of a 2-D affine `[[a, b, tx], [c, d, ty]]`. */
export function invertAffine2(m: readonly (readonly number[])[]): number[][] {
  const [a, b, tx] = m[0]!;
  const [c, d, ty] = m[1]!;
  const det = a! * d! - b! * c!;
  if (!det) throw new DataError("the micron → pixel transform is singular");
  const ia = d! / det;
  const ib = -b! / det;
  const ic = -c! / det;
  const id = a! / det;
  return [
    [ia, ib, -(ia * tx! + ib * ty!)],
    [ic, id, -(ic * tx! + id * ty!)],
  ];
}
