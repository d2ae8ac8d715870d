/**
 * Receipt lines from a receiving document's positions (D8.1, P71): one line per position with a quantity above
 * 0, price × quantity computed exactly in integer kopecks (BigInt, then checked to fit a JSON number), the name
 * taken from the position's snapshot, else its catalog product, else its article.
 */
import { validationError } from '../../http/errors.ts';
import type { ReceiptLine } from '../../connectors/cash-register/connector.ts';
import type { ReceiptPosition } from './repository.ts';

/** The longest line name the providers accept (both: 128 characters). */
const MAX_NAME_LENGTH = 128;

/** Kopecks of an exact decimal text such as `"249.90"` (numeric(16,2) column). */
export function kopecksOfDecimal(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0').slice(0, 2));
}

/** `12345n` kopecks → `"123.45"` (exact, for the numeric column). */
export function decimalOfKopecks(kopecks: bigint): string {
  return `${kopecks / 100n}.${String(kopecks % 100n).padStart(2, '0')}`;
}

function lineName(position: ReceiptPosition): string {
  const name =
    [position.product_name, position.catalog_name, position.article]
      .map((candidate) => candidate?.trim())
      .find((candidate) => candidate !== undefined && candidate !== '') ?? `Product ${position.product_id}`;
  return [...name].slice(0, MAX_NAME_LENGTH).join('');
}

/**
 * The lines and total of a receipt for `positions`.
 * @returns lines (kopecks), the total in kopecks and as exact decimal text
 * @throws 400 `error_validation` on `orderId` when no position has a quantity, the total is 0, or it is beyond
 *   what a receipt can carry (2^53 kopecks)
 */
export function receiptLines(positions: ReceiptPosition[]): {
  lines: ReceiptLine[];
  total: number;
  totalText: string;
} {
  const counted = positions.filter((position) => position.quantity > 0);
  if (counted.length === 0)
    throw validationError(
      'orderId',
      'the document has no position with a quantity above 0, so no receipt line',
    );
  let total = 0n;
  const exact = counted.map((position) => {
    const price = kopecksOfDecimal(position.price);
    const sum = price * BigInt(position.quantity);
    total += sum;
    return { name: lineName(position), price, quantity: position.quantity, sum };
  });
  if (total === 0n)
    throw validationError('orderId', 'the document total is 0: a receipt needs a positive amount');
  if (total > BigInt(Number.MAX_SAFE_INTEGER))
    throw validationError('orderId', 'the document total is too large for a receipt');
  return {
    lines: exact.map((line) => ({
      name: line.name,
      price: Number(line.price),
      quantity: line.quantity,
      sum: Number(line.sum),
    })),
    total: Number(total),
    totalText: decimalOfKopecks(total),
  };
}
