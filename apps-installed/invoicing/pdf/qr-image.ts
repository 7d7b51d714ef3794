// The QR code as a PNG: ZATCA's TLV text in byte mode, error correction M, with the standard
// four-module quiet zone. Four pixels a module keep its edges sharp in viewers that smooth
// images (eight cost four times the encoding for no gain a scanner sees).
import QRCode from 'qrcode';

export function qrPng(text: string): Promise<Buffer> {
  return QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 4, scale: 4 });
}
