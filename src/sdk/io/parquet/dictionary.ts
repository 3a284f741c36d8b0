/**
 * The dictionary page of a column chunk: for a pandas categorical written by pyarrow it holds the
 * categories in their pandas order (unused categories included), which decoded values alone lose.
 */
import type { DecodedArray } from "hyparquet";
import { parquetHeader } from "hyparquet/src/column.js";
import { decompressPage } from "hyparquet/src/datapage.js";
import { readPlain } from "hyparquet/src/plain.js";
import { compressors } from "hyparquet-compressors";
import type { ParquetSource } from "./source.js";

const utf8 = new TextDecoder();

/**
 * Values of the dictionary page of `column` in each row group (`undefined` for a row group whose
 * chunk has no dictionary page). Byte arrays are decoded as UTF-8.
 */
export async function readDictionaries(
  src: ParquetSource,
  column: string,
): Promise<(unknown[] | undefined)[]> {
  const out: (unknown[] | undefined)[] = [];
  for (const rg of src.metadata.row_groups) {
    const chunk = rg.columns.find(
      (c) => c.meta_data?.path_in_schema.length === 1 && c.meta_data.path_in_schema[0] === column,
    );
    const md = chunk?.meta_data;
    if (!md || md.dictionary_page_offset === undefined) {
      out.push(undefined);
      continue;
    }
    const start = Number(md.dictionary_page_offset);
    const end = Number(md.data_page_offset);
    if (!(end > start)) {
      out.push(undefined);
      continue;
    }
    const buf = await src.file.slice(start, end);
    const reader = { view: new DataView(buf), offset: 0 };
    const header = parquetHeader(reader);
    if (header.type !== "DICTIONARY_PAGE" || !header.dictionary_page_header) {
      out.push(undefined);
      continue;
    }
    const compressed = new Uint8Array(buf, reader.offset, header.compressed_page_size);
    const page = decompressPage(compressed, Number(header.uncompressed_page_size), md.codec, compressors);
    const values: DecodedArray = readPlain(
      { view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 },
      md.type,
      header.dictionary_page_header.num_values,
      undefined,
    );
    out.push(Array.from(values as ArrayLike<unknown>, (v) => (v instanceof Uint8Array ? utf8.decode(v) : v)));
  }
  return out;
}
