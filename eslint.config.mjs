import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.data/**', 'coverage/**', '*.config.js', '*.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-eval': 'error',
    },
  },
  {
    // domain/ is pure: no I/O libraries.
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['typeorm', 'ioredis', 'koa', '@koa/*', 'ethers', 'bullmq', 'pg', 'node:fs', 'node:net', 'node:http'], message: 'src/domain is pure: no I/O.' }] }],
    },
  },
  {
    files: ['src/services/**/*.ts', 'src/domain/**/*.ts', 'workers/**/*.ts', 'jobs/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/api/app', '**/api/routes/*', '**/api/middleware/*'], message: 'Nothing imports from api/ except main.ts.' }] }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
