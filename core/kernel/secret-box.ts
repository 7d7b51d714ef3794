// Encryption at rest for short secrets (webhook signing secrets): AES-256-GCM, one
// self-describing string per secret, and a key ring so keys can be rotated.
//
//   v1.<keyId>.<iv>.<tag>.<ciphertext>        (every part base64url, no padding)
//
// `keyId` names the key that sealed it; it is derived from the key (a hash prefix), so the same
// key has the same id wherever it is loaded from. The version and key id are authenticated
// with the ciphertext (as additional data, with an optional caller context such as the
// endpoint id), so a sealed value cannot be relabelled or moved to another row unnoticed.
//
// Keys come from DIWAN_SECRET_KEY (base64 of 32 bytes; several separated by commas, the first
// one sealing, the others only opening) or else from a key file, DIWAN_KEY_FILE, by default
// $XDG_CONFIG_HOME/diwan/secret-keys.json (~/.config/diwan/…): outside the data folder, so a
// copy of the database alone does not carry the means to read its secrets. The file is created
// with mode 0600 on first use; `rotate()` adds a new sealing key to it and keeps the old ones.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FILE_FORMAT = 'diwan-secret-keys';

export type SecretBoxFailure = 'format' | 'version' | 'unknown_key' | 'tampered' | 'key';

export class SecretBoxError extends Error {
  constructor(
    readonly reason: SecretBoxFailure,
    message: string,
  ) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/** A key's id: the first 66 bits of a domain-separated SHA-256 of it (reveals nothing usable). */
export function keyIdOf(key: Buffer): string {
  return crypto.createHash('sha256').update('diwan secret-box key id\0').update(key).digest('base64url').slice(0, 11);
}

const B64URL = /^[A-Za-z0-9_-]*$/;
const B64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** 32 bytes from base64 (or base64url) text, or a SecretBoxError saying what is wrong with it. */
export function decodeKey(text: string, where: string): Buffer {
  const t = text.trim();
  const key = B64.test(t) ? Buffer.from(t, 'base64') : Buffer.alloc(0);
  if (key.length !== KEY_BYTES) {
    throw new SecretBoxError('key', `${where} must be the base64 of ${KEY_BYTES} random bytes (e.g. \`openssl rand -base64 32\`), got ${key.length ? `${key.length} bytes` : 'something that is not base64'}`);
  }
  return key;
}

export function generateKey(): Buffer {
  return crypto.randomBytes(KEY_BYTES);
}

export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  /** Id of the key new secrets are sealed with. */
  readonly currentKeyId: string;

  /** `keys[0]` seals unless `currentKeyId` names another; every key opens. */
  constructor(keys: Buffer[], currentKeyId?: string) {
    if (keys.length === 0) throw new SecretBoxError('key', 'a secret box needs at least one key');
    for (const k of keys) {
      if (k.length !== KEY_BYTES) throw new SecretBoxError('key', `a key must be ${KEY_BYTES} bytes, got ${k.length}`);
      this.keys.set(keyIdOf(k), Buffer.from(k));
    }
    this.currentKeyId = currentKeyId ?? keyIdOf(keys[0]);
    if (!this.keys.has(this.currentKeyId)) throw new SecretBoxError('unknown_key', `the current key "${this.currentKeyId}" is not among the keys`);
  }

  keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** Encrypts `plain`; `context` (e.g. the owning row's id) must be given again to decrypt it. */
  encrypt(plain: string, context = ''): string {
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(this.currentKeyId, context));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, this.currentKeyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  /** The secret inside `sealed`, or a SecretBoxError: not a sealed value, unknown key, or altered. */
  decrypt(sealed: string, context = ''): string {
    const { keyId, iv, tag, ct } = parseSealed(sealed);
    const key = this.keys.get(keyId);
    if (!key) {
      throw new SecretBoxError('unknown_key', `the secret was sealed with key "${keyId}", which is not in the key ring (${this.keyIds().join(', ')}); restore that key to read it`);
    }
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(keyId, context));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('tampered', `the secret sealed with key "${keyId}" does not authenticate: it was altered, or it belongs to another context`);
    }
  }

  /** True when `sealed` was sealed with a key other than the current one (re-encrypt after a rotation). */
  needsReencrypt(sealed: string): boolean {
    return parseSealed(sealed).keyId !== this.currentKeyId;
  }
}

