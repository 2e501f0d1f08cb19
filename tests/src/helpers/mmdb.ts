/**
 * Writes a small IPv4 MaxMind DB file (format 2.0, 24-bit records) for the GeoIP tests: what a
 * GeoLite2-City database holds for a few networks, so the server's real reader (`maxmind`) reads
 * it as it would MaxMind's own file. Only the types a City record uses are encoded.
 */
type Value = string | number | bigint | Value[] | { [key: string]: Value };

/** A MaxMind DB value's type number (spec: "Output Data Section"). */
const TYPE = { string: 2, map: 7, uint16: 5, uint32: 6, uint64: 9, array: 11 } as const;

function control(type: number, size: number): number[] {
  const head = (t: number, s: number) => (type <= 7 ? [(t << 5) | s] : [s, t - 7]);
  if (size < 29) return head(type, size);
  if (size < 285) return [...head(type, 29), size - 29];
  if (size < 65_821) return [...head(type, 30), (size - 285) >> 8, (size - 285) & 0xff];
  const rest = size - 65_821;
  return [...head(type, 31), (rest >> 16) & 0xff, (rest >> 8) & 0xff, rest & 0xff];
}

function unsigned(type: number, value: bigint): number[] {
  const bytes: number[] = [];
  for (let v = value; v > 0n; v >>= 8n) bytes.unshift(Number(v & 0xffn));
  return [...control(type, bytes.length), ...bytes];
}

function encode(value: Value): number[] {
  if (typeof value === 'string') {
    const bytes = [...Buffer.from(value, 'utf8')];
    return [...control(TYPE.string, bytes.length), ...bytes];
  }
  if (typeof value === 'number') return unsigned(value < 0x10000 ? TYPE.uint16 : TYPE.uint32, BigInt(value));
  if (typeof value === 'bigint') return unsigned(TYPE.uint64, value);
  if (Array.isArray(value)) return [...control(TYPE.array, value.length), ...value.flatMap(encode)];
  const entries = Object.entries(value);
  return [...control(TYPE.map, entries.length), ...entries.flatMap(([k, v]) => [...encode(k), ...encode(v)])];
}

/** A City record as GeoLite2-City has it (the fields Atrium reads, and a few it does not). */
export function cityRecord(city: string, countryIsoCode: string, country: string): Value {
  return {
    city: { geoname_id: 1, names: { en: city } },
    country: { geoname_id: 2, iso_code: countryIsoCode, names: { en: country } },
    location: { accuracy_radius: 20 },
  };
}

/** The bytes of a database mapping each IPv4 network (`a.b.c.d/len`) to its record. */
export function mmdbOf(networks: [cidr: string, record: Value][], databaseType = 'GeoLite2-City'): Buffer {
  const EMPTY = -1;
  const nodes: [number, number][] = [[EMPTY, EMPTY]];
  const data: number[] = [];
  const DATA = (offset: number) => -2 - offset; // a data record, resolved once the node count is known
  for (const [cidr, record] of networks) {
    const [address, length] = cidr.split('/') as [string, string];
    const bits = address.split('.').reduce((n, octet) => (n << 8n) | BigInt(Number(octet)), 0n);
    const offset = data.length;
    data.push(...encode(record));
    let node = 0;
    for (let depth = 0; depth < Number(length); depth++) {
      const bit = Number((bits >> BigInt(31 - depth)) & 1n) as 0 | 1;
      const slots = nodes[node] as [number, number];
      if (depth === Number(length) - 1) {
        slots[bit] = DATA(offset);
      } else {
        if (slots[bit] === EMPTY) {
          nodes.push([EMPTY, EMPTY]);
          slots[bit] = nodes.length - 1;
        }
        node = slots[bit];
      }
    }
  }
  const count = nodes.length;
  const resolve = (r: number) => (r === EMPTY ? count : r <= -2 ? count + 16 + (-2 - r) : r);
  const tree = nodes.flatMap((slots) =>
    slots.flatMap((r) => {
      const v = resolve(r);
      return [(v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff];
    }),
  );
  const metadata = encode({
    node_count: count,
    record_size: 24,
    ip_version: 4,
    database_type: databaseType,
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: BigInt(Math.floor(Date.now() / 1000)),
    description: { en: 'Atrium test database' },
  });
  return Buffer.from([
    ...tree,
    ...new Array(16).fill(0),
    ...data,
    ...Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'),
    ...metadata,
  ]);
}
