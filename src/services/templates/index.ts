export * from './catalog';
export * from './applyTemplate';
export * from './openWithTemplate';
