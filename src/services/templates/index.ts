export * from './catalog';
export * from './applyTemplate';
