/**
 * Formats a user may hand to the generic reader that Tessera knows by name but does not read: each
 * is refused before anything is opened, with what the file is and what to do instead, rather than a
 * zarr or zip error about a store it never was.
 */

/** A file type recognised by its name, with the advice given for it. */
interface KnownFormat {
  /** Matches the file name (case-insensitive). */
  readonly pattern: RegExp;
  /** What the file is. */
  readonly what: string;
  /** What to do instead. */
  readonly instead: string;
}

const KNOWN: readonly KnownFormat[] = [
  {
    pattern: /\.loom$/i,
    what: "a loom file",
    instead: "convert it to .h5ad (anndata.read_loom(...).write_h5ad(...))",
  },
  {
    pattern: /\.(rds|rdata|rda|h5seurat)$/i,
    what: "an R object (Seurat/SingleCellExperiment)",
    instead: "export it to .h5ad (e.g. SeuratDisk or zellkonverter) and open that",
  },
  {
    pattern: /\.h5mu$/i,
    what: "a MuData HDF5 file",
    instead: "write it as zarr (mudata.write_zarr) and open the .zarr folder",
  },
  {
    pattern: /\.mtx(\.gz)?$/i,
    what: "a Matrix Market file on its own",
    instead: "open the folder holding matrix.mtx(.gz), barcodes and features (io.read_10x_mtx)",
  },
  {
    pattern: /\.(csv|tsv|txt)(\.gz)?$/i,
    what: "a delimited text table",
    instead: "read it into AnnData and save as .h5ad, or open the instrument's output folder (io.* readers)",
  },
  {
    pattern: /\.(gef|gem)(\.gz)?$/i,
    what: "a Stereo-seq file",
    instead: "convert it with stereopy to .h5ad and open that",
  },
  {
    pattern: /\.(svs|ndpi|mrxs|czi|lif|nd2|vsi|qptiff)$/i,
    what: "a vendor microscopy image",
    instead: "convert it to OME-TIFF or OME-Zarr (bioformats2raw, QuPath) and open that",
  },
];

/**
 * The message for a file of a known format the generic reader does not read, or null when its name
 * says nothing (the readers then look at its contents).
 */
export function unsupportedFormatMessage(location: string): string | null {
  const name = location.split(/[\\/]/).pop() ?? location;
  const known = KNOWN.find((k) => k.pattern.test(name));
  return known ? `${location}: ${known.what}, which Tessera does not read: ${known.instead}` : null;
}