/** Whether a stored value is in the sealed format (as opposed to a legacy clear-text secret). */
export function isEncrypted(value: string): boolean {
  try {
    parseSealed(value);
    return true;
  } catch {
    return false;
  }
}

function additionalData(keyId: string, context: string): Buffer {
  return Buffer.from(`${VERSION}.${keyId}.${context}`, 'utf8');
}

function parseSealed(sealed: string): { keyId: string; iv: Buffer; tag: Buffer; ct: Buffer } {
  const parts = typeof sealed === 'string' ? sealed.split('.') : [];
  if (parts.length === 5 && parts[0] !== VERSION && /^v\d+$/.test(parts[0])) {
    throw new SecretBoxError('version', `the secret is in format ${parts[0]}; this host reads ${VERSION}`);
  }
  const bad = () => new SecretBoxError('format', `not a sealed secret (expected ${VERSION}.<keyId>.<iv>.<tag>.<ciphertext>)`);
  if (parts.length !== 5 || parts[0] !== VERSION || !parts.every((p) => B64URL.test(p)) || parts[1] === '') throw bad();
  const [, keyId, iv, tag, ct] = parts;
  const out = { keyId, iv: Buffer.from(iv, 'base64url'), tag: Buffer.from(tag, 'base64url'), ct: Buffer.from(ct, 'base64url') };
  if (out.iv.length !== IV_BYTES || out.tag.length !== TAG_BYTES) throw bad();
  return out;
}

// ---- Where the keys come from ----------------------------------------------------------

interface KeyFile {
  format: typeof FILE_FORMAT;
  version: 1;
  current: string;
  keys: { id: string; key: string; createdAt: string }[];
}

/** DIWAN_KEY_FILE, else $XDG_CONFIG_HOME/diwan/secret-keys.json, else ~/.config/diwan/secret-keys.json. */
export function defaultKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DIWAN_KEY_FILE?.trim()) return path.resolve(env.DIWAN_KEY_FILE.trim());
  const xdg = env.XDG_CONFIG_HOME?.trim();
  // The XDG spec ignores a relative XDG_CONFIG_HOME.
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.config');
  return path.join(base, 'diwan', 'secret-keys.json');
}

export interface LoadedSecretBox {
  box: SecretBox;
  source: 'env' | 'file';
  /** The key file, when keys came from one. */
  file?: string;
  /** True when the key file did not exist and was created now. */
  created: boolean;
}

/**
 * The key ring for this process: DIWAN_SECRET_KEY when set, else the key file, created (mode
 * 0600, with one new key) when absent unless `create` is false.
 */
export function loadSecretBox(env: NodeJS.ProcessEnv = process.env, opts: { create?: boolean } = {}): LoadedSecretBox {
  const fromEnv = env.DIWAN_SECRET_KEY?.trim();
  if (fromEnv) {
    const keys = fromEnv.split(',').map((t, i) => decodeKey(t, `DIWAN_SECRET_KEY (key ${i + 1})`));
    return { box: new SecretBox(keys), source: 'env', created: false };
  }
  const file = defaultKeyFile(env);
  let created = false;
  if (!fs.existsSync(file)) {
    if (opts.create === false) throw new SecretBoxError('key', `no key file at ${file}; set DIWAN_SECRET_KEY or DIWAN_KEY_FILE`);
    created = writeKeyFile(file, newKeyFile(), 'create');
  }
  return { box: boxOf(readKeyFile(file), file), source: 'file', file, created };
}

/**
 * Adds a new key to the key file and makes it the sealing key; older keys stay, so secrets
 * sealed with them still open. A running host keeps its ring until it restarts.
 */
