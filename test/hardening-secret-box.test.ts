// core/kernel/secret-box.ts: AES-256-GCM for short secrets, a versioned self-describing format,
// a key ring that rotates, keys from DIWAN_SECRET_KEY or a 0600 key file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeKey, defaultKeyFile, generateKey, isEncrypted, keyIdOf, loadSecretBox, rotate, SecretBox, SecretBoxError } from '../core/kernel/secret-box.ts';

const failure = (fn: () => unknown): SecretBoxError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SecretBoxError);
    return err as SecretBoxError;
  }
  throw new Error('expected a SecretBoxError');
};

/** Flips one bit of one base64url part of a sealed value. */
const flip = (sealed: string, part: number): string => {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[part], 'base64url');
  bytes[0] ^= 1;
  parts[part] = bytes.toString('base64url');
  return parts.join('.');
};

describe('SecretBox', () => {
  const box = new SecretBox([generateKey()]);

  it('round-trips secrets in the v1.<keyId>.<iv>.<tag>.<ct> format, with a fresh IV each time', () => {
    for (const secret of ['whsec_0123456789abcdef', '', 'سر مشترك', 'x'.repeat(4096)]) {
      const sealed = box.encrypt(secret);
      expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/);
      expect(sealed.split('.')[1]).toBe(box.currentKeyId);
      expect(sealed).not.toContain(Buffer.from(secret).toString('base64url') || '\0');
      expect(box.decrypt(sealed)).toBe(secret);
      expect(isEncrypted(sealed)).toBe(true);
    }
    expect(box.encrypt('same')).not.toBe(box.encrypt('same'));
    expect(isEncrypted('whsec_plain')).toBe(false);
  });

  it('detects any change: ciphertext, tag, IV, key id, version or context', () => {
    const sealed = box.encrypt('whsec_secret', 'wh_1');
    expect(box.decrypt(sealed, 'wh_1')).toBe('whsec_secret');
    for (const part of [2, 3, 4]) expect(failure(() => box.decrypt(flip(sealed, part), 'wh_1')).reason).toBe('tampered');
    expect(failure(() => box.decrypt(sealed, 'wh_2')).reason, 'moved to another row').toBe('tampered');
    expect(failure(() => box.decrypt(sealed)).reason).toBe('tampered');
    const truncated = sealed.slice(0, -2);
    expect(['tampered', 'format']).toContain(failure(() => box.decrypt(truncated, 'wh_1')).reason);
    expect(failure(() => box.decrypt(sealed.replace(/^v1\./, 'v2.'), 'wh_1')).reason).toBe('version');
    for (const bad of ['', 'whsec_plain', 'v1.a.b.c', 'v1..AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AA', 'v1.k.!!!.x.y']) {
      expect(failure(() => box.decrypt(bad)).reason, bad).toBe('format');
    }
  });

  it('fails clearly with a key it does not hold, and the same key id cannot hide another key', () => {
    const other = new SecretBox([generateKey()]);
    const sealed = box.encrypt('whsec_secret');
    const err = failure(() => other.decrypt(sealed));
    expect(err.reason).toBe('unknown_key');
    expect(err.message).toContain(box.currentKeyId);
    // Relabelled with the other box's key id: its key does not authenticate it.
    const relabelled = sealed.replace(`.${box.currentKeyId}.`, `.${other.currentKeyId}.`);
    expect(failure(() => other.decrypt(relabelled)).reason).toBe('tampered');
  });

  it('rotates: the new current key encrypts, older keys still decrypt', () => {
    const oldKey = generateKey();
    const newKey = generateKey();
    const before = new SecretBox([oldKey]);
    const sealedOld = before.encrypt('old secret');
    const after = new SecretBox([newKey, oldKey]);
    expect(after.currentKeyId).toBe(keyIdOf(newKey));
    expect(after.decrypt(sealedOld)).toBe('old secret');
    expect(after.needsReencrypt(sealedOld)).toBe(true);
    const sealedNew = after.encrypt('new secret');
    expect(after.needsReencrypt(sealedNew)).toBe(false);
    expect(failure(() => before.decrypt(sealedNew)).reason).toBe('unknown_key');
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(failure(() => new SecretBox([Buffer.alloc(16)])).reason).toBe('key');
    expect(failure(() => new SecretBox([])).reason).toBe('key');
    expect(failure(() => decodeKey('c2hvcnQ=', 'DIWAN_SECRET_KEY')).message).toMatch(/DIWAN_SECRET_KEY must be the base64 of 32 random bytes/);
    expect(failure(() => decodeKey('not base64 at all!', 'X')).reason).toBe('key');
  });
});

