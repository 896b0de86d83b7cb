/** The book: its row, how it opens, how it is read and browsed, and its resting orders. */
export * from './books';
export * from './browseMarkets';
export * from './marketHistory';
export * from './orders';
export * from './orderViews';
export * from './funding';
export * from './bookWrites';
