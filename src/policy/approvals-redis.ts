// Approval records in Redis (TOOLGATE_REDIS_URL), for replicas that share Redis. A record is one string key
// holding the sealed JSON; a step is a Lua compare-and-set on the exact stored text (the signature is
// checked in Node, which Lua cannot do), so of two replicas moving the same record only one succeeds.
// Each step is published so that a waiter on another replica wakes at once; waiters poll too, since a
// notice sent while the subscriber reconnects is lost.
import { Redis } from 'ioredis';
import { isApprovalId, type ApprovalBackend, type ApprovalRecord, type RecordSeal } from './approval-record.js';

/** One hash tag for every key, so the scripts work on a Redis Cluster too (all keys in one slot). */
export const DEFAULT_REDIS_PREFIX = 'toolgate:{approvals}:';

/** Settled records linger this long past their expiry in Redis even if no sweep runs. */
const KEY_GRACE_MS = 24 * 60 * 60 * 1000;

// KEYS: record, index. ARGV: record text, expiry ms, id, channel.
const INSERT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('SADD', KEYS[2], ARGV[3])
  redis.call('PUBLISH', ARGV[4], ARGV[3])
  return 1
end
return 0`;

// KEYS: record. ARGV: expected text, new text, expiry ms, channel, id.
const COMPARE_AND_SET = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`;

export class RedisApprovalBackend implements ApprovalBackend {
  readonly kind = 'redis' as const;
  readonly pollMs = 500;
  readonly #redis: Redis;
  readonly #signer: RecordSeal;
  readonly #prefix: string;
  readonly #listeners = new Set<(id: string) => void>();
  #sub: Redis | null = null;

  private constructor(redis: Redis, signer: RecordSeal, prefix: string) {
    this.#redis = redis;
    this.#signer = signer;
    this.#prefix = prefix;
  }

  static async connect(url: string, signer: RecordSeal, prefix = DEFAULT_REDIS_PREFIX): Promise<RedisApprovalBackend> {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 2000, retryStrategy: (n) => Math.min(100 * n, 2000) });
    // Errors surface on the commands; without a listener ioredis would print each reconnect attempt.
    redis.on('error', () => {});
    await redis.connect();
    return new RedisApprovalBackend(redis, signer, prefix);
  }

  get #channel(): string {
    return `${this.#prefix}events`;
  }

  #key(id: string): string {
    if (!isApprovalId(id)) throw new Error('not an approval id');
    return `${this.#prefix}rec:${id}`;
  }

  #ttl(record: ApprovalRecord): number {
    return Math.max(1000, Date.parse(record.expires_at) - Date.now() + KEY_GRACE_MS);
  }

  async insert(record: ApprovalRecord): Promise<void> {
    const text = this.#signer.seal(record);
    const ok = await this.#redis.eval(INSERT, 2, this.#key(record.id), `${this.#prefix}index`, text, this.#ttl(record), record.id, this.#channel);
    if (ok !== 1) throw new Error(`approval ${record.id} exists already`);
  }

  async read(id: string): Promise<ApprovalRecord | null | 'tampered'> {
    const text = await this.#redis.get(this.#key(id));
    if (text === null) return null;
    return this.#signer.open(text, id) ?? 'tampered';
  }

  async transition(current: ApprovalRecord, next: ApprovalRecord): Promise<boolean> {
    const reopens = current.status === 'used' && next.status === 'approved';
    if (current.status !== 'pending' && current.status !== 'approved' && !reopens) return false;
    // Sealing is canonical, so resealing the record as it was read gives back the exact stored text: the
    // script swaps only if nobody changed the record since.
    const from = this.#signer.seal(current);
    const ok = await this.#redis.eval(COMPARE_AND_SET, 1, this.#key(current.id), from, this.#signer.seal(next), this.#ttl(next), this.#channel, current.id);
    return ok === 1;
  }

  async remove(id: string): Promise<void> {
    await this.#redis.multi().del(this.#key(id)).srem(`${this.#prefix}index`, id).exec();
  }

  async ids(): Promise<string[]> {
    const ids = (await this.#redis.smembers(`${this.#prefix}index`)).filter(isApprovalId);
    // Keys that Redis expired on its own leave their id in the index: drop those.
    if (ids.length > 0) {
      const exists = await this.#redis.mget(ids.map((id) => this.#key(id)));
      const gone = ids.filter((_, i) => exists[i] === null);
      if (gone.length > 0) await this.#redis.srem(`${this.#prefix}index`, ...gone);
      return ids.filter((_, i) => exists[i] !== null);
    }
    return ids;
  }

  watch(listener: (id: string) => void): () => void {
    this.#listeners.add(listener);
    if (!this.#sub) {
      const sub = this.#redis.duplicate();
      sub.on('error', () => {});
      sub.on('message', (_channel: string, id: string) => {
        for (const l of this.#listeners) l(id);
      });
      sub.subscribe(this.#channel).catch(() => {
        // Polling still finds the decision.
      });
      this.#sub = sub;
    }
    return () => {
      this.#listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    this.#sub?.disconnect();
    this.#sub = null;
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
