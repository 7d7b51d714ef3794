// `diwan secrets rotate-key`: a new sealing key for the secrets kept at rest (webhook signing
// secrets, apps' secrets), added to the key file with the old ones kept, and every sealed secret re-sealed with
// it in one transaction. A running server reads the new ring the first time it meets a secret
// sealed with a key it has not loaded (core/host.ts), so no restart is needed.
//
// The key file is the user's, not the data folder's: by default ~/.config/diwan/secret-keys.json
// (kept out of the data folder so a copy of the database does not carry its keys), shared by
// every checkout and data folder this user runs unless DIWAN_KEY_FILE or DIWAN_SECRET_KEY names
// another. A rotation therefore rotates the key of all of them; the command says so.
import type { Lang } from '../../core/kernel/i18n/i18n.ts';
import { DiwanError } from '../../core/kernel/errors/diwan-error.ts';
import type { CommandGroup } from './command.ts';

const words: Record<Lang, { rotated: string; resealed: string; shared: string; own: string; backup: string }> = {
  en: {
    rotated: 'New sealing key {{keyId}} in {{file}} ({{count}} keys kept).',
    resealed: '{{count}} stored secret(s) of this data folder re-sealed with it.',
    shared:
      'This key file belongs to your user, not to this data folder: every Diwan checkout and data folder you run shares it (set DIWAN_KEY_FILE for a file of their own). The others keep opening their secrets with the older keys kept in it; run this command on each of them to re-seal theirs too.',
    own: 'The key file is the one DIWAN_KEY_FILE names.',
    backup: 'Keep a backup of the key file: without it the secrets cannot be read.',
  },
  ar: {
    rotated: 'مفتاح ختم جديد {{keyId}} في {{file}} (محفوظة {{count}} مفاتيح).',
    resealed: 'أُعيد ختم {{count}} من الأسرار المخزنة في مجلد البيانات هذا به.',
    shared:
      'ملف المفاتيح هذا لمستخدمك لا لمجلد البيانات هذا: تتشاركه كل نسخ ديوان ومجلدات البيانات التي تشغّلها (اضبط DIWAN_KEY_FILE ليكون لها ملف خاص). تظل الأخرى تفتح أسرارها بالمفاتيح الأقدم المحفوظة فيه؛ شغّل هذا الأمر على كل منها لإعادة ختم أسرارها أيضًا.',
    own: 'ملف المفاتيح هو الذي يسمّيه DIWAN_KEY_FILE.',
    backup: 'احتفظ بنسخة احتياطية من ملف المفاتيح: بدونه لا يمكن قراءة الأسرار.',
  },
};
const say = (lang: Lang, key: keyof (typeof words)['en'], params: Record<string, unknown> = {}) =>
  words[lang][key].replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k] ?? ''));

export const secrets: CommandGroup = {
  name: 'secrets',
  summary: 'The keys that seal secrets at rest',
  commands: [
    {
      name: 'rotate-key',
      summary:
        "Add a new sealing key (older keys kept, to open older copies) and re-seal this data folder's stored secrets with it. The key file is your user's " +
        '(DIWAN_KEY_FILE, default ~/.config/diwan/secret-keys.json), shared by every checkout and data folder you run',
      examples: ['diwan secrets rotate-key --json', 'DIWAN_KEY_FILE=~/diwan/keys.json diwan secrets rotate-key'],
      async run(ctx) {
        // Opened first: a data folder that is not there is refused before the key file changes.
        const services = await ctx.services();
        // Loaded here: every command module loads on every run, and these are not light.
        const { isEncrypted, loadSecretBox, rotate } = await import('../../core/kernel/secret-box.ts');
        const { resealSecrets } = await import('../../core/webhooks/endpoints.ts');
        const { resealAppSecrets } = await import('../../core/apps/secrets.ts');
        let rotated: ReturnType<typeof rotate>;
        try {
          rotated = rotate();
        } catch (e) {
          // No key file (keys set in DIWAN_SECRET_KEY, or none made yet): say so plainly.
          if (e instanceof Error && 'reason' in e) throw new DiwanError('CONFLICT', [{ reason: 'no_key_file', message: e.message }], { reason: e.message });
          throw e;
        }
        const { box } = loadSecretBox(process.env, { create: false });
        const resealed = await services.storage.db.transaction(
          async () => (await resealSecrets(services.storage.endpoints, box, isEncrypted)) + (await resealAppSecrets(services.storage.appSecrets, box)),
        );
        // The default file is per user; one DIWAN_KEY_FILE names may still be shared, but by choice.
        const sharedByUser = !process.env.DIWAN_KEY_FILE?.trim();
        const data = { keyId: rotated.keyId, keyFile: rotated.file, keyIds: rotated.keyIds, resealed, keyFileScope: sharedByUser ? 'user' : 'named' };
        const { lang } = ctx;
        return {
          data,
          text: [
            say(lang, 'rotated', { keyId: rotated.keyId, file: rotated.file, count: rotated.keyIds.length }),
            say(lang, 'resealed', { count: resealed }),
            say(lang, sharedByUser ? 'shared' : 'own'),
            say(lang, 'backup'),
          ].join('\n'),
        };
      },
    },
  ],
};