export function rotate(env: NodeJS.ProcessEnv = process.env): { keyId: string; file: string; keyIds: string[] } {
  if (env.DIWAN_SECRET_KEY?.trim()) {
    throw new SecretBoxError('key', 'keys come from DIWAN_SECRET_KEY, not a file: rotate by putting a new key first in it and keeping the old ones after it');
  }
  const file = defaultKeyFile(env);
  if (!fs.existsSync(file)) throw new SecretBoxError('key', `no key file at ${file} to rotate`);
  const data = readKeyFile(file);
  const key = generateKey();
  const id = keyIdOf(key);
  data.keys.push({ id, key: key.toString('base64'), createdAt: new Date().toISOString() });
  data.current = id;
  writeKeyFile(file, data, 'replace');
  return { keyId: id, file, keyIds: data.keys.map((k) => k.id) };
}

function newKeyFile(): KeyFile {
  const key = generateKey();
  const id = keyIdOf(key);
  return { format: FILE_FORMAT, version: 1, current: id, keys: [{ id, key: key.toString('base64'), createdAt: new Date().toISOString() }] };
}

function boxOf(data: KeyFile, file: string): SecretBox {
  const keys = data.keys.map((k, i) => {
    const key = decodeKey(String(k.key ?? ''), `key ${i + 1} in ${file}`);
    if (k.id !== keyIdOf(key)) throw new SecretBoxError('key', `key ${i + 1} in ${file} has id "${k.id}" but its key's id is "${keyIdOf(key)}"; the file was edited`);
    return key;
  });
  if (!data.keys.some((k) => k.id === data.current)) throw new SecretBoxError('key', `the current key "${data.current}" of ${file} is not among its keys`);
  return new SecretBox(keys, data.current);
}

function readKeyFile(file: string): KeyFile {
  // Like ssh with its private keys: a key file others can read is refused, not used.
  const mode = fs.statSync(file).mode & 0o777;
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new SecretBoxError('key', `the key file ${file} can be read by other users (mode ${mode.toString(8)}); run chmod 600 on it`);
  }
  let data: KeyFile;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new SecretBoxError('key', `the key file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (data?.format !== FILE_FORMAT || data.version !== 1 || !Array.isArray(data.keys) || data.keys.length === 0) {
    throw new SecretBoxError('key', `the key file ${file} is not a ${FILE_FORMAT} file (version 1, at least one key)`);
  }
  return data;
}

/** Writes with mode 0600 through a temporary file and a rename, so a reader never sees half a file. Returns true when written. */
function writeKeyFile(file: string, data: KeyFile, how: 'create' | 'replace'): boolean {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify(data, null, 2)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    if (how === 'create') {
      // Another process may have created it meanwhile: keep theirs (link fails if it exists).
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') return false;
        if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
        // A file system without hard links: an exclusive copy still never overwrites.
        fs.copyFileSync(tmp, file, fs.constants.COPYFILE_EXCL);
      }
      return true;
    }
    fs.renameSync(tmp, file);
    return true;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/**
 * The host's ring as its services hold it: read when first used (a throwaway ring for a
 * throwaway host without DIWAN_SECRET_KEY), and read again once when a value was sealed with a
 * key this process has not read yet (`diwan secrets rotate-key` ran in another process).
 */
export interface HostRingOptions {
  /** A ring of the caller's (tests); else DIWAN_SECRET_KEY or the key file. */
  box?: SecretBox;
  /** A throwaway host (`:memory:`) without DIWAN_SECRET_KEY gets a throwaway ring instead of the key file. */
  throwaway?: boolean;
}

export class HostRing {
  private box: SecretBox | undefined;

  constructor(private readonly opts: HostRingOptions = {}) {
    this.box = opts.box;
  }

  get current(): SecretBox {
    this.box ??= this.opts.throwaway && !process.env.DIWAN_SECRET_KEY ? new SecretBox([generateKey()]) : loadSecretBox().box;
    return this.box;
  }

  encrypt(value: string, context: string): string {
    return this.current.encrypt(value, context);
  }

  decrypt(sealed: string, context: string): string {
    try {
      return this.current.decrypt(sealed, context);
    } catch (err) {
      if (!(err instanceof SecretBoxError) || err.reason !== 'unknown_key' || this.opts.box) throw err;
      this.box = loadSecretBox(process.env, { create: false }).box;
      return this.box.decrypt(sealed, context);
    }
  }
}
