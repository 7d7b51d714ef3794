/** A small element tree rendered as indented XML: enough for a document built from data. */

export type XmlChild = XmlElement | null | undefined | false;

export interface XmlElement {
  name: string;
  attrs?: Record<string, string | undefined>;
  text?: string;
  children?: XmlChild[];
}

/** An element with text, or with children (falsy children are left out). */
export function el(name: string, content: string | XmlChild[], attrs?: Record<string, string | undefined>): XmlElement {
  return typeof content === 'string' ? { name, attrs, text: content } : { name, attrs, children: content };
}

export function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
}

export function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;').replace(/\t/g, '&#x9;').replace(/\n/g, '&#xA;');
}

export function render(node: XmlElement, indent = '', step = '    '): string {
  const attrs = Object.entries(node.attrs ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${escapeAttr(v as string)}"`)
    .join('');
  if (node.text !== undefined) return `${indent}<${node.name}${attrs}>${escapeText(node.text)}</${node.name}>`;
  const kids = (node.children ?? []).filter((c): c is XmlElement => !!c);
  if (kids.length === 0) return `${indent}<${node.name}${attrs}/>`;
  const inner = kids.map((c) => render(c, indent + step, step)).join('\n');
  return `${indent}<${node.name}${attrs}>\n${inner}\n${indent}</${node.name}>`;
}
