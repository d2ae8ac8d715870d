/**
 * The Writable a task writes its file into (P86): bytes are cut into chunks of `FILE_CHUNK_BYTES` and each chunk is
 * stored as soon as it is full, with backpressure (the writer waits while a chunk is being stored), so a file of
 * any size takes about two chunks of memory.
 */
import { Writable } from 'node:stream';

/** Size of a stored chunk of a task file: 1 MiB. */
export const FILE_CHUNK_BYTES = 1024 * 1024;

/** Stores chunk number `number` (0, 1, …). */
export type StoreChunk = (number: number, data: Buffer) => Promise<void>;

/** Cuts the bytes written into numbered chunks and stores each one; `bytes` counts everything written. */
export class ChunkSink extends Writable {
  /** Bytes written so far. */
  bytes = 0;
  private parts: Buffer[] = [];
  private buffered = 0;
  private nextNumber = 0;

  constructor(
    private readonly store: StoreChunk,
    private readonly chunkBytes = FILE_CHUNK_BYTES,
  ) {
    super({ highWaterMark: chunkBytes });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.parts.push(chunk);
    this.buffered += chunk.length;
    this.bytes += chunk.length;
    if (this.buffered < this.chunkBytes) {
      callback();
      return;
    }
    this.storeFull(false).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.storeFull(true).then(() => callback(), callback);
  }

  /** Stores every full chunk (and the remainder when `all`), keeping a partial chunk buffered otherwise. */
  private async storeFull(all: boolean): Promise<void> {
    let data = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts);
    this.parts = [];
    while (data.length >= this.chunkBytes || (all && data.length > 0)) {
      const chunk = data.subarray(0, this.chunkBytes);
      await this.store(this.nextNumber, chunk);
      this.nextNumber += 1;
      data = data.subarray(chunk.length);
    }
    if (data.length > 0) this.parts = [data];
    this.buffered = data.length;
  }
}
