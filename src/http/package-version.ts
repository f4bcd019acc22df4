// Generated from package.json by scripts/package-version.mjs (npm run build, npm version): do not edit.

/** This package's version, as its package.json says. */
export const PACKAGE_VERSION = '0.1.0';
