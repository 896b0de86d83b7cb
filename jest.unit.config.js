// Pure domain tests only: no database, no queue.
const base = require('./jest.config.js');
module.exports = { ...base, roots: ['<rootDir>/test/unit'], globalSetup: undefined, globalTeardown: undefined };
