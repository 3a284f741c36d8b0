import { describe, expect, it } from "vitest";
import { parseOmeXml, planeIndex, planeLocations } from "../../../../src/sdk/io/tiff/omexml.js";
import { parseXml } from "../../../../src/sdk/io/tiff/xml.js";

describe("minimal XML reader", () => {
  it("reads elements, attributes, entities, CDATA, comments and prefixes", () => {
    const root = parseXml(
      `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><!-- c --><ns:Root a='1' b="x &amp; &#65;&#x42;"><Child/><Child n="2">t<![CDATA[<raw>]]>u</Child></ns:Root>`,
    );
    expect(root.name).toBe("Root");
    expect(root.attrs).toEqual({ a: "1", b: "x & AB" });
    expect(root.children.map((c) => c.name)).toEqual(["Child", "Child"]);
    expect(root.children[1]!.text).toBe("t<raw>u");
  });

  it("rejects malformed XML with the offset", () => {
    expect(() => parseXml("<a><b></a>", "f.xml")).toThrow(
      /f\.xml: malformed XML at offset \d+: end tag <\/a> does not match <b>/,
    );
    expect(() => parseXml("<a>", "f.xml")).toThrow(/<a> is never closed/);
    expect(() => parseXml("no xml", "f.xml")).toThrow(/no XML element/);
  });
});

describe("OME-XML planes", () => {
  const xml = (order: string, tiffData = "") =>
    `<OME><Image ID="Image:0"><Pixels DimensionOrder="${order}" SizeX="4" SizeY="3" SizeZ="2" SizeC="3" SizeT="1" Type="uint8"><Channel Name="a"/><Channel Name="b"/><Channel Name="c"/>${tiffData}</Pixels></Image></OME>`;

  it("orders planes by DimensionOrder", () => {
    const zct = parseOmeXml(xml("XYZCT"), "t").images[0]!.pixels;
    expect(planeIndex(zct, 1, 1, 0)).toBe(3); // z fastest
    const czt = parseOmeXml(xml("XYCZT"), "t").images[0]!.pixels;
    expect(planeIndex(czt, 1, 1, 0)).toBe(4); // c fastest
    expect(planeLocations(czt, "t").map((p) => p.ifd)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("maps TiffData blocks (IFD, PlaneCount, UUID FileName)", () => {
    const td =
      '<TiffData IFD="10" PlaneCount="3"/><TiffData FirstZ="1" IFD="0" PlaneCount="3"><UUID FileName="other.tif">urn:uuid:x</UUID></TiffData>';
    const px = parseOmeXml(xml("XYCZT", td), "t").images[0]!.pixels;
    expect(px.channels.map((c) => c.name)).toEqual(["a", "b", "c"]);
    expect(planeLocations(px, "t")).toEqual([
      { ifd: 10 },
      { ifd: 11 },
      { ifd: 12 },
      { fileName: "other.tif", ifd: 0 },
      { fileName: "other.tif", ifd: 1 },
      { fileName: "other.tif", ifd: 2 },
    ]);
    const gap = parseOmeXml(xml("XYCZT", '<TiffData IFD="0" PlaneCount="2"/>'), "t").images[0]!.pixels;
    expect(() => planeLocations(gap, "t")).toThrow(/plane 2 of 6/);
  });

  it("rejects non-OME documents and bad sizes", () => {
    expect(() => parseOmeXml("<svg/>", "t")).toThrow(/not OME-XML/);
    expect(() => parseOmeXml('<OME><Image><Pixels SizeX="-1" SizeY="2"/></Image></OME>', "t")).toThrow(
      /SizeX/,
    );
    expect(() =>
      parseOmeXml('<OME><Image><Pixels DimensionOrder="XYZZT" SizeX="1" SizeY="2"/></Image></OME>', "t"),
    ).toThrow(/DimensionOrder/);
  });
});
