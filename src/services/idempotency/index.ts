export * from './onceByKey';