describe('key loading', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-keys-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('defaults the key file outside the data folder, under XDG_CONFIG_HOME or ~/.config', () => {
    expect(defaultKeyFile({ XDG_CONFIG_HOME: '/cfg' })).toBe(path.join('/cfg', 'diwan', 'secret-keys.json'));
    expect(defaultKeyFile({ XDG_CONFIG_HOME: 'relative' })).toBe(path.join(os.homedir(), '.config', 'diwan', 'secret-keys.json'));
    expect(defaultKeyFile({})).toBe(path.join(os.homedir(), '.config', 'diwan', 'secret-keys.json'));
    expect(defaultKeyFile({ DIWAN_KEY_FILE: '/run/keys.json', XDG_CONFIG_HOME: '/cfg' })).toBe('/run/keys.json');
  });

  it('takes DIWAN_SECRET_KEY (base64 of 32 bytes; more after commas only decrypt)', () => {
    const k1 = generateKey();
    const k2 = generateKey();
    const sealed = new SecretBox([k2]).encrypt('s');
    const loaded = loadSecretBox({ DIWAN_SECRET_KEY: `${k1.toString('base64')}, ${k2.toString('base64url')}`, XDG_CONFIG_HOME: tempDir() });
    expect(loaded.source).toBe('env');
    expect(loaded.box.currentKeyId).toBe(keyIdOf(k1));
    expect(loaded.box.decrypt(sealed)).toBe('s');
    expect(() => loadSecretBox({ DIWAN_SECRET_KEY: 'abc' })).toThrow(/DIWAN_SECRET_KEY \(key 1\) must be the base64 of 32 random bytes/);
    expect(() => rotate({ DIWAN_SECRET_KEY: k1.toString('base64') })).toThrow(/DIWAN_SECRET_KEY/);
  });

  it('creates the key file with mode 0600 on first use, then reuses it', () => {
    const cfg = tempDir();
    const env = { XDG_CONFIG_HOME: cfg };
    const first = loadSecretBox(env);
    const file = path.join(cfg, 'diwan', 'secret-keys.json');
    expect([first.source, first.file, first.created]).toEqual(['file', file, true]);
    if (process.platform !== 'win32') {
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file)).mode & 0o077).toBe(0);
    }
    const sealed = first.box.encrypt('whsec_x');
    const again = loadSecretBox(env);
    expect(again.created).toBe(false);
    expect(again.box.currentKeyId).toBe(first.box.currentKeyId);
    expect(again.box.decrypt(sealed)).toBe('whsec_x');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['secret-keys.json']);
    expect(() => loadSecretBox({ DIWAN_KEY_FILE: path.join(cfg, 'none.json') }, { create: false })).toThrow(/no key file/);
  });

  it('rotate() adds a new current key to the file; old secrets still decrypt', () => {
    const env = { DIWAN_KEY_FILE: path.join(tempDir(), 'keys.json') };
    const { box: v1 } = loadSecretBox(env);
    const sealedV1 = v1.encrypt('secret one');
    const r = rotate(env);
    expect(r.keyId).not.toBe(v1.currentKeyId);
    expect(r.keyIds).toEqual([v1.currentKeyId, r.keyId]);
    const { box: v2 } = loadSecretBox(env);
    expect(v2.currentKeyId).toBe(r.keyId);
    expect(v2.decrypt(sealedV1)).toBe('secret one');
    expect(v2.needsReencrypt(sealedV1)).toBe(true);
    expect(v2.encrypt('secret two').split('.')[1]).toBe(r.keyId);
    if (process.platform !== 'win32') expect(fs.statSync(env.DIWAN_KEY_FILE).mode & 0o777).toBe(0o600);
    expect(() => rotate({ DIWAN_KEY_FILE: path.join(tempDir(), 'missing.json') })).toThrow(/no key file/);
  });

  it('refuses a key file others can read, or one that was edited', () => {
    const file = path.join(tempDir(), 'keys.json');
    loadSecretBox({ DIWAN_KEY_FILE: file });
    if (process.platform !== 'win32') {
      fs.chmodSync(file, 0o644);
      expect(() => loadSecretBox({ DIWAN_KEY_FILE: file })).toThrow(/can be read by other users .*chmod 600/);
      fs.chmodSync(file, 0o600);
    }
    const data = JSON.parse(fs.readFileSync(file, 'utf8'));
    data.keys[0].key = generateKey().toString('base64');
    fs.writeFileSync(file, JSON.stringify(data));
    expect(() => loadSecretBox({ DIWAN_KEY_FILE: file })).toThrow(/the file was edited/);
    fs.writeFileSync(file, '{ not json');
    expect(() => loadSecretBox({ DIWAN_KEY_FILE: file })).toThrow(/not valid JSON/);
  });
});
