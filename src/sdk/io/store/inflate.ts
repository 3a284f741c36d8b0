/**
 * Raw DEFLATE decompression for zip entries, picked by feature detection: `node:zlib` under Node (loaded with a
 * dynamic import so browser bundles never see it), `DecompressionStream("deflate-raw")` elsewhere.
 * @module
 */

type Inflater = (data: Uint8Array, maxOutput: number) => Promise<Uint8Array>;

let inflater: Promise<Inflater> | undefined;

/** Entries at least this big are inflated on libuv's thread pool instead of blocking the event loop. */
const ASYNC_THRESHOLD = 256 * 1024;

function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof p?.versions?.node === "string";
}

async function nodeInflater(): Promise<Inflater> {
  const zlib = await import(/* @vite-ignore */ "node:zlib");
  return async (data, maxOutput) => {
    // maxOutputLength guards against a corrupt entry (or a zip bomb) expanding far past its declared size.
    const opts = { maxOutputLength: Math.max(1, maxOutput) };
    const tooBig = (err: unknown) =>
      (err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE"
        ? new Error(`inflates past ${maxOutput} bytes, the size the zip directory declares`)
        : err;
    if (data.byteLength < ASYNC_THRESHOLD) {
      try {
        const out = zlib.inflateRawSync(data, opts);
        return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
      } catch (err) {
        throw tooBig(err);
      }
    }
    return new Promise<Uint8Array>((resolve, reject) => {
      zlib.inflateRaw(data, opts, (err, out) =>
        err ? reject(tooBig(err)) : resolve(new Uint8Array(out.buffer, out.byteOffset, out.byteLength)),
      );
    });
  };
}

function streamInflater(): Inflater {
  return async (data, maxOutput) => {
    const ds = new DecompressionStream("deflate-raw");
    const reader = new Blob([data as BlobPart]).stream().pipeThrough(ds).getReader();
    // Read chunk by chunk and stop past the declared size: a lying entry never inflates further.
    const parts: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxOutput) {
        await reader.cancel();
        throw new Error(`inflates past ${maxOutput} bytes, the size the zip directory declares`);
      }
      parts.push(value);
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  };
}

/**
 * The browser implementation (`DecompressionStream("deflate-raw")`), exported so it can be exercised anywhere the
 * API exists (Node 20 has it too). Same contract as {@link inflateRaw}.
 */
export async function inflateRawStream(data: Uint8Array, expectedSize: number): Promise<Uint8Array> {
  const out = await streamInflater()(data, expectedSize);
  if (out.byteLength !== expectedSize) {
    throw new Error(`inflated to ${out.byteLength} bytes, the zip directory says ${expectedSize}`);
  }
  return out;
}

/**
 * Inflate raw DEFLATE `data` whose uncompressed size is `expectedSize`.
 * Throws (plain Error from the backend) on corrupt data; the caller adds the file and entry name.
 */
export async function inflateRaw(data: Uint8Array, expectedSize: number): Promise<Uint8Array> {
  if (!inflater) {
    if (isNode()) inflater = nodeInflater();
    else if (typeof DecompressionStream === "function") inflater = Promise.resolve(streamInflater());
    else throw new Error("no DEFLATE decoder available (needs node:zlib or DecompressionStream)");
  }
  const out = await (await inflater)(data, expectedSize);
  if (out.byteLength !== expectedSize) {
    throw new Error(`inflated to ${out.byteLength} bytes, the zip directory says ${expectedSize}`);
  }
  return out;
}
