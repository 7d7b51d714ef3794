// An app's mark on the launcher, in menus and in the palette: the manifest's `icon` when it
// gives one, else a monogram of the app's name in the page's language on a colour drawn from
// the app's id (the same app keeps its colour in every company and language).
import type { AppInfo } from './types.ts';

/** A hue from the id; saturation and lightness fixed so white text keeps at least 5.3:1 on every hue (axe asks 4.5). */
function hueOf(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) % 360;
  return h;
}

/** One letter for Arabic (its letters join, two would read as a word), else up to two initials. */
export function monogram(name: string): string {
  const words = name.replace(/[^\p{L}\p{N}\s]/gu, ' ').trim().split(/\s+/).filter(Boolean);
  if (!words.length) return '?';
  if (/\p{Script=Arabic}/u.test(words[0])) {
    // The article ال is not the word's letter (الموظفون is known by its م), and a lone alef
    // reads as a stroke: إدارة علاقات العملاء is known by its ع.
    const letter = (w: string) => (w.length > 3 && w.startsWith('ال') ? w[2] : w[0]);
    const first = letter(words[0]);
    return /[اأإآ]/.test(first) && words[1] ? letter(words[1]) : first;
  }
  // An acronym keeps its capitals (CRM → CR); two words give their initials, skipping small
  // ones (Point of Sale → PS); one word its first two letters (Invoicing → In).
  if (words.length === 1 && words[0].length > 1 && words[0] === words[0].toUpperCase()) return words[0].slice(0, 2);
  const big = words.filter((w) => w.length > 2);
  if (big.length > 1) return (big[0][0] + big[1][0]).toUpperCase();
  const w = big[0] ?? words[0];
  return w[0].toUpperCase() + w.slice(1, 2).toLowerCase();
}

export function AppMark({ app, size = 'md' }: { app: Pick<AppInfo, 'id' | 'name' | 'icon'>; size?: 'sm' | 'md' | 'lg' }) {
  return (
    <span class={`app-mark app-mark-${size}`} style={{ background: `hsl(${hueOf(app.id)} 55% 28%)` }} aria-hidden="true">
      {app.icon ?? monogram(app.name)}
    </span>
  );
}
