// A line's order on the page by the Unicode Bidirectional Algorithm (bidi-js): the runs of one
// direction, left to right, each as PDFKit must be given it. PDFKit shapes through fontkit,
// which reverses a run of a right-to-left script by itself and knows nothing of the line around
// it (nor of mirrored brackets), so each run is fed in the order that comes out visual.
import bidiFactory from 'bidi-js';

const bidi = bidiFactory();

/** The scripts fontkit lays out right to left (its `Script.direction`). */
const RTL_SCRIPT = new RegExp(
  ['Arabic', 'Hebrew', 'Syriac', 'Thaana', 'Cypriot', 'Kharoshthi', 'Phoenician', 'Nko', 'Lydian', 'Avestan', 'Imperial_Aramaic',
    'Inscriptional_Pahlavi', 'Inscriptional_Parthian', 'Old_South_Arabian', 'Old_Turkic', 'Samaritan', 'Mandaic', 'Meroitic_Cursive',
    'Meroitic_Hieroglyphs', 'Manichaean', 'Mende_Kikakui', 'Nabataean', 'Old_North_Arabian', 'Palmyrene', 'Psalter_Pahlavi']
    .map((s) => `\\p{Script=${s}}`).join('|'),
  'u',
);
const NEUTRAL_SCRIPT = /\p{Script=Common}|\p{Script=Inherited}|\p{Script=Unknown}/u;

/** Whether a text has a right-to-left letter (bidi class R or AL). */
export function hasRtl(text: string): boolean {
  for (const ch of text) {
    const type = bidi.getBidiCharTypeName(ch);
    if (type === 'R' || type === 'AL') return true;
  }
  return false;
}

/** Whether fontkit will reverse the glyphs of `text`: it goes by the first character of a script of its own. */
function fontkitReverses(text: string): boolean {
  for (const ch of text) if (!NEUTRAL_SCRIPT.test(ch)) return RTL_SCRIPT.test(ch);
  return false;
}

/** A run as PDFKit must be given it, so that what fontkit lays out comes out in visual order. */
export interface VisualRun {
  feed: string;
  /** The run's bidi embedding level (odd: right to left). */
  level: number;
  /** fontkit reverses this run's glyphs (their ToUnicode order then needs care). */
  reversed: boolean;
}

/** The runs of one line, left to right on the page, and the line's own (paragraph) level. */
export function visualRuns(line: string): { runs: VisualRun[]; base: number } {
  const levels = bidi.getEmbeddingLevels(line);
  const mirrored = bidi.getMirroredCharactersMap(line, levels.levels);
  const order = bidi.getReorderedIndices(line, levels);
  const runs: VisualRun[] = [];
  let group: number[] = [];
  const flush = () => {
    if (!group.length) return;
    const odd = (levels.levels[group[0]] & 1) === 1;
    // The run's characters in logical order; an RTL run's brackets mirrored, as UBA L4 says.
    const indices = [...group].sort((a, b) => a - b);
    const logical = indices.map((i) => mirrored.get(i) ?? line[i]).join('');
    const reversed = fontkitReverses(logical);
    runs.push({ feed: reversed === odd ? logical : [...logical].reverse().join(''), level: levels.levels[group[0]], reversed });
    group = [];
  };
  for (const i of order) {
    const prev = group[group.length - 1];
    if (prev !== undefined && (levels.levels[prev] !== levels.levels[i] || Math.abs(prev - i) !== 1)) flush();
    group.push(i);
  }
  flush();
  return { runs, base: levels.paragraphs[0]?.level ?? 0 };
}

/** The paragraph direction a text takes by its first strong character, for aligning it. */
export const isRtl = (text: string): boolean => bidi.getEmbeddingLevels(text).paragraphs[0]?.level === 1;
