// @ts-check
/**
 * A picture of a target page, taken by the page itself inside its sandbox (protocol 1.8, `snapshot`):
 * what the page gives (`SplitBrain.onSnapshot`) or its largest canvas, drawn onto a canvas scaled to
 * fit MAX_PICTURE_SIDE pixels a side and MAX_PICTURE_BYTES of PNG. Never the notebook page: the frame
 * sees only its own document.
 */
import { MAX_PICTURE_BASE64, MAX_PICTURE_SIDE } from "../protocol.js";

/** How much smaller each try is when a PNG is over MAX_PICTURE_BYTES. */
const SHRINK = 0.7;
const MAX_TRIES = 6;

/**
 * The page's largest canvas with pixels (by its area on screen, then by its pixels), or null.
 * @param {Document} doc
 * @returns {HTMLCanvasElement | null}
 */
export function largestCanvas(doc) {
  /** @type {HTMLCanvasElement | null} */
  let best = null;
  let bestArea = 0;
  for (const canvas of Array.from(doc.querySelectorAll("canvas"))) {
    if (canvas.width === 0 || canvas.height === 0) continue;
    const box = canvas.getBoundingClientRect();
    const area = box.width * box.height || (canvas.width * canvas.height) / 1e6;
    if (area > bestArea) {
      best = canvas;
      bestArea = area;
    }
  }
  return best;
}

/**
 * The width and height of what drawImage takes, in its own pixels.
 * @param {CanvasImageSource} source
 * @returns {[number, number]}
 */
function sizeOf(source) {
  const s = /** @type {any} */ (source);
  const width = s.naturalWidth ?? s.videoWidth ?? s.width;
  const height = s.naturalHeight ?? s.videoHeight ?? s.height;
  const w = typeof width === "object" ? width.baseVal.value : width;
  const h = typeof height === "object" ? height.baseVal.value : height;
  return [Number(w) || 0, Number(h) || 0];
}

/**
 * Draw `source` scaled to fit and encode it as a PNG within the bounds.
 * @param {CanvasImageSource} source  a canvas (most pages), an image, a video frame, an ImageBitmap
 * @param {Document} doc
 * @returns {{png: string, width: number, height: number}}
 */
export function pictureOf(source, doc) {
  const [w, h] = sizeOf(source);
  if (!(w > 0 && h > 0)) throw new Error("the page's picture has no pixels (a canvas of size 0?)");
  let scale = Math.min(1, MAX_PICTURE_SIDE / w, MAX_PICTURE_SIDE / h);
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    const width = Math.max(1, Math.round(w * scale));
    const height = Math.max(1, Math.round(h * scale));
    const canvas = doc.createElement("canvas");
    canvas.width = width;
    canvas.height = height;
    const ctx = canvas.getContext("2d");
    if (!ctx) throw new Error("no 2D canvas context to draw the picture on");
    ctx.drawImage(source, 0, 0, width, height);
    const url = canvas.toDataURL("image/png");
    const png = url.slice(url.indexOf(",") + 1);
    if (png.length <= MAX_PICTURE_BASE64) return { png, width, height };
    scale *= SHRINK;
  }
  throw new Error("the page's picture is too large as a PNG even when scaled down");
}

/**
 * The page's picture: from its handler when it registered one (a canvas, an image or an ImageBitmap,
 * or a promise of one), else its largest canvas.
 * @param {(() => unknown) | null} handler
 * @param {Document} doc
 * @returns {Promise<{png: string, width: number, height: number}>}
 */
export async function takePicture(handler, doc) {
  const given = handler ? await handler() : largestCanvas(doc);
  if (given == null) {
    throw new Error(
      "the page draws no canvas to take a picture of; a page can give one with SplitBrain.onSnapshot(() => element)",
    );
  }
  return pictureOf(/** @type {CanvasImageSource} */ (given), doc);
}
