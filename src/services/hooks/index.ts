export * from './hooks';
export * from './send';
export * from './deliver';
export * from './deliveries';
export * from './notifications';
export type { HookDeliveryRow, HookRow } from './rows';
