/** The LZF decoder that replaces the LZF plugin's (streams built by hand from the format's two run kinds). */
import { describe, expect, it } from "vitest";
import { LZF_INVALID, LZF_TOO_SMALL, lzfDecode } from "../../../../src/sdk/io/h5/lzf.js";

const bytes = (...xs: (number | string)[]) =>
  Uint8Array.from(xs.flatMap((x) => (typeof x === "string" ? [...Buffer.from(x)] : [x])));
const text = (u: Uint8Array) => Buffer.from(u).toString("latin1");

describe("lzfDecode", () => {
  it("copies a literal run and an overlapping back reference", () => {
    // literal "abc" (ctrl 2 = 3 bytes), then 6 bytes from 3 back (len 6 - 2 = 4 → ctrl 4 << 5, offset 2)
    const src = bytes(0x02, "abc", 0x80, 0x02);
    expect(lzfDecode(src, null)).toBe(9);
    const out = new Uint8Array(9);
    expect(lzfDecode(src, out)).toBe(9);
    expect(text(out)).toBe("abcabcabc");
  });

  it("reads the extra length byte of long back references", () => {
    // "a", then 264 (7 + 255 + 2) and 35 (7 + 26 + 2) bytes from 1 back: 300 × "a"
    const src = bytes(0x00, "a", 0xe0, 255, 0x00, 0xe0, 26, 0x00);
    const out = new Uint8Array(lzfDecode(src, null));
    expect(out.length).toBe(300);
    expect(lzfDecode(src, out)).toBe(300);
    expect(text(out)).toBe("a".repeat(300));
  });

  it("reports an output buffer that is too small instead of writing past it", () => {
    expect(lzfDecode(bytes(0x02, "abc", 0x80, 0x02), new Uint8Array(8))).toBe(LZF_TOO_SMALL);
    expect(lzfDecode(bytes(0x02, "abc"), new Uint8Array(2))).toBe(LZF_TOO_SMALL);
  });

  it("rejects truncated streams and references before the start", () => {
    expect(lzfDecode(bytes(0x05, "abc"), null)).toBe(LZF_INVALID);
    expect(lzfDecode(bytes(0x00, "a", 0xe0), null)).toBe(LZF_INVALID);
    expect(lzfDecode(bytes(0x00, "a", 0x20), null)).toBe(LZF_INVALID);
    expect(lzfDecode(bytes(0x00, "a", 0x20, 0x05), null)).toBe(LZF_INVALID);
  });

  it("decodes an empty stream to nothing", () => {
    expect(lzfDecode(new Uint8Array(0), new Uint8Array(0))).toBe(0);
  });
});
