import { crc32c } from './crc32c';

// Reference values: the CRC check value of "123456789" for CRC-32C (the Castagnoli catalogue entry), and
// the iSCSI test vectors of RFC 3720 appendix B.4 (there written as bytes, least significant first).
describe('crc32c', () => {
  it('matches the published check value and the RFC 3720 vectors', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  it('continues across chunks of any length (the 8-byte and the byte-wise paths agree)', () => {
    const data = Uint8Array.from({ length: 1000 }, (_, i) => (i * 131 + 7) & 0xff);
    const whole = crc32c(data);
    for (const cut of [1, 3, 8, 13, 500, 999]) expect(crc32c(data.subarray(cut), crc32c(data.subarray(0, cut)))).toBe(whole);
  });

  it('changes when any one bit of the input flips', () => {
    const data = Buffer.from('{"n":3,"k":"pub","seq":3,"s":"evals.work.score","id":"r:score:1","t":1,"d":"eyJhIjoxfQ=="');
    const base = crc32c(data);
    for (let i = 0; i < data.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const copy = Buffer.from(data);
        copy[i] ^= 1 << bit;
        expect(crc32c(copy)).not.toBe(base);
      }
    }
  });
});
