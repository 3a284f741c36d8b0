/**
 * A minimal XML reader, enough for OME-XML: elements, attributes, text, comments, CDATA, processing
 * instructions, a DOCTYPE, and the predefined and numeric entities. Namespace prefixes are stripped
 * from names (`OME:Pixels` → `Pixels`). Node has no DOMParser, and OME-XML needs nothing more.
 */

/** One element: local name, attributes (prefix stripped), child elements and concatenated text. */
export interface XmlElement {
  readonly name: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: readonly XmlElement[];
  readonly text: string;
}

interface MutableElement {
  name: string;
  attrs: Record<string, string>;
  children: MutableElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** Replace entity references (`&amp;`, `&#38;`, `&#x26;`). */
export function decodeEntities(s: string): string {
  if (!s.includes("&")) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z]+);/g, (m, e: string) => {
    if (e[0] === "#") {
      const code = e[1] === "x" ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return Number.isFinite(code) ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e] ?? m;
  });
}

function localName(qname: string): string {
  const i = qname.indexOf(":");
  return i < 0 ? qname : qname.slice(i + 1);
}

const NAME_RE = /[^\s/>=]+/y;
const ATTR_RE = /\s*([^\s/>=]+)\s*=\s*("([^"]*)"|'([^']*)')/y;

/** Parse an XML document and return its root element; throws with the offset on malformed input. */
export function parseXml(src: string, where = "XML"): XmlElement {
  const stack: MutableElement[] = [];
  let root: MutableElement | undefined;
  let i = 0;
  const fail = (msg: string): never => {
    throw new Error(`${where}: malformed XML at offset ${i}: ${msg}`);
  };
  while (i < src.length) {
    const lt = src.indexOf("<", i);
    const textEnd = lt < 0 ? src.length : lt;
    if (textEnd > i && stack.length) stack[stack.length - 1]!.text += decodeEntities(src.slice(i, textEnd));
    if (lt < 0) break;
    i = lt;
    if (src.startsWith("<!--", i)) {
      const end = src.indexOf("-->", i + 4);
      if (end < 0) fail("unterminated comment");
      i = end + 3;
    } else if (src.startsWith("<![CDATA[", i)) {
      const end = src.indexOf("]]>", i + 9);
      if (end < 0) fail("unterminated CDATA");
      if (stack.length) stack[stack.length - 1]!.text += src.slice(i + 9, end);
      i = end + 3;
    } else if (src.startsWith("<?", i)) {
      const end = src.indexOf("?>", i + 2);
      if (end < 0) fail("unterminated processing instruction");
      i = end + 2;
    } else if (src.startsWith("<!", i)) {
      // DOCTYPE (possibly with an internal subset in brackets).
      let depth = 0;
      let j = i + 2;
      for (; j < src.length; j++) {
        const ch = src[j];
        if (ch === "[") depth++;
        else if (ch === "]") depth--;
        else if (ch === ">" && depth <= 0) break;
      }
      if (j >= src.length) fail("unterminated declaration");
      i = j + 1;
    } else if (src.startsWith("</", i)) {
      const end = src.indexOf(">", i);
      if (end < 0) fail("unterminated end tag");
      const name = localName(src.slice(i + 2, end).trim());
      const open = stack.pop();
      if (!open || open.name !== name) fail(`end tag </${name}> does not match <${open?.name ?? "nothing"}>`);
      i = end + 1;
    } else {
      NAME_RE.lastIndex = i + 1;
      const m = NAME_RE.exec(src);
      if (!m) fail("element without a name");
      const el: MutableElement = { name: localName(m![0]), attrs: {}, children: [], text: "" };
      let j = NAME_RE.lastIndex;
      for (;;) {
        ATTR_RE.lastIndex = j;
        const a = ATTR_RE.exec(src);
        if (!a) break;
        el.attrs[localName(a[1]!)] = decodeEntities(a[3] ?? a[4] ?? "");
        j = ATTR_RE.lastIndex;
      }
      while (j < src.length && /\s/.test(src[j]!)) j++;
      let selfClosing = false;
      if (src.startsWith("/>", j)) {
        selfClosing = true;
        j += 2;
      } else if (src[j] === ">") {
        j += 1;
      } else {
        i = j;
        fail(`unexpected character ${JSON.stringify(src[j] ?? "end of input")} in <${el.name}>`);
      }
      if (stack.length) stack[stack.length - 1]!.children.push(el);
      else if (root) fail("more than one root element");
      else root = el;
      if (!selfClosing) stack.push(el);
      i = j;
    }
  }
  if (stack.length)
    throw new Error(`${where}: malformed XML: <${stack[stack.length - 1]!.name}> is never closed`);
  if (!root) throw new Error(`${where}: no XML element found`);
  return root;
}

/** Child elements named `name`. */
export function childrenNamed(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c) => c.name === name);
}

/** First child element named `name`. */
export function childNamed(el: XmlElement, name: string): XmlElement | undefined {
  return el.children.find((c) => c.name === name);
}
