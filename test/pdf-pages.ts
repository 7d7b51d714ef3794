// Reading a PDF as its reader sees it: pdf.js draws a page on a canvas, jsQR finds its QR code.
import { createCanvas } from '@napi-rs/canvas';
import jsQR from 'jsqr';
import { getDocument, type PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

export async function openPdf(pdf: Buffer): Promise<PDFDocumentProxy> {
  return getDocument({ data: new Uint8Array(pdf), isEvalSupported: false }).promise;
}

/** Page 1 drawn by pdf.js at `scale` device pixels a point (2: 144 dpi), as RGBA. */
export async function pagePixels(doc: PDFDocumentProxy, scale = 2): Promise<{ data: Uint8ClampedArray; width: number; height: number }> {
  const page = await doc.getPage(1);
  const viewport = page.getViewport({ scale });
  const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  await page.render({ canvas: canvas as unknown as HTMLCanvasElement, canvasContext: ctx as unknown as CanvasRenderingContext2D, viewport }).promise;
  const { data, width, height } = ctx.getImageData(0, 0, canvas.width, canvas.height);
  return { data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width, height };
}

/**
 * What the QR code drawn on page 1 says, read at 288 dpi: a stamped QR (tags 1–9) has modules
 * of half a millimetre, which pdf.js's smoothing at 144 or 216 dpi can blur past what jsQR reads.
 */
export async function pageQr(pdf: Buffer): Promise<string | undefined> {
  const { data, width, height } = await pagePixels(await openPdf(pdf), 4);
  return jsQR(data, width, height)?.data;
}
