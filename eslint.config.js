// Lint: the recommended JavaScript and TypeScript rules, plus the project's own rules that a
// reviewer would otherwise have to remember (no console in handlers, no process.env outside config).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', '.data/**', '.test-data/**', 'bench/results/**', 'coverage/**', 'clients/typescript/dist/**', 'clients/typescript/src/schema.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', performance: 'readonly', crypto: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // The operator console runs in the browser: its globals, and nothing of Node's.
    files: ['console/src/**/*.ts'],
    languageOptions: {
      globals: { window: 'readonly', document: 'readonly', location: 'readonly', history: 'readonly', navigator: 'readonly', sessionStorage: 'readonly', localStorage: 'readonly', WebSocket: 'readonly', URLSearchParams: 'readonly', HTMLElement: 'readonly', HTMLDialogElement: 'readonly', Blob: 'readonly', requestAnimationFrame: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', TextEncoder: 'readonly', atob: 'readonly', btoa: 'readonly' },
    },
    rules: { 'no-restricted-globals': ['error', { name: 'process', message: 'The console runs in the browser.' }, { name: 'Buffer', message: 'The console runs in the browser.' }] },
  },
  {
    files: ['shared/**/*.ts', 'functions/**/*.ts'],
    ignores: ['shared/config.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read settings through shared/config.ts.' }],
      'no-console': 'error',
    },
  },
  {
    files: ['shared/**/*.ts', 'functions/**/*.ts', 'local/**/*.ts', 'infra/**/*.ts'],
    // shared/db: the functions' storage; local/storage: the local runtime's own (tables, stream, queue reads).
    ignores: ['shared/db/**', 'local/storage/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/client-dynamodb-streams', '@aws-sdk/util-dynamodb'], message: 'Only shared/db and local/storage talk to DynamoDB.' }] },
      ],
    },
  },
);
