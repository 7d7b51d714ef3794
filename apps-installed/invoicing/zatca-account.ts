// The company's ZATCA account once it is onboarded (POST /company/zatca/onboard): the gateway,
// the production CSID (its certificate, its token and secret) and the private key the CSR was
// made with. Kept as one of the app's sealed secrets (ctx.secrets): never in clear at rest,
// never logged, never answered by a route.
import type { AppContext } from 'diwan/sdk';

export interface ZatcaAccount {
  /** `sandbox`, `simulation` or `production`. */
  gateway: string;
  /** Where the gateway answers (ZATCA's URL for it, or the stand-in the app's settings name). */
  baseUrl: string;
  /** The production CSID's certificate (PEM): what stamps carry. */
  certificatePem: string;
  /** The secp256k1 key the CSR was made with (SEC1 PEM). */
  privateKeyPem: string;
  /** The production CSID, as ZATCA's answer gave it: HTTP Basic for clearance and reporting. */
  credentials: { binarySecurityToken: string; secret: string };
}

/** What is stored: the account and when the company was onboarded. */
export interface StoredZatcaAccount extends ZatcaAccount {
  onboardedAt: string;
}

const SECRET = 'zatca.account';

export async function storedZatcaAccount(ctx: AppContext): Promise<StoredZatcaAccount | undefined> {
  const text = await ctx.secrets.get(SECRET);
  return text === undefined ? undefined : (JSON.parse(text) as StoredZatcaAccount);
}

/** The company's account, or undefined before it is onboarded. */
export async function zatcaAccount(ctx: AppContext): Promise<ZatcaAccount | undefined> {
  const a = await storedZatcaAccount(ctx);
  return a && { gateway: a.gateway, baseUrl: a.baseUrl, certificatePem: a.certificatePem, privateKeyPem: a.privateKeyPem, credentials: { ...a.credentials } };
}

/** Keeps the account (replacing one onboarded before). */
export function saveZatcaAccount(ctx: AppContext, account: StoredZatcaAccount): Promise<void> {
  return ctx.secrets.set(SECRET, JSON.stringify(account));
}
