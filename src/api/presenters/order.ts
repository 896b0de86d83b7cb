import { z } from 'zod';
import { orderView } from '../../services/trading';
import { type OrderRow } from '../../services/books';

/** Every output field of a limit order (credits as numbers, dates as ISO strings). */
export const orderSchema = z.object({
  id: z.string(),
  marketId: z.string(),
  direction: z.enum(['higher', 'lower']),
  limit: z.number(),
  probability: z.number(),
  price: z.number(),
  shares: z.number(),
  filled: z.number(),
  remaining: z.number(),
  spent: z.number(),
  reserved: z.number(),
  status: z.enum(['open', 'filled', 'cancelled', 'expired']),
  closeReason: z.string().nullable(),
  expiresAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const limitFillSchema = z.object({ orderId: z.string(), shares: z.number(), price: z.number(), cost: z.number() });

export const presentOrder = (o: OrderRow): z.infer<typeof orderSchema> => orderView(o);
