// The import order of the house: kernel → storage → domains → http → host and cli. A domain
// imports only lower domains (events → audit → tenancy → identity → webhooks → apps). Only
// storage knows the database driver. The SDK is the contract apps are written against and
// imports nothing from core (its test host alone may start one); apps import only the SDK.
// test/architecture.test.ts runs these rules.
const DOMAINS = ['events', 'audit', 'tenancy', 'identity', 'webhooks', 'apps'];
const below = (i) => DOMAINS.slice(0, i);
const notIn = (folders) => `^core/(?!${folders.join('|')}/)`;

module.exports = {
  forbidden: [
    { name: 'kernel-imports-kernel', severity: 'error', comment: 'The kernel (config, clock, ids, errors, i18n, validation) depends on nothing of the host.', from: { path: '^core/kernel/' }, to: { path: '^(core/(?!kernel/)|cli/|sdk/)' } },
    { name: 'storage-imports-kernel', severity: 'error', from: { path: '^core/storage/' }, to: { path: '^(core/(?!kernel/|storage/)|cli/|sdk/)' } },
    ...DOMAINS.map((d, i) => ({
      name: `${d}-imports-lower-layers`,
      severity: 'error',
      comment: `The ${d} domain imports the kernel, storage and only these domains: ${below(i).join(', ') || 'none'}.`,
      from: { path: `^core/${d}/` },
      to: { path: `${notIn(['kernel', 'storage', d, ...below(i)])}|^cli/|^core/host\\.ts$` },
    })),
    { name: 'http-below-host', severity: 'error', from: { path: '^core/(http|openapi)/' }, to: { path: '^(core/(host|main|services)\\.ts$|cli/)' } },
    { name: 'only-storage-knows-the-driver', severity: 'error', from: { pathNot: '^core/storage/' }, to: { path: 'node_modules/(better-sqlite3|drizzle-orm|pg|postgres)/' } },
    { name: 'sdk-is-a-contract', severity: 'error', comment: 'The SDK imports nothing from core or the CLI; only its test host may start a host.', from: { path: '^sdk/', pathNot: '^sdk/test-host(\\.test)?\\.ts$' }, to: { path: '^(core|cli)/' } },
    { name: 'core-uses-only-the-sdk-contract', severity: 'error', comment: 'The host implements the contract (its types), never the SDK test host.', from: { path: '^core/' }, to: { path: '^sdk/(?!define-app\\.ts$)' } },
    { name: 'apps-import-only-the-sdk', severity: 'error', from: { path: '^apps-installed/' }, to: { path: '^(core|cli|manifests)/' } },
    { name: 'core-never-imports-an-app', severity: 'error', from: { path: '^(core|sdk|cli)/' }, to: { path: '^apps-installed/' } },
    { name: 'no-cycles-in-core', severity: 'error', from: { path: '^core/' }, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$|^test/|^bench/|^\\.scratch/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
