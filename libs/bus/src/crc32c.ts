/**
 * CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected: 0x82F63B78), the checksum iSCSI, ext4 and
 * JetStream's file store use, in plain TypeScript (no native addon): slicing-by-8 tables, about a byte per
 * cycle, far below what a journal write costs. Reference values: RFC 3720 appendix B.4 (crc32c.spec.ts).
 */
const POLY = 0x82f63b78;

const TABLES: Uint32Array[] = (() => {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    tables[0][i] = c >>> 0;
  }
  for (let i = 0; i < 256; i++) {
    for (let t = 1; t < 8; t++) tables[t][i] = (tables[t - 1][i] >>> 8) ^ tables[0][tables[t - 1][i] & 0xff];
  }
  return tables;
})();

/** The CRC-32C of `data`, continuing from `previous` (the CRC of what came before, 0 for none). */
export function crc32c(data: Uint8Array, previous = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES;
  let crc = ~previous >>> 0;
  let i = 0;
  const end8 = data.length - (data.length % 8);
  while (i < end8) {
    const a = (crc ^ (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24))) >>> 0;
    crc =
      t7[a & 0xff] ^
      t6[(a >>> 8) & 0xff] ^
      t5[(a >>> 16) & 0xff] ^
      t4[a >>> 24] ^
      t3[data[i + 4]] ^
      t2[data[i + 5]] ^
      t1[data[i + 6]] ^
      t0[data[i + 7]];
    i += 8;
  }
  while (i < data.length) crc = t0[(crc ^ data[i++]) & 0xff] ^ (crc >>> 8);
  return ~crc >>> 0;
}
