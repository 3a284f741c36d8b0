/**
 * How a vendor reader opened each of its images, as plain data. A reader run in a job worker (see
 * `off-thread.ts`) parses tables, shapes and points there, but its images are file-backed raster
 * sources that cannot cross a thread boundary (they hold open file handles and decoders); the worker
 * sends back each image's recipe instead, and the main thread reopens the image from it — opening is
 * a header read, the pixels are read by window later, so this costs the event loop next to nothing.
 */
import type { ImageElement, LabelsElement } from "../../data/elements.js";
import type { SpatialData } from "../../data/spatialdata.js";
import type { Transformation } from "../../data/transforms.js";
import { DataError } from "../data-error.js";
import { readOmeTiff } from "../tiff/read.js";
import { openLabelMask } from "./cosmx/labels.js";
import { readPictureImage } from "./raster-png.js";
import { readTiffPlanes } from "./raster-tiff.js";

/** What opens one image: an OME-TIFF, single-plane TIFFs as channels, or a PNG/JPEG. */
export type ImageRecipe =
  | { readonly opener: "ome-tiff"; readonly file: string }
  | {
      readonly opener: "tiff-planes";
      readonly files: readonly string[];
      readonly channels: readonly string[];
    }
  | { readonly opener: "picture"; readonly file: string }
  /** A label mask (labels element), read as int32 ids (`cosmx/labels.ts`). */
  | { readonly opener: "label-tiff"; readonly file: string };

/** Images' (and label masks') recipes by element name (what a reader run in a worker sends back beside its object). */
export type ImageRecipes = Record<string, ImageRecipe>;

/** Recipes of the objects vendor readers returned (see `rememberRecipes`). */
const remembered = new WeakMap<SpatialData, ImageRecipes>();

/**
 * Note how `sdata`'s images were opened: a reader operation returns only the object, and the worker
 * that ran it asks `recipesOf` afterwards.
 */
export function rememberRecipes(sdata: SpatialData, recipes: ImageRecipes | undefined): void {
  if (recipes && Object.keys(recipes).length) remembered.set(sdata, recipes);
}

/** The recipes noted for `sdata` (empty when none). */
export function recipesOf(sdata: SpatialData): ImageRecipes {
  return remembered.get(sdata) ?? {};
}

/**
 * Open the image a recipe describes as element `name`, placed by `transformations(axes)`, and note
 * the recipe in `recipes` (so the reader's result can say how to reopen it).
 */
export async function openImage(
  recipe: ImageRecipe,
  name: string,
  transformations: (axes: readonly string[]) => Record<string, Transformation>,
  recipes?: ImageRecipes,
): Promise<ImageElement> {
  let img: ImageElement;
  switch (recipe.opener) {
    case "label-tiff":
      throw new Error(`${recipe.file}: a label mask opens with openLabels, not as an image`);
    case "ome-tiff": {
      let opened: ImageElement;
      try {
        opened = await readOmeTiff(recipe.file, { name });
      } catch (err) {
        throw new DataError(`${recipe.file}: ${(err as Error).message}`, { cause: err });
      }
      img = { ...opened, transformations: transformations(opened.axes) };
      break;
    }
    case "tiff-planes":
      img = await readTiffPlanes(recipe.files, recipe.channels, name, transformations);
      break;
    case "picture":
      img = await readPictureImage(recipe.file, name, transformations);
      break;
  }
  if (recipes) recipes[name] = recipe;
  return img;
}

/** Open the label mask a recipe describes as labels element `name`, noting the recipe in `recipes`. */
export async function openLabels(
  recipe: Extract<ImageRecipe, { opener: "label-tiff" }>,
  name: string,
  transformations: (axes: readonly string[]) => Record<string, Transformation>,
  recipes?: ImageRecipes,
): Promise<LabelsElement> {
  const el = await openLabelMask(recipe.file, name, transformations);
  if (recipes) recipes[name] = recipe;
  return el;
}

/**
 * `sdata` with every image and label mask named in `recipes` reopened on this thread: the pixel levels
 * come from the reopened file, the name, channels and transformations stay as the reader made them.
 * Elements without a recipe are kept as they are.
 */
export async function reopenImages(sdata: SpatialData, recipes: ImageRecipes): Promise<SpatialData> {
  const names = Object.keys(sdata.images).filter((n) => recipes[n]);
  const labelNames = Object.keys(sdata.labels).filter((n) => recipes[n]?.opener === "label-tiff");
  if (names.length === 0 && labelNames.length === 0) return sdata;
  const images = { ...sdata.images };
  for (const name of names) {
    const was = images[name]!;
    const fresh = await openImage(recipes[name]!, name, () => was.transformations);
    images[name] = { ...was, levels: fresh.levels };
  }
  const labels = { ...sdata.labels };
  for (const name of labelNames) {
    const was = labels[name]!;
    const r = recipes[name] as Extract<ImageRecipe, { opener: "label-tiff" }>;
    const fresh = await openLabelMask(r.file, name, () => was.transformations);
    labels[name] = { ...was, levels: fresh.levels };
  }
  return { ...sdata, images, labels };
}
