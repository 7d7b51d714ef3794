/**
 * ZATCA's QR payload: TLV (1-byte tag, 1-byte length, value) in base64.
 * Tags 1–5 are text (seller, VAT number, time stamp, total with VAT, VAT total); once the document
 * is stamped, 6 and 7 are the invoice hash and the ECDSA signature as their base64 text, 8 the
 * public key (DER SubjectPublicKeyInfo) and 9, for simplified invoices, the signature of the
 * certificate by ZATCA's CA (DER), as the SDK writes them.
 */

export interface QrFields {
  sellerName: string;
  vatNumber: string;
  /** ISO 8601 date and time of issue, e.g. "2022-09-07T12:21:28". */
  timestamp: string;
  /** Total with VAT, as written in the XML ("4.60"). */
  total: string;
  /** VAT total, as written in the XML ("0.60"). */
  vatTotal: string;
  /** Base64 invoice hash. */
  hash?: string;
  /** Base64 ECDSA signature of the hash. */
  signature?: string;
  publicKey?: Uint8Array;
  certificateSignature?: Uint8Array;
}

const TEXT_TAGS = ['sellerName', 'vatNumber', 'timestamp', 'total', 'vatTotal', 'hash', 'signature'] as const;

export function qr(fields: QrFields): string {
  const values: (Uint8Array | undefined)[] = [
    ...TEXT_TAGS.map((k) => (fields[k] === undefined ? undefined : Buffer.from(fields[k] as string, 'utf8'))),
    fields.publicKey,
    fields.certificateSignature,
  ];
  const parts: Buffer[] = [];
  values.forEach((value, i) => {
    if (!value) return;
    if (value.length > 255) throw new RangeError(`QR tag ${i + 1} is ${value.length} bytes; a TLV value holds at most 255`);
    parts.push(Buffer.from([i + 1, value.length]), Buffer.from(value));
  });
  return Buffer.concat(parts).toString('base64');
}

export function parseQr(base64: string): QrFields {
  const bytes = Buffer.from(base64, 'base64');
  const raw = new Map<number, Buffer>();
  for (let i = 0; i < bytes.length; ) {
    const tag = bytes[i];
    const len = bytes[i + 1];
    if (len === undefined || i + 2 + len > bytes.length) throw new Error(`QR TLV is truncated at byte ${i}`);
    raw.set(tag, bytes.subarray(i + 2, i + 2 + len));
    i += 2 + len;
  }
  const text = (tag: number) => raw.get(tag)?.toString('utf8');
  const fields: QrFields = {
    sellerName: text(1) ?? '',
    vatNumber: text(2) ?? '',
    timestamp: text(3) ?? '',
    total: text(4) ?? '',
    vatTotal: text(5) ?? '',
  };
  if (raw.has(6)) fields.hash = text(6);
  if (raw.has(7)) fields.signature = text(7);
  if (raw.has(8)) fields.publicKey = new Uint8Array(raw.get(8)!);
  if (raw.has(9)) fields.certificateSignature = new Uint8Array(raw.get(9)!);
  return fields;
}
