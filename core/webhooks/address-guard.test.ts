import { describe, expect, it } from 'vitest';
import { addressRange, guardUrl, isAddressAllowed } from './address-guard.ts';

const resolvesTo = (...addresses: string[]) => async () =>
  addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('isAddressAllowed', () => {
  const refusedAlways = [
    '0.0.0.0',
    '169.254.169.254', // cloud metadata
    '169.254.0.1',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '::',
    'fe80::1',
    'ff02::1',
    '::ffff:169.254.169.254',
    '64:ff9b::a9fe:a9fe', // NAT64 form of the metadata address
  ];
  const loopback = ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '2002:7f00:1::1'];
  const privateRanges = ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.1.1', 'fc00::1', 'fd12:3456::1', '100.64.0.1', '100.127.255.255', '::ffff:10.1.2.3', '::ffff:192.168.0.1'];
  const publicOnes = ['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'];

  it.each(refusedAlways)('refuses %s even with every allowance', (a) => {
    expect(isAddressAllowed(a)).toBe(false);
    expect(isAddressAllowed(a, { allowLoopback: true, allowPrivate: true })).toBe(false);
  });

  it.each(loopback)('refuses loopback %s unless allowLoopback', (a) => {
    expect(addressRange(a)).toBe('loopback');
    expect(isAddressAllowed(a)).toBe(false);
    expect(isAddressAllowed(a, { allowPrivate: true })).toBe(false);
    expect(isAddressAllowed(a, { allowLoopback: true })).toBe(true);
  });

  it.each(privateRanges)('refuses private %s unless allowPrivate', (a) => {
    expect(isAddressAllowed(a)).toBe(false);
    expect(isAddressAllowed(a, { allowLoopback: true })).toBe(false);
    expect(isAddressAllowed(a, { allowPrivate: true })).toBe(true);
  });

  it.each(publicOnes)('allows public %s', (a) => {
    expect(isAddressAllowed(a)).toBe(true);
  });

  it('refuses what is not an address', () => {
    expect(isAddressAllowed('not-an-ip')).toBe(false);
  });
});

describe('guardUrl', () => {
  it('returns the address to pin for a public name', async () => {
    const r = await guardUrl('https://hooks.example.com/in', { lookup: resolvesTo('93.184.216.34', '2606:2800:220:1::1') });
    expect(r).toMatchObject({ ok: true, address: '93.184.216.34', family: 4 });
  });

  it('refuses a name with any internal answer among public ones', async () => {
    const r = await guardUrl('https://mixed.example.com/in', { lookup: resolvesTo('93.184.216.34', '169.254.169.254') });
    expect(r).toEqual({ ok: false, reason: 'refused_address', address: '169.254.169.254', detail: 'linkLocal' });
  });

  it('refuses a name that resolves to loopback unless allowed', async () => {
    expect(await guardUrl('http://evil.example.com/', { lookup: resolvesTo('127.0.0.1') })).toMatchObject({ ok: false, reason: 'refused_address', address: '127.0.0.1' });
    expect(await guardUrl('http://evil.example.com/', { lookup: resolvesTo('127.0.0.1'), allowLoopback: true })).toMatchObject({ ok: true, address: '127.0.0.1' });
  });

  it('judges IP literals without DNS, in every spelling WHATWG URL accepts', async () => {
    const noDns = async () => {
      throw new Error('lookup must not run for a literal');
    };
    for (const url of ['http://127.0.0.1/', 'http://0x7f.1/', 'http://2130706433/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/']) {
      expect(await guardUrl(url, { lookup: noDns }), url).toMatchObject({ ok: false, reason: 'refused_address' });
    }
    expect(await guardUrl('http://[::1]:8080/', { lookup: noDns, allowLoopback: true })).toMatchObject({ ok: true, address: '::1', family: 6 });
    expect(await guardUrl('http://169.254.169.254/latest/meta-data/', { lookup: noDns, allowPrivate: true, allowLoopback: true })).toMatchObject({
      ok: false,
      reason: 'refused_address',
      address: '169.254.169.254',
    });
  });

  it('refuses schemes other than http and https', async () => {
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)', 'not a url']) {
      expect(await guardUrl(url), url).toMatchObject({ ok: false, reason: 'scheme' });
    }
  });

  it('refuses URLs carrying credentials', async () => {
    expect(await guardUrl('https://user:pass@example.com/', { lookup: resolvesTo('93.184.216.34') })).toEqual({ ok: false, reason: 'credentials' });
    expect(await guardUrl('https://user@example.com/', { lookup: resolvesTo('93.184.216.34') })).toEqual({ ok: false, reason: 'credentials' });
  });

  it('reports resolution failures and empty answers as dns', async () => {
    const fail = async () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    expect(await guardUrl('https://nowhere.example/', { lookup: fail })).toEqual({ ok: false, reason: 'dns', detail: 'ENOTFOUND' });
    expect(await guardUrl('https://empty.example/', { lookup: resolvesTo() })).toMatchObject({ ok: false, reason: 'dns' });
  });

  it('uses the system resolver by default (localhost is loopback)', async () => {
    const r = await guardUrl('http://localhost:1/');
    expect(r).toMatchObject({ ok: false, reason: 'refused_address' });
    if (!r.ok) expect(addressRange(r.address!)).toBe('loopback');
  });
});
